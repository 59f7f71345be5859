package kube_test

import (
	"context"
	"testing"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
	"github.com/meshcp/meshcp/pkg/kube/kubefake"
)

// crdCase is one CRD-backed kind, with the means to create its objects.
type crdCase[T kube.Object] struct {
	resource, group string
	newObject       func(key string) T
	create          func(c *kubefake.Client, obj T) error
}

func TestCRDTolerance(t *testing.T) {
	ctx := context.Background()
	t.Run("VirtualService", func(t *testing.T) {
		testCRDTolerance(t, crdCase[*networkingv1.VirtualService]{
			resource: "virtualservices", group: "networking.istio.io",
			newObject: func(key string) *networkingv1.VirtualService {
				return &networkingv1.VirtualService{ObjectMeta: objectMeta(key, nil)}
			},
			create: func(c *kubefake.Client, vs *networkingv1.VirtualService) error {
				_, err := c.Istio().NetworkingV1().VirtualServices(vs.Namespace).Create(ctx, vs, metav1.CreateOptions{})
				return err
			},
		})
	})
	t.Run("HTTPRoute", func(t *testing.T) {
		testCRDTolerance(t, crdCase[*gatewayv1.HTTPRoute]{
			resource: "httproutes", group: "gateway.networking.k8s.io",
			newObject: func(key string) *gatewayv1.HTTPRoute {
				return &gatewayv1.HTTPRoute{ObjectMeta: objectMeta(key, nil)}
			},
			create: func(c *kubefake.Client, r *gatewayv1.HTTPRoute) error {
				_, err := c.GatewayAPI().GatewayV1().HTTPRoutes(r.Namespace).Create(ctx, r, metav1.CreateOptions{})
				return err
			},
		})
	})
}

