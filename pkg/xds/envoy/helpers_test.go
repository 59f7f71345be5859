package envoy_test

import (
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/registry/registrytest"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// world is configuration read from a real folder, as in file mode.
type world struct{ *registrytest.World }

// loadWorld reads testdata/<name> (none if empty) plus extra files.
func loadWorld(t testing.TB, name string, extra map[string]string) *world {
	t.Helper()
	var dirs []string
	if name != "" {
		dirs = []string{filepath.Join("testdata", name)}
	}
	return &world{registrytest.Load(t, dirs, extra)}
}

// sources are the world's collections, as the daemon hands them to
// envoy.Serve.
func (w *world) sources() envoy.Sources {
	return envoy.Sources{Registry: w.Registry, Configs: w.Sources}
}

func (w *world) model() *envoy.Model {
	return envoy.NewModel(envoy.InputsFrom(w.sources()))
}

func (w *world) modelWithMesh(mc *mesh.MeshConfigResource) *envoy.Model {
	in := envoy.InputsFrom(w.sources())
	in.Mesh = mc.MeshConfig
	return envoy.NewModel(in)
}

var (
	sidecar = &envoy.Proxy{ID: "sidecar~127.0.0.1~productpage.default~default.svc.cluster.local", Kind: envoy.Sidecar, Namespace: "default"}
	grpcApp = &envoy.Proxy{ID: "grpc-client-1", Kind: envoy.ProxylessGRPC, Namespace: "default"}
	ingress = &envoy.Proxy{ID: "router~127.0.0.1~ingress.web~web.svc.cluster.local", Kind: envoy.Gateway, Namespace: "web",
		Labels: map[string]string{"istio": "ingressgateway"}}
)

// asJSON renders a message for failure messages.
func asJSON(m proto.Message) string {
	b, _ := protojson.MarshalOptions{Multiline: true}.Marshal(m)
	return string(b)
}
