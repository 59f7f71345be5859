package kube_test

import (
	"context"
	"strings"
	"testing"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
)

// collectionRig drives a collection built by NewCollection through the
// fake clientset that serves its kind.
type collectionRig[T any] struct {
	krt.Collection[T]
	t      *testing.T
	create func(ns, name string) error
	delete func(ns, name string) error
}

func (r *collectionRig[T]) CreateObject(key string) {
	ns, name, _ := strings.Cut(key, "/")
	if err := r.create(ns, name); err != nil {
		r.t.Errorf("create %s: %v", key, err)
	}
}

func (r *collectionRig[T]) ReplaceKey(oldKey, newKey string) {
	ns, name, _ := strings.Cut(oldKey, "/")
	if err := r.delete(ns, name); err != nil {
		r.t.Errorf("delete %s: %v", oldKey, err)
	}
	r.CreateObject(newKey)
}

func TestCollectionConformance(t *testing.T) {
	ctx := context.Background()
	t.Run("ConfigMap", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[*corev1.ConfigMap] {
			c := newFakeClient(t)
			stop := krttest.Stop(t)
			col, err := kube.NewCollection[*corev1.ConfigMap](c.Client, kube.Filter{}, stop, krt.WithMetadata(md))
			if err != nil {
				t.Fatal(err)
			}
			configMaps := c.Kube().CoreV1()
			return &collectionRig[*corev1.ConfigMap]{
				Collection: col,
				t:          t,
				create: func(ns, name string) error {
					_, err := configMaps.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.CreateOptions{})
					return err
				},
				delete: func(ns, name string) error {
					return configMaps.ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
				},
			}
		})
	})
	t.Run("VirtualService", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[*networkingv1.VirtualService] {
			c := newFakeClient(t, crd("virtualservices", "networking.istio.io", true, "v1alpha3", "v1beta1", "v1"))
			stop := krttest.Stop(t)
			col, err := kube.NewCollection[*networkingv1.VirtualService](c.Client, kube.Filter{}, stop, krt.WithMetadata(md))
			if err != nil {
				t.Fatal(err)
			}
			vs := c.Istio().NetworkingV1()
			return &collectionRig[*networkingv1.VirtualService]{
				Collection: col,
				t:          t,
				create: func(ns, name string) error {
					_, err := vs.VirtualServices(ns).Create(ctx, &networkingv1.VirtualService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.CreateOptions{})
					return err
				},
				delete: func(ns, name string) error {
					return vs.VirtualServices(ns).Delete(ctx, name, metav1.DeleteOptions{})
				},
			}
		})
	})
}

// Objects present before the collection is built are its initial state,
// and the collection is named after its kind and filter.
func TestCollectionInitialStateAndName(t *testing.T) {
	c := newFakeClient(t,
		&corev1.Pod{ObjectMeta: objectMeta("a/p1", nil)},
		&corev1.Pod{ObjectMeta: objectMeta("b/p2", nil)},
		&corev1.Node{ObjectMeta: objectMeta("node-1", nil)},
	)
	stop := krttest.Stop(t)
	pods := mustCollection[*corev1.Pod](t, c, kube.Filter{}, stop)
	nodes := mustCollection[*corev1.Node](t, c, kube.Filter{}, stop)
	waitSynced(t, pods, stop)
	waitSynced(t, nodes, stop)
	if got := keysOf(pods); got != "a/p1 b/p2" {
		t.Errorf("pods = %q, want %q", got, "a/p1 b/p2")
	}
	if got := keysOf(nodes); got != "node-1" {
		t.Errorf("nodes = %q, want node-1 (cluster-scoped: no namespace in the key)", got)
	}

	dump := krt.NewDebugHandler()
	named, err := kube.NewCollection[*corev1.Pod](c.Client, kube.Filter{Namespace: "a"}, stop, krt.WithDebugging(dump))
	if err != nil {
		t.Fatal(err)
	}
	waitSynced(t, named, stop)
	if got := debugNames(t, dump); !strings.Contains(got, "kube/v1/Pod{ns=a}") {
		t.Errorf("debug dump names %s, want kube/v1/Pod{ns=a}", got)
	}
}

// Every kind of the registry can be read through a fake client: its typed
// client, scope and resource name are consistent.
func TestEveryRegisteredKindSyncs(t *testing.T) {
	if got := len(kube.SortedKinds()); got != 24 {
		t.Errorf("registry has %d kinds: %v", got, kube.SortedKinds())
	}
	c := newFakeClient(t)
	stop := krttest.Stop(t)
	for _, col := range []interface {
		WaitUntilSynced(<-chan struct{}) bool
	}{
		mustCollection[*corev1.Pod](t, c, kube.Filter{}, stop),
		mustCollection[*corev1.Service](t, c, kube.Filter{}, stop),
		mustCollection[*corev1.Namespace](t, c, kube.Filter{}, stop),
		mustCollection[*corev1.Secret](t, c, kube.Filter{}, stop),
		mustCollection[*corev1.ConfigMap](t, c, kube.Filter{}, stop),
		mustCollection[*corev1.Node](t, c, kube.Filter{}, stop),
		mustCollection[*discoveryv1.EndpointSlice](t, c, kube.Filter{}, stop),
	} {
		if !col.WaitUntilSynced(stop) {
			t.Fatal("never synced")
		}
	}
	syncAllCRDKinds(t, c, stop)
}