// testCRDTolerance checks that a collection of a CRD-backed kind is empty
// and synced without its CRD, fills when the CRD is established, empties
// when it is deleted and fills again when it is back, logging the waits.
func testCRDTolerance[T kube.Object](t *testing.T, tc crdCase[T]) {
	logs, logger := newLogBuffer(t)
	// The fake serves objects whether or not their CRD exists, like an API
	// server whose CRD was just created: one object is already there.
	c := kubefake.NewClientWithOptions(t, []kube.ClientOption{kube.WithLogger(logger)}, tc.newObject("ns/existing"))
	stop := krttest.Stop(t)
	col, err := kube.NewCollection[T](c.Client, kube.Filter{}, stop, krt.WithLogger(krttest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	waitSynced(t, col, stop)
	if got := keysOf(col); got != "" {
		t.Fatalf("without the CRD: %q, want empty", got)
	}
	if n := kube.InformerCount(c.Client); n != 0 {
		t.Errorf("%d informers running without the CRD, want 0", n)
	}
	if n := logs.count("waiting for the CustomResourceDefinition"); n != 1 {
		t.Errorf("logged the wait %d times, want once", n)
	}
	tracker := krttest.NewTracker[T](t)
	col.Register(tracker.Track)

	// A CRD that is not Established yet, or does not serve the version
	// read, changes nothing.
	name := tc.resource + "." + tc.group
	createCRD(t, c, crd(tc.resource, tc.group, false, "v1"))
	notServed := crd(tc.resource, tc.group, true, "v1")
	notServed.Spec.Versions[0].Served = false
	notServed.Spec.Versions = append(notServed.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta1", Served: true})
	updateCRD(t, c, notServed)
	time.Sleep(20 * time.Millisecond)
	tracker.Empty()

	// Established and serving v1: the existing object flows in, and so do
	// later ones.
	updateCRD(t, c, crd(tc.resource, tc.group, true, "v1"))
	tracker.WaitOrdered("add/ns/existing")
	if err := tc.create(c, tc.newObject("ns/later")); err != nil {
		t.Fatal(err)
	}
	tracker.WaitOrdered("add/ns/later")
	if n := logs.count("CustomResourceDefinition established"); n != 1 {
		t.Errorf("logged the CRD's arrival %d times, want once", n)
	}
	if n := kube.InformerCount(c.Client); n != 1 {
		t.Errorf("%d informers with the CRD, want 1", n)
	}

	// Deleted: the objects go, and the informer stops.
	deleteCRD(t, c, name)
	tracker.WaitUnordered("delete/ns/existing", "delete/ns/later")
	if got := keysOf(col); got != "" {
		t.Fatalf("after the CRD was deleted: %q, want empty", got)
	}
	waitFor(t, func() bool { return kube.InformerCount(c.Client) == 0 })

	// Back: everything the fake still holds flows in again, with no restart
	// of the collection.
	if err := tc.create(c, tc.newObject("ns/while-gone")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	tracker.Empty()
	createCRD(t, c, crd(tc.resource, tc.group, true, "v1"))
	tracker.WaitUnordered("add/ns/existing", "add/ns/later", "add/ns/while-gone")
	if !col.HasSynced() {
		t.Error("collection unsynced")
	}
}

// A collection built after its CRD is established syncs with the objects.
func TestCRDAlreadyInstalled(t *testing.T) {
	c := newFakeClient(t,
		crd("authorizationpolicies", "security.istio.io", true, "v1beta1", "v1"),
		&securityv1.AuthorizationPolicy{ObjectMeta: objectMeta("ns/allow", nil)},
	)
	stop := krttest.Stop(t)
	col := mustCollection[*securityv1.AuthorizationPolicy](t, c, kube.Filter{}, stop)
	waitSynced(t, col, stop)
	if got := keysOf(col); got != "ns/allow" {
		t.Fatalf("synced with %q, want ns/allow", got)
	}
}

// A metadata-only collection of a resource of a CRD-backed group waits
// for its CRD too.
func TestMetadataCollectionWaitsForCRD(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	c := newFakeClient(t, &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"},
		ObjectMeta: objectMeta("ns/gw", nil),
	})
	stop := krttest.Stop(t)
	col, err := kube.NewMetadataCollection(c.Client, gvr, kube.Filter{}, stop)
	if err != nil {
		t.Fatal(err)
	}
	waitSynced(t, col, stop)
	if got := keysOf(col); got != "" {
		t.Fatalf("without the CRD: %q, want empty", got)
	}
	createCRD(t, c, crd("gateways", "gateway.networking.k8s.io", true, "v1"))
	waitKeys(t, col, "ns/gw")
}

// Closing the stop channel of a collection waiting for its CRD ends the
// wait; the CRD arriving later starts nothing.
func TestCRDCollectionStoppedWhileWaiting(t *testing.T) {
	c := newFakeClient(t)
	stop := make(chan struct{})
	col := mustCollection[*networkingv1.Sidecar](t, c, kube.Filter{}, stop)
	waitSynced(t, col, stop)
	close(stop)
	time.Sleep(10 * time.Millisecond)
	createCRD(t, c, crd("sidecars", "networking.istio.io", true, "v1"))
	time.Sleep(20 * time.Millisecond)
	if n := kube.InformerCount(c.Client); n != 0 {
		t.Errorf("%d informers started for a stopped collection", n)
	}
}

// syncAllCRDKinds builds a collection of every CRD-backed kind of the
// registry on c, with its CRD established, and waits for each to sync.
func syncAllCRDKinds(t *testing.T, c *kubefake.Client, stop chan struct{}) {
	t.Helper()
	var syncers []func() bool
	add := func(resource, group string, build func() (func() bool, error)) {
		createCRD(t, c, crd(resource, group, true, "v1"))
		synced, err := build()
		if err != nil {
			t.Fatal(err)
		}
		syncers = append(syncers, synced)
	}
	istio, gw := "networking.istio.io", "gateway.networking.k8s.io"
	add("virtualservices", istio, collect[*networkingv1.VirtualService](c, stop))
	add("destinationrules", istio, collect[*networkingv1.DestinationRule](c, stop))
	add("gateways", istio, collect[*networkingv1.Gateway](c, stop))
	add("serviceentries", istio, collect[*networkingv1.ServiceEntry](c, stop))
	add("workloadentries", istio, collect[*networkingv1.WorkloadEntry](c, stop))
	add("workloadgroups", istio, collect[*networkingv1.WorkloadGroup](c, stop))
	add("sidecars", istio, collect[*networkingv1.Sidecar](c, stop))
	add("authorizationpolicies", "security.istio.io", collect[*securityv1.AuthorizationPolicy](c, stop))
	add("peerauthentications", "security.istio.io", collect[*securityv1.PeerAuthentication](c, stop))
	add("requestauthentications", "security.istio.io", collect[*securityv1.RequestAuthentication](c, stop))
	add("gatewayclasses", gw, collect[*gatewayv1.GatewayClass](c, stop))
	add("gateways", gw, collect[*gatewayv1.Gateway](c, stop))
	add("httproutes", gw, collect[*gatewayv1.HTTPRoute](c, stop))
	add("grpcroutes", gw, collect[*gatewayv1.GRPCRoute](c, stop))
	add("tcproutes", gw, collect[*gatewayv1.TCPRoute](c, stop))
	add("tlsroutes", gw, collect[*gatewayv1.TLSRoute](c, stop))
	add("referencegrants", gw, collect[*gatewayv1.ReferenceGrant](c, stop))
	for _, synced := range syncers {
		waitFor(t, synced)
	}
	// With every CRD established, each kind runs its own informer.
	waitFor(t, func() bool { return kube.InformerCount(c.Client) >= 17 })
}

func collect[T kube.Object](c *kubefake.Client, stop chan struct{}) func() (func() bool, error) {
	return func() (func() bool, error) {
		col, err := kube.NewCollection[T](c.Client, kube.Filter{}, stop)
		if err != nil {
			return nil, err
		}
		return col.HasSynced, nil
	}
}

func updateCRD(t *testing.T, c *kubefake.Client, def *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if _, err := c.Extensions().ApiextensionsV1().CustomResourceDefinitions().Update(context.Background(), def, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing the test after
// krttest.Timeout.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(krttest.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for a condition")
		}
		time.Sleep(time.Millisecond)
	}
}
