package envoy_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/registry"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// world is configuration read from a real folder, as in file mode: the
// sources, the registry over them, and a way to build the model.
type world struct {
	dir string
	src *sources.Sources
	reg *registry.Registry
}

// quietLogger drops the graph's debug chatter; failures still name what
// was rejected.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// loadWorld copies testdata/<name> (plus extra files) to a temporary
// folder and reads it.
func loadWorld(t testing.TB, name string, extra map[string]string) *world {
	t.Helper()
	dir := t.TempDir()
	if name != "" {
		entries, err := os.ReadDir(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join("testdata", name, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, e.Name()), string(data))
		}
	}
	for file, content := range extra {
		writeFile(t, filepath.Join(dir, file), content)
	}
	stop := krttest.Stop(t)
	src, err := sources.FromFolder(dir, stop, sources.Options{Domain: "cluster.local", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if !src.WaitUntilSynced(stop) {
		t.Fatal("sources never synced")
	}
	for _, k := range src.Configz().Kinds {
		for _, r := range k.Rejected {
			t.Fatalf("test config rejected: %s %s: %+v", k.Kind, r.Key, r.Errors)
		}
	}
	for _, u := range src.Configz().Unreadable {
		t.Fatalf("test config unreadable: %+v", u)
	}
	reg := registry.New(src, stop, registry.Options{Logger: quietLogger()})
	if !reg.WaitUntilSynced(stop) {
		t.Fatal("registry never synced")
	}
	return &world{dir: dir, src: src, reg: reg}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func (w *world) model() *envoy.Model {
	return envoy.NewModel(envoy.InputsFrom(w.reg, w.src, nil))
}

func (w *world) modelWithMesh(mc *mesh.MeshConfigResource) *envoy.Model {
	in := envoy.InputsFrom(w.reg, w.src, nil)
	in.Mesh = mc.MeshConfig
	return envoy.NewModel(in)
}

var (
	sidecar = &envoy.Proxy{ID: "sidecar~127.0.0.1~productpage.default~default.svc.cluster.local", Flavour: envoy.Sidecar, Namespace: "default"}
	grpcApp = &envoy.Proxy{ID: "grpc-client-1", Flavour: envoy.ProxylessGRPC, Namespace: "default"}
	ingress = &envoy.Proxy{ID: "router~127.0.0.1~ingress.web~web.svc.cluster.local", Flavour: envoy.Gateway, Namespace: "web",
		Labels: map[string]string{"istio": "ingressgateway"}}
)

// asJSON renders a message for failure messages.
func asJSON(m proto.Message) string {
	b, _ := protojson.MarshalOptions{Multiline: true}.Marshal(m)
	return string(b)
}
