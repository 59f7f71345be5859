package sources_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	istioapi "istio.io/api/networking/v1"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/config/validation"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube/kubefake"
)

func TestMain(m *testing.M) { krttest.Main(m) }

// registry is the builtin registry with a VirtualService rule of the
// test's own, so these tests do not depend on the real rule set: a host
// named "bad" is rejected.
func registry() *schema.Registry {
	r := schema.Builtin()
	vs, _ := r.ByGVK(schema.VirtualService)
	vs.Validate = func(c config.Config) validation.Result {
		var res validation.Result
		for i, h := range c.Spec.(*istioapi.VirtualService).GetHosts() {
			if h == "bad" {
				res.Errorf("spec.hosts["+string(rune('0'+i))+"]", "host %q is not allowed", h)
			}
		}
		return res
	}
	return r
}

func virtualServiceYAML(name, host string) string {
	return "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: " + name + ", namespace: ns}\n" +
		"spec:\n  hosts: [" + host + "]\n  http:\n  - route:\n    - destination: {host: " + host + "}\n"
}

func write(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil { // atomically, as editors and kubectl cp do
		t.Fatal(err)
	}
}

func hostOf(k *sources.Kind, key string) string {
	c := k.Configs.GetKey(key)
	if c == nil {
		return ""
	}
	return c.Spec.(*istioapi.VirtualService).GetHosts()[0]
}

// In file mode every object flows in; an invalid update is rejected and the
// version accepted before it stays in force; other objects keep flowing;
// a deletion removes the object; an unreadable document is reported alone.
func TestFolderSource(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), virtualServiceYAML("a", "a.example.com"))
	write(t, filepath.Join(dir, "b.yaml"), virtualServiceYAML("b", "b.example.com")+"---\nkind: Nonsense\n")
	stop := krttest.Stop(t)
	src, err := sources.FromFolder(dir, stop, sources.Options{Registry: registry(), Domain: "cluster.local", Logger: krttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !src.WaitUntilSynced(stop) {
		t.Fatal("never synced")
	}
	vs := src.Kind(schema.VirtualService)
	if hostOf(vs, "ns/a") != "a.example.com" || hostOf(vs, "ns/b") != "b.example.com" {
		t.Fatalf("initial objects: a=%q b=%q", hostOf(vs, "ns/a"), hostOf(vs, "ns/b"))
	}
	if got := src.Configz().Unreadable; len(got) != 1 || !strings.Contains(got[0].Error, "apiVersion and kind are required") ||
		!strings.HasSuffix(got[0].Source, "b.yaml:10") {
		t.Errorf("unreadable = %+v", got)
	}

	// An invalid update of a: rejected, the old a stays; b changes freely.
	write(t, filepath.Join(dir, "a.yaml"), virtualServiceYAML("a", "bad"))
	write(t, filepath.Join(dir, "b.yaml"), virtualServiceYAML("b", "b2.example.com"))
	krttest.WaitFor(t, vs.Configs, func() bool { return hostOf(vs, "ns/b") == "b2.example.com" })
	krttest.WaitFor(t, vs.Verdicts, func() bool {
		v := vs.Verdicts.GetKey("ns/a")
		return v != nil && !v.Status.Accepted
	})
	if got := hostOf(vs, "ns/a"); got != "a.example.com" {
		t.Errorf("a rejected update replaced the accepted version: host %q", got)
	}
	rejected := configz(t, src, "?rejected=true")
	if len(rejected.Kinds) == 0 {
		t.Fatal("no kinds in configz")
	}
	var found *sources.ObjectVerdict
	for _, k := range rejected.Kinds {
		for i := range k.Rejected {
			if k.Kind == schema.VirtualService.String() && k.Rejected[i].Key == "ns/a" {
				found = &k.Rejected[i]
			}
		}
	}
	if found == nil || !found.InForce || !strings.HasSuffix(found.Origin, "a.yaml:1") ||
		len(found.Errors) != 1 || found.Errors[0].Path != "spec.hosts[0]" || !strings.Contains(found.Errors[0].Message, `"bad"`) {
		t.Errorf("configz verdict on ns/a = %+v", found)
	}

	// Fixed: accepted again. Deleted: gone.
	write(t, filepath.Join(dir, "a.yaml"), virtualServiceYAML("a", "a3.example.com"))
	krttest.WaitFor(t, vs.Configs, func() bool { return hostOf(vs, "ns/a") == "a3.example.com" })
	if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	krttest.WaitFor(t, vs.Configs, func() bool { return vs.Configs.GetKey("ns/b") == nil })
}

func configz(t *testing.T, src *sources.Sources, query string) sources.Configz {
	t.Helper()
	rec := httptest.NewRecorder()
	src.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/configz"+query, nil))
	var z sources.Configz
	if err := json.Unmarshal(rec.Body.Bytes(), &z); err != nil {
		t.Fatalf("configz is not JSON: %v\n%s", err, rec.Body)
	}
	return z
}

// In Kubernetes mode objects come through informers and get the same
// verdicts.
func TestKubernetesSource(t *testing.T) {
	client := kubefake.NewClient(t,
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", UID: "u1", Generation: 2},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
		&networkingv1.VirtualService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "good"}, Spec: istioapi.VirtualService{Hosts: []string{"good"}}},
		&networkingv1.VirtualService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rejected"}, Spec: istioapi.VirtualService{Hosts: []string{"bad"}}},
		kubefake.CRD("virtualservices", "networking.istio.io", true, "v1"),
	)
	stop := krttest.Stop(t)
	src, err := sources.FromKubernetes(client.Client, stop, sources.Options{Registry: registry(), Domain: "cluster.local", Logger: krttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !src.WaitUntilSynced(stop) {
		t.Fatal("never synced")
	}
	svc := src.Kind(schema.Service).Configs.GetKey("ns/svc")
	if svc == nil || svc.UID != "u1" || svc.Generation != 2 || svc.Domain != "cluster.local" {
		t.Fatalf("service = %+v", svc)
	}
	vs := src.Kind(schema.VirtualService)
	krttest.WaitFor(t, vs.Verdicts, func() bool { return vs.Verdicts.GetKey("ns/rejected") != nil })
	if hostOf(vs, "ns/good") != "good" || vs.Configs.GetKey("ns/rejected") != nil {
		t.Fatalf("good %q, rejected %v", hostOf(vs, "ns/good"), vs.Configs.GetKey("ns/rejected"))
	}
	// A bad update of an accepted object leaves it in force.
	bad := &networkingv1.VirtualService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "good"}, Spec: istioapi.VirtualService{Hosts: []string{"bad"}}}
	if _, err := client.IstioFake.NetworkingV1().VirtualServices("ns").Update(context.Background(), bad, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	krttest.WaitFor(t, vs.Verdicts, func() bool {
		v := vs.Verdicts.GetKey("ns/good")
		return v != nil && !v.Status.Accepted
	})
	if hostOf(vs, "ns/good") != "good" {
		t.Errorf("the accepted version was replaced by a rejected one")
	}
}

