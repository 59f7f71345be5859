package bootstrap_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshcp/meshcp/examples"
	"github.com/meshcp/meshcp/pkg/bootstrap"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

func TestMain(m *testing.M) { krttest.Main(m) }

// daemon is the daemon running in this process for a test.
type daemon struct {
	srv    *bootstrap.Server
	cancel context.CancelFunc
	done   chan error
}

// startDaemon runs the daemon on opts (debug and metrics on free loopback
// ports) until the test ends.
func startDaemon(t *testing.T, opts bootstrap.Options) *daemon {
	t.Helper()
	opts.DebugAddr, opts.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	opts.XDS.Addr, opts.XDS.TLSAddr = "127.0.0.1:0", ""
	opts.Debounce = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := bootstrap.Start(ctx, opts, testLog{t})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	d := &daemon{srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- srv.Wait() }()
	t.Cleanup(func() {
		cancel()
		if err := <-d.done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return d
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	if l.t.Context().Err() == nil {
		l.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func (d *daemon) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + d.srv.DebugAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitFor polls the daemon until cond holds on the answer to path.
func (d *daemon) waitFor(t *testing.T, path string, cond func(status int, body string) bool) string {
	t.Helper()
	deadline := time.Now().Add(krttest.Timeout)
	for {
		status, body := d.get(t, path)
		if cond(status, body) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s never satisfied the condition; last answer %d:\n%s", path, status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// copyExamples copies the bundled examples into a folder of the test's.
func copyExamples(t *testing.T) string {
	dir := t.TempDir()
	if err := os.CopyFS(dir, examples.FS); err != nil {
		t.Fatal(err)
	}
	return dir
}

// outputs returns the keys of a collection's outputs in /debug/krtz.
func outputs(t *testing.T, krtz, collection string) []string {
	t.Helper()
	var dump []struct {
		Name  string `json:"name"`
		State struct {
			Outputs map[string]json.RawMessage `json:"outputs"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(krtz), &dump); err != nil {
		t.Fatalf("krtz is not JSON: %v", err)
	}
	for _, c := range dump {
		if c.Name == collection {
			var keys []string
			for k := range c.State.Outputs {
				keys = append(keys, k)
			}
			return keys
		}
	}
	return nil
}

// File mode: the examples are served, the graph is on /debug/krtz, every
// object is accepted, /ready says so, and an edit shows up live.
func TestFileMode(t *testing.T) {
	dir := copyExamples(t)
	opts := bootstrap.DefaultOptions()
	opts.ConfigDir = filepath.Join(dir, "config")
	opts.MeshConfigFile = filepath.Join(dir, "mesh.yaml")
	d := startDaemon(t, opts)

	d.waitFor(t, "/ready", func(status int, _ string) bool { return status == http.StatusOK })
	krtz := d.waitFor(t, "/debug/krtz?collection=config/networking.istio.io/VirtualService", func(_ int, body string) bool {
		return len(outputs(t, body, "config/networking.istio.io/VirtualService")) == 3
	})
	if !strings.Contains(krtz, `"bookinfo/reviews"`) {
		t.Errorf("reviews missing from krtz:\n%s", krtz)
	}
	_, configz := d.get(t, "/debug/configz?rejected=true")
	if strings.Contains(configz, `"key"`) {
		t.Errorf("the examples have rejected objects:\n%s", configz)
	}

	// A new VirtualService, written while the daemon runs, shows up.
	vs := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: details, namespace: bookinfo}\n" +
		"spec:\n  hosts: [details]\n  http:\n  - route:\n    - destination: {host: details}\n"
	if err := os.WriteFile(filepath.Join(opts.ConfigDir, "bookinfo", "details.yaml"), []byte(vs), 0o644); err != nil {
		t.Fatal(err)
	}
	d.waitFor(t, "/debug/krtz?collection=config/networking.istio.io/VirtualService&key=bookinfo/details", func(_ int, body string) bool {
		return len(outputs(t, body, "config/networking.istio.io/VirtualService")) == 1
	})

	// Metrics are served.
	resp, err := http.Get("http://" + d.srv.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`meshcp_config_objects{kind="networking.istio.io/v1/VirtualService",verdict="accepted"} 4`, "krt_collection_objects", "go_goroutines"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// Without flags the daemon serves the examples: the checkout's folder when
// run from the repository root, a copy of the embedded ones elsewhere.
func TestDefaultsServeTheExamples(t *testing.T) {
	t.Chdir(t.TempDir()) // not a checkout: the embedded copy is served
	d := startDaemon(t, bootstrap.DefaultOptions())
	d.waitFor(t, "/debug/krtz?collection=config/core/Service", func(_ int, body string) bool {
		return len(outputs(t, body, "config/core/Service")) == 5 // bookinfo's four and the Gateway API example's gateway Service
	})
}

func TestReadyWaitsForSync(t *testing.T) {
	dir := copyExamples(t)
	opts := bootstrap.DefaultOptions()
	opts.ConfigDir = filepath.Join(dir, "config")
	opts.MeshConfigFile = filepath.Join(dir, "mesh.yaml")
	d := startDaemon(t, opts)
	body := d.waitFor(t, "/ready", func(status int, _ string) bool { return status == http.StatusOK })
	if strings.TrimSpace(body) != "ready" {
		t.Errorf("/ready = %q", body)
	}
	if status, body := d.get(t, "/healthz"); status != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz = %d %q", status, body)
	}
}

func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*bootstrap.Options)
		want string
	}{
		{"both kubernetes modes", func(o *bootstrap.Options) { o.Kubeconfig, o.InCluster = "x", true }, "exclusive"},
		{"config dir in kubernetes mode", func(o *bootstrap.Options) { o.Kubeconfig, o.ConfigDir = "x", "y" }, "--config-dir is for file mode"},
		{"log format", func(o *bootstrap.Options) { o.LogFormat = "xml" }, "--log-format"},
		{"log level", func(o *bootstrap.Options) { o.LogLevel = "krt=loud" }, "want debug, info, warn or error"},
		{"missing folder", func(o *bootstrap.Options) { o.ConfigDir = "/nonexistent/meshcp" }, "/nonexistent/meshcp"},
		{"bad kubeconfig", func(o *bootstrap.Options) { o.Kubeconfig = "/nonexistent/kubeconfig" }, "reading kubeconfig /nonexistent/kubeconfig"},
		{"gateway controller name", func(o *bootstrap.Options) { o.GatewayControllerName = "no-path" }, "must be DOMAIN/PATH"},
		{"lease", func(o *bootstrap.Options) { o.Kubeconfig, o.LeaseName = "x", "" }, "--lease-name and --lease-namespace"},
		{"lease timing", func(o *bootstrap.Options) { o.LeaseDuration = o.RenewDeadline }, "--lease-duration 10s must exceed --lease-renew-deadline 10s"},
		{"xds certificate without key", func(o *bootstrap.Options) { o.XDS.TLSCertFile = "cert.pem" }, "--xds-tls-cert and --xds-tls-key go together"},
		{"xds missing certificate", func(o *bootstrap.Options) {
			o.XDS.TLSAddr, o.XDS.TLSCertFile, o.XDS.TLSKeyFile = "127.0.0.1:0", "/nonexistent/cert.pem", "/nonexistent/key.pem"
		}, "loading /nonexistent/cert.pem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := bootstrap.DefaultOptions()
			opts.DebugAddr, opts.MetricsAddr = "", ""
			opts.XDS.Addr, opts.XDS.TLSAddr = "", ""
			tc.edit(&opts)
			_, err := bootstrap.Start(context.Background(), opts, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start error = %v, want one with %q", err, tc.want)
			}
		})
	}
}

// The mesh config file is watched: a change takes effect without a
// restart, and a broken edit keeps the last good config and says why.
func TestMeshConfigIsWatched(t *testing.T) {
	dir := copyExamples(t)
	opts := bootstrap.DefaultOptions()
	opts.ConfigDir = filepath.Join(dir, "config")
	opts.MeshConfigFile = filepath.Join(dir, "mesh.yaml")
	d := startDaemon(t, opts)
	d.waitFor(t, "/debug/mesh", func(_ int, body string) bool { return strings.Contains(body, `"accessLogFile": "/dev/stdout"`) })

	krttest.WriteFile(t, opts.MeshConfigFile, "outboundTrafficPolicy: {mode: REGISTRY_ONLY}\n")
	d.waitFor(t, "/debug/mesh", func(_ int, body string) bool { return strings.Contains(body, `"REGISTRY_ONLY"`) })
	if got := d.srv.Mesh.Get().GetOutboundTrafficPolicy().GetMode().String(); got != "REGISTRY_ONLY" {
		t.Errorf("the mesh singleton has %s", got)
	}

	krttest.WriteFile(t, opts.MeshConfigFile, "connectTimeout: -5s\n")
	body := d.waitFor(t, "/debug/mesh", func(_ int, body string) bool { return strings.Contains(body, `"valid": false`) })
	if !strings.Contains(body, `"REGISTRY_ONLY"`) || !strings.Contains(body, `"path": "connectTimeout"`) {
		t.Errorf("after a broken edit /debug/mesh = %s", body)
	}
}

// Without a mesh config file, Istio's defaults are in force and
// /debug/mesh says so.
func TestMeshConfigDefaults(t *testing.T) {
	opts := bootstrap.DefaultOptions()
	opts.ConfigDir = t.TempDir()
	d := startDaemon(t, opts)
	_, body := d.get(t, "/debug/mesh")
	if !strings.Contains(body, `"source":"defaults"`) || !strings.Contains(body, `"trustDomain":"cluster.local"`) {
		t.Errorf("/debug/mesh = %s", body)
	}
	if got := d.srv.Mesh.Get().GetRootNamespace(); got != "istio-system" {
		t.Errorf("root namespace %q, want Istio's default", got)
	}
}

// gatewayYAML is a Gateway and a route to a listener it does not have.
const gatewayYAML = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: infra}
spec:
  gatewayClassName: meshcp
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: infra}
spec:
  parentRefs: [{name: web, sectionName: nope}]
  rules: [{backendRefs: [{name: shop, port: 80}]}]
`

// File mode translates Gateway API objects: the chain is on /debug/krtz
// under gateway/..., and the statuses, which have no API server to go to,
// are on /debug/gateway-status, with transition times.
func TestFileModeGatewayStatus(t *testing.T) {
	dir := t.TempDir()
	krttest.WriteFile(t, filepath.Join(dir, "gateway.yaml"), gatewayYAML)
	opts := bootstrap.DefaultOptions()
	opts.ConfigDir = dir
	d := startDaemon(t, opts)
	d.waitFor(t, "/debug/krtz?collection=gateway/GatewayConfigs", func(_ int, body string) bool {
		return len(outputs(t, body, "gateway/GatewayConfigs")) == 1
	})
	body := d.waitFor(t, "/debug/gateway-status?kind=HTTPRoute", func(_ int, body string) bool {
		return strings.Contains(body, `"reason": "NoMatchingParent"`)
	})
	var statuses []struct {
		Kind, Namespace, Name string
		Status                struct {
			Parents []struct {
				Conditions []struct {
					Type               string `json:"type"`
					LastTransitionTime string `json:"lastTransitionTime"`
				} `json:"conditions"`
			} `json:"parents"`
		}
	}
	if err := json.Unmarshal([]byte(body), &statuses); err != nil {
		t.Fatalf("/debug/gateway-status is not JSON: %v\n%s", err, body)
	}
	if len(statuses) != 1 || statuses[0].Name != "shop" || len(statuses[0].Status.Parents) != 1 {
		t.Fatalf("/debug/gateway-status?kind=HTTPRoute = %s", body)
	}
	for _, c := range statuses[0].Status.Parents[0].Conditions {
		if _, err := time.Parse(time.RFC3339, c.LastTransitionTime); err != nil {
			t.Errorf("condition %s has lastTransitionTime %q", c.Type, c.LastTransitionTime)
		}
	}

	// Fixing the route is seen: it is accepted, and the Gateway counts it.
	krttest.WriteFile(t, filepath.Join(dir, "gateway.yaml"), strings.Replace(gatewayYAML, "sectionName: nope", "sectionName: http", 1))
	d.waitFor(t, "/debug/gateway-status?kind=Gateway", func(_ int, body string) bool {
		return strings.Contains(body, `"attachedRoutes": 1`)
	})
}
