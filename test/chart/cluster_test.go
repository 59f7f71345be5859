package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/test/e2e"
)

// applier writes rendered objects to a real API server with server-side
// apply, as kubectl apply --server-side does.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(t *testing.T, c *e2e.Cluster) *applier {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Kube.Discovery()))}
}

// apply server-side applies obj; dryRun asks the server to check it fully
// (admission, defaulting, schema with unknown fields refused) and store
// nothing.
func (a *applier) apply(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: "meshcp-chart-test", FieldValidation: "Strict", Force: ptr(true)}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var ri dynamic.ResourceInterface = a.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == "namespace" {
		ri = a.dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts); err != nil {
		return fmt.Errorf("%s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(e2e.WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", e2e.WaitTimeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func createNamespace(t *testing.T, c *e2e.Cluster, name string) {
	t.Helper()
	if _, err := c.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The rendered manifests, with default and with every value changed, pass
// a strict server-side dry run: the API server itself finds no unknown
// field, no invalid value and no object it would refuse. (helm template
// --validate and a client-side dry run do not catch misspelled fields.) A
// misspelled field is caught, so the check can fail.
func TestServerSideDryRun(t *testing.T) {
	c := e2e.StartCluster(t)
	createNamespace(t, c, namespace)
	a := newApplier(t, c)
	for name, r := range map[string]Release{"defaults": defaults(), "every value": full()} {
		t.Run(name, func(t *testing.T) {
			for _, obj := range Render(t, r) {
				if err := a.apply(t.Context(), obj, true); err != nil {
					t.Errorf("server-side dry run: %v", err)
				}
			}
		})
	}

	t.Run("a misspelled field is refused", func(t *testing.T) {
		dep := Find(Render(t, defaults()), "Deployment", fullname)
		if err := unstructured.SetNestedField(dep.Object, int64(2), "spec", "replica"); err != nil {
			t.Fatal(err)
		}
		err := a.apply(t.Context(), dep, true)
		if err == nil || !strings.Contains(err.Error(), "replica") {
			t.Errorf("a Deployment with spec.replica passed the strict dry run: %v", err)
		}
	})
}

// access is one request the daemon's ServiceAccount may or may not make.
type access struct {
	verb, group, resource, subresource, namespace, name string
}

func (a access) String() string {
	s := a.verb + " " + a.group + "/" + a.resource
	if a.subresource != "" {
		s += "/" + a.subresource
	}
	if a.name != "" {
		s += " " + a.name
	}
	if a.namespace != "" {
		s += " in " + a.namespace
	} else {
		s += " cluster-wide"
	}
	return s
}

// needed is what the daemon does against the API server: list and watch
// every kind it reads (every kind of the schema registry with a Kubernetes
// type) and the CRDs, update the status of the Gateway API kinds it
// reports on, and hold its Lease.
func needed() []access {
	var out []access
	for _, s := range schema.Builtin().All() {
		if s.ObjectType == nil {
			continue
		}
		for _, verb := range []string{"list", "watch"} {
			out = append(out, access{verb: verb, group: s.GVK.Group, resource: s.Plural})
		}
	}
	for _, verb := range []string{"list", "watch"} {
		out = append(out, access{verb: verb, group: "apiextensions.k8s.io", resource: "customresourcedefinitions"})
	}
	for _, r := range []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tcproutes", "tlsroutes"} {
		out = append(out, access{verb: "update", group: "gateway.networking.k8s.io", resource: r, subresource: "status"})
	}
	lease := fullname + "-leader"
	out = append(out,
		access{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: namespace},
		access{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: namespace, name: lease},
		access{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: namespace, name: lease},
	)
	return out
}

// notNeeded is a sample of what the daemon never does and must not be
// able to do.
var notNeeded = []access{
	{verb: "get", resource: "secrets", namespace: namespace},
	{verb: "list", resource: "configmaps"},
	{verb: "get", resource: "pods", namespace: "default", name: "x"},
	{verb: "delete", resource: "pods", namespace: "default", name: "x"},
	{verb: "create", group: "networking.istio.io", resource: "virtualservices", namespace: "default"},
	{verb: "update", group: "networking.istio.io", resource: "virtualservices", namespace: "default", name: "x"},
	{verb: "update", group: "gateway.networking.k8s.io", resource: "httproutes", namespace: "default", name: "x"},
	{verb: "patch", group: "gateway.networking.k8s.io", resource: "gateways", namespace: "default", name: "x"},
	{verb: "update", group: "gateway.networking.k8s.io", resource: "referencegrants", subresource: "status", namespace: "default", name: "x"},
	{verb: "update", resource: "services", subresource: "status", namespace: "default", name: "x"},
	{verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions"},
	{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: namespace, name: "someone-elses-lease"},
	{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system"},
	{verb: "list", group: "coordination.k8s.io", resource: "leases", namespace: namespace},
	{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
}

// The chart's RBAC, applied for real, lets the daemon's ServiceAccount do
// exactly what the daemon needs, and the daemon runs with that
// ServiceAccount's token and the Deployment's arguments: it watches
// everything it reads, wins the chart's Lease and writes status.
func TestRBACAndServiceAccountToken(t *testing.T) {
	c := e2e.StartCluster(t)
	createNamespace(t, c, namespace)
	a := newApplier(t, c)
	objs := Render(t, defaults())
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap":
			if err := a.apply(t.Context(), obj, false); err != nil {
				t.Fatal(err)
			}
		}
	}

	user := "system:serviceaccount:" + namespace + ":" + fullname
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	allowed := func(acc access) (bool, string) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: acc.verb, Group: acc.group, Resource: acc.resource, Subresource: acc.subresource,
				Namespace: acc.namespace, Name: acc.name,
			},
		}}
		got, err := c.Kube.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SubjectAccessReview for %s: %v", acc, err)
		}
		return got.Status.Allowed, got.Status.Reason
	}
	for _, acc := range needed() {
		if ok, reason := allowed(acc); !ok {
			t.Errorf("the daemon needs to %s, and is refused (%s)", acc, reason)
		}
	}
	for _, acc := range notNeeded {
		if ok, reason := allowed(acc); ok {
			t.Errorf("the daemon may %s, which it never needs (%s)", acc, reason)
		}
	}

	// The daemon, run as that ServiceAccount, with the chart's mesh config.
	tok, err := c.Kube.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), fullname, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for the chart's ServiceAccount: %v", err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos["daemon"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "daemon", Namespace: namespace}
	cfg.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cm := Find(objs, "ConfigMap", fullname+"-mesh")
	meshYAML, _, _ := unstructured.NestedString(cm.Object, "data", "mesh.yaml")
	meshFile := filepath.Join(dir, "mesh.yaml")
	if err := os.WriteFile(meshFile, []byte(meshYAML), 0o644); err != nil {
		t.Fatal(err)
	}

	// The Deployment's own arguments, but for what a pod has and a test
	// process has not: in-cluster credentials, the mounted mesh config
	// and fixed ports. POD_NAMESPACE is what the Deployment sets too.
	var args []string
	dep := Find(objs, "Deployment", fullname)
	container := nested[[]any](t, dep, "spec", "template", "spec", "containers")[0].(map[string]any)
	for _, a := range toStrings(container["args"].([]any)) {
		if a == "--in-cluster" || strings.HasPrefix(a, "--mesh-config=") || strings.HasSuffix(strings.SplitN(a, "=", 2)[0], "-addr") {
			continue
		}
		args = append(args, a)
	}
	t.Setenv("POD_NAMESPACE", namespace)
	d := e2e.StartDaemon(t, append(args, "--kubeconfig", kubeconfig, "--mesh-config", meshFile)...)
	d.WaitReady()

	// Watches: a Service created now is read.
	createNamespace(t, c, "shop")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := c.Kube.CoreV1().Services("shop").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d.WaitFor("/debug/krtz?collection=config/core/Service", "Service shop/web", func(_ int, body []byte) bool {
		return strings.Contains(string(body), `"shop/web"`)
	})

	// The Lease: the one replica holds the chart's Lease.
	lease := fullname + "-leader"
	var holder string
	waitFor(t, "the daemon to hold Lease "+namespace+"/"+lease, func() bool {
		l, err := c.Kube.CoordinationV1().Leases(namespace).Get(t.Context(), lease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		holder = *l.Spec.HolderIdentity
		return holder != ""
	})

	// Status writes: the leader accepts a GatewayClass of meshcp's.
	class := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "meshcp"},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: "meshcp.io/gateway-controller"},
	}
	if _, err := c.Gateway.GatewayV1().GatewayClasses().Create(t.Context(), class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "GatewayClass meshcp to be Accepted by the daemon", func() bool {
		gc, err := c.Gateway.GatewayV1().GatewayClasses().Get(t.Context(), "meshcp", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range gc.Status.Conditions {
			if cond.Type == "Accepted" && cond.Status == metav1.ConditionTrue {
				return true
			}
		}
		return false
	})
	t.Logf("the daemon, as %s, watched, holds Lease %s as %s, and wrote status", user, lease, holder)
	if lines := d.LogLines("forbidden"); len(lines) > 0 {
		t.Errorf("the daemon was refused something with the chart's RBAC:\n%s", strings.Join(lines, "\n"))
	}
}