// Every kind of the registry with a Kubernetes type can be read from the
// API server.
func TestEveryKindHasAKubernetesReader(t *testing.T) {
	client := kubefake.NewClient(t)
	stop := krttest.Stop(t)
	src, err := sources.FromKubernetes(client.Client, stop, sources.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range schema.Builtin().All() {
		if s.ObjectType != nil && src.Kind(s.GVK) == nil {
			t.Errorf("%s is not read from the API server", s.GVK)
		}
	}
}

// A rejection is logged once, when it happens, and counted; unrelated
// changes do not repeat it.
func TestRejectionIsLoggedOnceAndCounted(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), virtualServiceYAML("a", "bad"))
	write(t, filepath.Join(dir, "b.yaml"), virtualServiceYAML("b", "b.example.com"))
	var logs syncBuffer
	reg := prometheus.NewPedanticRegistry()
	metrics, err := sources.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	stop := krttest.Stop(t)
	src, err := sources.FromFolder(dir, stop, sources.Options{Registry: registry(), Logger: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(src)
	vs := src.Kind(schema.VirtualService)
	krttest.WaitFor(t, vs.Verdicts, func() bool { return strings.Contains(logs.String(), "configuration rejected") })
	write(t, filepath.Join(dir, "b.yaml"), virtualServiceYAML("b", "b2.example.com"))
	krttest.WaitFor(t, vs.Configs, func() bool { return hostOf(vs, "ns/b") == "b2.example.com" })
	if n := strings.Count(logs.String(), "configuration rejected"); n != 1 {
		t.Errorf("the rejection was logged %d times:\n%s", n, logs.String())
	}
	for _, want := range []string{"object=ns/a", "a.yaml:1", `spec.hosts[0]: host \"bad\" is not allowed`, "previousVersionInForce=false"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log line lacks %q:\n%s", want, logs.String())
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP meshcp_config_rejections_total Objects rejected by validation, counted each time an object becomes rejected or its reasons change.
# TYPE meshcp_config_rejections_total counter
meshcp_config_rejections_total{kind="networking.istio.io/v1/VirtualService"} 1
`), "meshcp_config_rejections_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(src, "meshcp_config_objects"); got == 0 {
		t.Error("no meshcp_config_objects gauges")
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Secrets from the API server reach the graph as summaries: neither the
// informer's copy nor the data shows in /debug/krtz.
func TestSecretsStayOutOfTheDebugDump(t *testing.T) {
	client := kubefake.NewClient(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cert"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": []byte("cert-bytes-must-not-leak"), "tls.key": []byte("key-bytes-must-not-leak")},
	})
	stop := krttest.Stop(t)
	debug := krt.NewDebugHandler()
	src, err := sources.FromKubernetes(client.Client, stop, sources.Options{Debugger: debug, Kinds: []config.GroupVersionKind{schema.Secret}})
	if err != nil {
		t.Fatal(err)
	}
	if !src.WaitUntilSynced(stop) {
		t.Fatal("never synced")
	}
	secret := src.Kind(schema.Secret).Configs.GetKey("ns/cert")
	if secret == nil {
		t.Fatal("the Secret was not read")
	}
	if spec := secret.Spec.(*schema.SecretSpec); spec.TLS.Valid || len(spec.Keys) != 2 {
		t.Errorf("summary = %+v", spec)
	}
	rec := httptest.NewRecorder()
	debug.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/krtz", nil))
	dump := rec.Body.String()
	if !strings.Contains(dump, `"config/core/Secret"`) {
		t.Fatalf("the Secret summaries are not in krtz:\n%s", dump)
	}
	for _, leak := range []string{"must-not-leak", "Y2VydC1ieXRlcy", "kube/v1/Secret"} {
		if strings.Contains(dump, leak) {
			t.Errorf("krtz shows %q:\n%s", leak, dump)
		}
	}
}
