package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	istionetworking "istio.io/api/networking/v1alpha3"
	istionetworkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

const (
	vsKind         = "networking.istio.io/v1/VirtualService"
	vsCollection   = "config/networking.istio.io/VirtualService"
	svcCollection  = "config/core/Service"
	testNamespace  = "shop"
	rejectedLogMsg = `msg="configuration rejected"`
)

// virtualService is a VirtualService for host in the test namespace,
// splitting traffic between subsets v1 and v2 by the given weights.
func virtualService(name, host string, w1, w2 int32) *istionetworkingv1.VirtualService {
	return &istionetworkingv1.VirtualService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Spec: istionetworking.VirtualService{
			Hosts: []string{host},
			Http: []*istionetworking.HTTPRoute{{
				Route: []*istionetworking.HTTPRouteDestination{
					{Destination: &istionetworking.Destination{Host: host, Subset: "v1"}, Weight: w1},
					{Destination: &istionetworking.Destination{Host: host, Subset: "v2"}, Weight: w2},
				},
			}},
		},
	}
}

func createNamespace(t *testing.T, c *Cluster, name string) {
	t.Helper()
	if _, err := c.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func createService(t *testing.T, c *Cluster, name string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, Labels: map[string]string{"app": name}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 9080, TargetPort: intstr.FromInt32(9080)}},
		},
	}
	if _, err := c.Kube.CoreV1().Services(testNamespace).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service %s: %v", name, err)
	}
}

func createVS(t *testing.T, c *Cluster, vs *istionetworkingv1.VirtualService) {
	t.Helper()
	if _, err := c.Istio.NetworkingV1().VirtualServices(vs.Namespace).Create(t.Context(), vs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating VirtualService %s: %v", vs.Name, err)
	}
}