func TestNewCollectionErrors(t *testing.T) {
	c := newFakeClient(t)
	stop := krttest.Stop(t)
	cases := []struct {
		name string
		make func() error
		want string
	}{
		{"unknown kind", func() error {
			_, err := kube.NewCollection[*appsv1.Deployment](c.Client, kube.Filter{}, stop)
			return err
		}, "*v1.Deployment: not a supported kind"},
		{"metadata type", func() error {
			_, err := kube.NewCollection[*metav1.PartialObjectMetadata](c.Client, kube.Filter{}, stop)
			return err
		}, "NewMetadataCollection"},
		{"no stop", func() error {
			_, err := kube.NewCollection[*corev1.Pod](c.Client, kube.Filter{}, nil)
			return err
		}, "no stop channel"},
		{"no client", func() error {
			_, err := kube.NewCollection[*corev1.Pod](nil, kube.Filter{}, stop)
			return err
		}, "no client"},
		{"namespace on a cluster-scoped kind", func() error {
			_, err := kube.NewCollection[*corev1.Node](c.Client, kube.Filter{Namespace: "a"}, stop)
			return err
		}, "v1 Node is cluster-scoped"},
		{"bad label selector", func() error {
			_, err := kube.NewCollection[*corev1.Pod](c.Client, kube.Filter{Namespace: "a", LabelSelector: "app in (web"}, stop)
			return err
		}, `label selector for v1 Pod in "a"`},
		{"bad field selector", func() error {
			_, err := kube.NewCollection[*corev1.Pod](c.Client, kube.Filter{FieldSelector: "spec.nodeName"}, stop)
			return err
		}, `field selector for v1 Pod in ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.make()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A client without the clientset a kind needs refuses it, clearly.
func TestCollectionWithoutItsClientset(t *testing.T) {
	full := newFakeClient(t)
	c := kube.NewClientFromClientsets(kube.Clientsets{Kube: full.KubeFake})
	t.Cleanup(c.Shutdown)
	withIstio := kube.NewClientFromClientsets(kube.Clientsets{Kube: full.KubeFake, Istio: full.Istio()})
	t.Cleanup(withIstio.Shutdown)
	stop := krttest.Stop(t) // closed before the clients shut down
	if _, err := kube.NewCollection[*networkingv1.VirtualService](c, kube.Filter{}, stop); err == nil || !strings.Contains(err.Error(), "no Istio clientset") {
		t.Errorf("VirtualService without an Istio clientset: %v", err)
	}
	if _, err := kube.NewCollection[*networkingv1.VirtualService](withIstio, kube.Filter{}, stop); err == nil || !strings.Contains(err.Error(), "no apiextensions clientset") {
		t.Errorf("VirtualService without an apiextensions clientset: %v", err)
	}
	pods, err := kube.NewCollection[*corev1.Pod](c, kube.Filter{}, stop)
	if err != nil {
		t.Fatal(err)
	}
	waitSynced(t, pods, stop)
}

// After Shutdown, new collections fail and existing ones keep their state.
func TestClientShutdown(t *testing.T) {
	c := newFakeClient(t, &corev1.ConfigMap{ObjectMeta: objectMeta("a/one", nil)})
	stop := krttest.Stop(t)
	cms := mustCollection[*corev1.ConfigMap](t, c, kube.Filter{}, stop)
	waitSynced(t, cms, stop)
	c.Shutdown()
	c.Shutdown() // idempotent
	if got := keysOf(cms); got != "a/one" {
		t.Errorf("after Shutdown: %q, want a/one", got)
	}
	if _, err := kube.NewCollection[*corev1.ConfigMap](c.Client, kube.Filter{}, stop); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Errorf("NewCollection after Shutdown: %v", err)
	}
	if _, err := kube.NewCollection[*networkingv1.VirtualService](c.Client, kube.Filter{}, stop); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Errorf("NewCollection of a CRD kind after Shutdown: %v", err)
	}
}

// kubefake puts each object in the fake that serves it, under the right
// resource (client-go's fakes would file a Gateway under "gatewaies").
func TestFakeClientRoutesObjects(t *testing.T) {
	c := newFakeClient(t,
		&corev1.Pod{ObjectMeta: objectMeta("ns/pod", nil)},
		&networkingv1.Gateway{ObjectMeta: objectMeta("ns/istio-gw", nil)},
		&gatewayv1.Gateway{ObjectMeta: objectMeta("ns/k8s-gw", nil)},
		crd("gateways", "networking.istio.io", true, "v1"),
		crd("gateways", "gateway.networking.k8s.io", true, "v1"),
		&metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: objectMeta("ns/deploy", nil),
		},
	)
	stop := krttest.Stop(t)
	pods := mustCollection[*corev1.Pod](t, c, kube.Filter{}, stop)
	istioGateways := mustCollection[*networkingv1.Gateway](t, c, kube.Filter{}, stop)
	gateways := mustCollection[*gatewayv1.Gateway](t, c, kube.Filter{}, stop)
	deployments, err := kube.NewMetadataCollection(c.Client, appsv1.SchemeGroupVersion.WithResource("deployments"), kube.Filter{}, stop)
	if err != nil {
		t.Fatal(err)
	}
	waitKeys(t, pods, "ns/pod")
	waitKeys(t, istioGateways, "ns/istio-gw")
	waitKeys(t, gateways, "ns/k8s-gw")
	waitKeys(t, deployments, "ns/deploy")
}