// updateVS replaces the spec of a VirtualService, retrying on conflicts.
func updateVS(t *testing.T, c *Cluster, name string, spec *istionetworking.VirtualService) {
	t.Helper()
	vss := c.Istio.NetworkingV1().VirtualServices(testNamespace)
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, WaitTimeout, true, func(ctx context.Context) (bool, error) {
		cur, err := vss.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		spec.DeepCopyInto(&cur.Spec)
		_, err = vss.Update(ctx, cur, metav1.UpdateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("updating VirtualService %s: %v", name, err)
	}
}

// outputWeights returns the weights of the first http route of a
// VirtualService as /debug/krtz shows it.
func outputWeights(t *testing.T, raw json.RawMessage) []int {
	t.Helper()
	var out struct {
		Spec struct {
			HTTP []struct {
				Route []struct {
					Weight int `json:"weight"`
				} `json:"route"`
			} `json:"http"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decoding a VirtualService from /debug/krtz: %v\n%s", err, raw)
	}
	var ws []int
	if len(out.Spec.HTTP) > 0 {
		for _, r := range out.Spec.HTTP[0].Route {
			ws = append(ws, r.Weight)
		}
	}
	return ws
}

// weightsOf reads the weights of one VirtualService from the daemon.
func weightsOf(t *testing.T, d *Daemon, key string) []int {
	t.Helper()
	cols, err := d.Krtz(vsCollection)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		if c.Name == vsCollection {
			if raw, ok := c.State.Outputs[key]; ok {
				return outputWeights(t, raw)
			}
		}
	}
	t.Fatalf("%s has no output %s", vsCollection, key)
	return nil
}

// The daemon in Kubernetes mode: objects created through the API show up
// in /debug/krtz and /debug/configz; an invalid VirtualService is rejected
// with its reason, once in the log, while every other object keeps
// flowing and the last accepted version of an object stays in force; a
// delete removes the object; a mesh config edit takes effect live.
func TestKubernetesMode(t *testing.T) {
	c := StartCluster(t)
	meshFile := filepath.Join(t.TempDir(), "mesh.yaml")
	krttest.WriteFile(t, meshFile, "accessLogFile: /dev/stdout\n")
	d := StartDaemon(t, "--kubeconfig", c.KubeconfigPath, "--mesh-config", meshFile)
	if d.Addrs["mode"] != "kubernetes" {
		t.Fatalf("started in mode %q", d.Addrs["mode"])
	}
	d.WaitReady()

	createNamespace(t, c, testNamespace)
	createService(t, c, "reviews")
	createVS(t, c, virtualService("reviews", "reviews", 80, 20))
	d.WaitForOutputs(vsCollection, "shop/reviews")
	d.WaitFor("/debug/krtz?collection="+svcCollection, "Service shop/reviews", func(_ int, body []byte) bool {
		return bytes.Contains(body, []byte(`"shop/reviews"`))
	})
	if v := d.WaitForVerdict(vsKind, "shop/reviews", true); !strings.HasPrefix(v.Origin, "kubernetes resourceVersion ") {
		t.Errorf("accepted verdict has origin %q, want the resourceVersion read", v.Origin)
	}

	// Informer caches hold no managedFields: nothing of them reaches the graph.
	if _, body, err := d.Get("/debug/krtz"); err != nil {
		t.Fatal(err)
	} else if bytes.Contains(body, []byte("managedFields")) {
		t.Error("/debug/krtz shows managedFields; the informer transform should strip them")
	}

	t.Run("invalid object rejected alone", func(t *testing.T) {
		// A negative weight passes the CRD's schema but not validation.
		createVS(t, c, virtualService("broken", "ratings", 100, -20))
		createVS(t, c, virtualService("details", "details", 50, 50))
		d.WaitForOutputs(vsCollection, "shop/details", "shop/reviews")
		v := d.WaitForVerdict(vsKind, "shop/broken", false)
		if len(v.Errors) == 0 || v.Errors[0].Path != "spec.http[0].route[1].weight" || !strings.Contains(v.Errors[0].Message, "negative") {
			t.Errorf("verdict on shop/broken = %+v, want an error on spec.http[0].route[1].weight", v)
		}
		if v.InForce {
			t.Error("a never-accepted object is marked in force")
		}
		waitLogLines(t, d, 1, rejectedLogMsg, "object=shop/broken")
	})

	t.Run("last accepted version stays in force", func(t *testing.T) {
		updateVS(t, c, "reviews", &virtualService("", "reviews", 90, -10).Spec)
		v := d.WaitForVerdict(vsKind, "shop/reviews", false)
		if !v.InForce {
			t.Errorf("verdict on shop/reviews = %+v, want the accepted version in force", v)
		}
		if got := weightsOf(t, d, "shop/reviews"); !slices.Equal(got, []int{80, 20}) {
			t.Errorf("shop/reviews weights in force = %v, want the accepted 80/20", got)
		}
		updateVS(t, c, "reviews", &virtualService("", "reviews", 70, 30).Spec)
		d.WaitForVerdict(vsKind, "shop/reviews", true)
		d.WaitFor("/debug/krtz?collection="+vsCollection+"&key=shop/reviews", "reviews at 70/30", func(_ int, body []byte) bool {
			return bytes.Contains(body, []byte(`"weight": 70`))
		})
		waitLogLines(t, d, 1, rejectedLogMsg, "object=shop/reviews")
	})

	t.Run("delete removes the object", func(t *testing.T) {
		if err := c.Istio.NetworkingV1().VirtualServices(testNamespace).Delete(t.Context(), "details", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		d.WaitForOutputs(vsCollection, "shop/reviews")
		z, err := d.Configz()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range z.Kinds {
			for _, v := range append(k.Accepted, k.Rejected...) {
				if v.Key == "shop/details" {
					t.Errorf("/debug/configz still lists deleted %s %s", k.Kind, v.Key)
				}
			}
		}
	})

	t.Run("metrics count the rejection", func(t *testing.T) {
		_, body, err := httpGet(d.MetricsURL())
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			`meshcp_config_objects{kind="networking.istio.io/v1/VirtualService",verdict="rejected"} 1`,
			`meshcp_config_objects{kind="networking.istio.io/v1/VirtualService",verdict="accepted"} 1`,
			`meshcp_config_rejections_total{kind="networking.istio.io/v1/VirtualService"} 2`,
		} {
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})

	t.Run("mesh config edit takes effect live", func(t *testing.T) {
		krttest.WriteFile(t, meshFile, "outboundTrafficPolicy: {mode: REGISTRY_ONLY}\n")
		d.WaitFor("/debug/mesh", "the new mesh config in force", func(_ int, body []byte) bool {
			return bytes.Contains(body, []byte(`"REGISTRY_ONLY"`)) && bytes.Contains(body, []byte(`"valid": true`))
		})
		krttest.WriteFile(t, meshFile, "outboundTrafficPolicy: {mode: SOMETIMES}\n")
		body := d.WaitFor("/debug/mesh", "the broken edit reported", func(_ int, body []byte) bool {
			return bytes.Contains(body, []byte(`"valid": false`))
		})
		if !bytes.Contains(body, []byte(`"REGISTRY_ONLY"`)) || !bytes.Contains(body, []byte("outboundTrafficPolicy")) {
			t.Errorf("after a broken edit /debug/mesh should keep REGISTRY_ONLY and name the field:\n%s", body)
		}
	})
}

// waitLogLines waits until the daemon's log has exactly n lines holding
// every string of all, then checks the count stays n for a moment (a
// rejection is logged once, not on every resync).
func waitLogLines(t *testing.T, d *Daemon, n int, all ...string) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for len(d.LogLines(all...)) < n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if got := d.LogLines(all...); len(got) != n {
		t.Errorf("log has %d lines with %q, want %d:\n%s", len(got), all, n, strings.Join(got, "\n"))
	}
}

// A kind whose CRD is missing is empty and synced, so the daemon is ready;
// once the CRD is installed, its objects flow.
func TestMissingCRDTolerated(t *testing.T) {
	c := StartCluster(t)
	const crdName = "sidecars.networking.istio.io"
	var sidecarCRD *apiextensionsv1.CustomResourceDefinition
	for _, crd := range c.Server.CRDs {
		if crd.Name == crdName {
			sidecarCRD = crd.DeepCopy()
		}
	}
	if sidecarCRD == nil {
		t.Fatalf("the harness installed no %s", crdName)
	}
	crds := c.CRDs.ApiextensionsV1().CustomResourceDefinitions()
	if err := crds.Delete(t.Context(), crdName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, WaitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, crdName, metav1.GetOptions{})
		return err != nil, nil
	}); err != nil {
		t.Fatalf("CRD %s not gone: %v", crdName, err)
	}

	d := StartDaemon(t, "--kubeconfig", c.KubeconfigPath)
	d.WaitReady()

	sidecarCRD.ResourceVersion, sidecarCRD.UID = "", ""
	if _, err := crds.Create(t.Context(), sidecarCRD, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createNamespace(t, c, testNamespace)
	sidecar := &istionetworkingv1.Sidecar{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: testNamespace},
		Spec:       istionetworking.Sidecar{Egress: []*istionetworking.IstioEgressListener{{Hosts: []string{"./*"}}}},
	}
	// The new CRD takes a moment to be served.
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, WaitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.Istio.NetworkingV1().Sidecars(testNamespace).Create(ctx, sidecar, metav1.CreateOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("creating a Sidecar once its CRD is back: %v", err)
	}
	d.WaitForOutputs("config/networking.istio.io/Sidecar", "shop/default")
	d.WaitReady()
}

// Restarting the API server (killed, then started again on the same etcd)
// loses nothing: the daemon follows changes made after the restart, and
// its outputs then equal those of a daemon started fresh.
func TestAPIServerRestartLosesNothing(t *testing.T) {
	c := StartCluster(t)
	d := StartDaemon(t, "--kubeconfig", c.KubeconfigPath)
	d.WaitReady()

	createNamespace(t, c, testNamespace)
	for _, name := range []string{"reviews", "ratings", "details"} {
		createService(t, c, name)
		createVS(t, c, virtualService(name, name, 80, 20))
	}
	d.WaitForOutputs(vsCollection, "shop/details", "shop/ratings", "shop/reviews")

	if err := c.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // long enough for the watches to break
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}

	// Changes after the restart: an update, a delete, a create.
	updateVS(t, c, "reviews", &virtualService("", "reviews", 10, 90).Spec)
	if err := c.Istio.NetworkingV1().VirtualServices(testNamespace).Delete(t.Context(), "details", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createService(t, c, "productpage")
	createVS(t, c, virtualService("productpage", "productpage", 50, 50))
	d.WaitForOutputs(vsCollection, "shop/productpage", "shop/ratings", "shop/reviews")

	fresh := StartDaemon(t, "--kubeconfig", c.KubeconfigPath)
	fresh.WaitReady()
	// The restarted daemon may still be catching up: compare until equal.
	var diff string
	deadline := time.Now().Add(WaitTimeout)
	for {
		diff = compareConfigOutputs(t, d, fresh)
		if diff == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if diff != "" {
		t.Errorf("after the API server restart the daemon differs from a fresh one:\n%s", diff)
	}
	if got := weightsOf(t, d, "shop/reviews"); !slices.Equal(got, []int{10, 90}) {
		t.Errorf("shop/reviews weights = %v, want the update made after the restart", got)
	}
}

// compareConfigOutputs compares the outputs of every config collection of
// two daemons, and describes the differences ("" when none).
func compareConfigOutputs(t *testing.T, a, b *Daemon) string {
	t.Helper()
	outputsOf := func(d *Daemon) map[string]map[string]string {
		cols, err := d.Krtz("config/")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]string{}
		for _, c := range cols {
			m := map[string]string{}
			for k, v := range c.State.Outputs {
				m[k] = string(v)
			}
			out[c.Name] = m
		}
		return out
	}
	oa, ob := outputsOf(a), outputsOf(b)
	var diffs []string
	for name, ma := range oa {
		mb, ok := ob[name]
		if !ok {
			diffs = append(diffs, "collection "+name+" only in the first")
			continue
		}
		for k, va := range ma {
			if vb, ok := mb[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s: %s only in the first", name, k))
			} else if va != vb {
				diffs = append(diffs, fmt.Sprintf("%s: %s differs:\n%s\nvs\n%s", name, k, va, vb))
			}
		}
		for k := range mb {
			if _, ok := ma[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s: %s only in the second", name, k))
			}
		}
	}
	for name := range ob {
		if _, ok := oa[name]; !ok {
			diffs = append(diffs, "collection "+name+" only in the second")
		}
	}
	if len(oa) < 20 {
		diffs = append(diffs, fmt.Sprintf("only %d config collections compared", len(oa)))
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "\n")
}
