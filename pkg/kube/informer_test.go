package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
)

// TestMain turns krt's checks on and fails the package if any goroutine,
// informers' included, outlives the tests.
func TestMain(m *testing.M) {
	krttest.Main(m)
}

// newFactory returns an informer factory and a stop channel for it; at the
// end of the test, stop is closed and then the factory shut down.
func newFactory(t *testing.T, client *fake.Clientset) (informers.SharedInformerFactory, chan struct{}) {
	factory := informers.NewSharedInformerFactory(client, 0)
	stop := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
	})
	return factory, stop
}

// informerRig drives an informer collection through a fake clientset: a
// narrow unit test of the adapter. The API-server paths are tested against
// a real kube-apiserver elsewhere.
type informerRig struct {
	krt.Collection[*corev1.ConfigMap]
	client *fake.Clientset
	t      *testing.T
}

func (r *informerRig) CreateObject(key string) {
	ns, name, _ := strings.Cut(key, "/")
	_, err := r.client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}, metav1.CreateOptions{})
	if err != nil {
		r.t.Errorf("create %s: %v", key, err)
	}
}

func (r *informerRig) ReplaceKey(oldKey, newKey string) {
	ns, name, _ := strings.Cut(oldKey, "/")
	if err := r.client.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		r.t.Errorf("delete %s: %v", oldKey, err)
	}
	r.CreateObject(newKey)
}

func TestInformerConformance(t *testing.T) {
	krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[*corev1.ConfigMap] {
		client := fake.NewClientset()
		factory, stop := newFactory(t, client)
		c, err := kube.WrapInformer[*corev1.ConfigMap](factory.Core().V1().ConfigMaps().Informer(), stop, krt.WithMetadata(md))
		if err != nil {
			t.Fatal(err)
		}
		factory.Start(stop)
		return &informerRig{Collection: c, client: client, t: t}
	})
}

// A service's selector is visible to the selector filters, and a pod's
// labels to the label filters, with no wrapper types.
func TestInformerObjectsWorkWithSelectorFilters(t *testing.T) {
	client := fake.NewClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "1"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", ResourceVersion: "1"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "db"}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", Labels: map[string]string{"app": "web"}, ResourceVersion: "1"}},
	)
	factory, stop := newFactory(t, client)
	services, err := kube.WrapInformer[*corev1.Service](factory.Core().V1().Services().Informer(), stop)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := kube.WrapInformer[*corev1.Pod](factory.Core().V1().Pods().Informer(), stop)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(stop)
	type podServices struct {
		krt.Named
		Services []string
	}
	out := krt.NewCollection(pods, func(ctx krt.HandlerContext, p *corev1.Pod) *podServices {
		res := &podServices{Named: krt.NewNamed(p)}
		for _, s := range krt.Fetch(ctx, services, krt.FilterSelectsNonEmpty(p.GetLabels())) {
			res.Services = append(res.Services, s.Name)
		}
		return res
	}, krt.WithStop(stop))
	if !out.WaitUntilSynced(stop) {
		t.Fatal("never synced")
	}
	got := out.GetKey("ns/web-1")
	if got == nil || len(got.Services) != 1 || got.Services[0] != "web" {
		t.Fatalf("services of ns/web-1 = %v, want [web]", got)
	}

	// The db service starts selecting the pod.
	tracker := krttest.NewTracker[podServices](t)
	out.RegisterBatch(tracker.TrackBatch, false)
	db, _ := client.CoreV1().Services("ns").Get(context.Background(), "db", metav1.GetOptions{})
	db = db.DeepCopy()
	db.Spec.Selector = map[string]string{"app": "web"}
	db.ResourceVersion = "2"
	if _, err := client.CoreV1().Services("ns").Update(context.Background(), db, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tracker.WaitOrdered("update/ns/web-1")
	if got := out.GetKey("ns/web-1").Services; len(got) != 2 {
		t.Fatalf("services after the selector change = %v, want [db web]", got)
	}
}

// An update that keeps the ResourceVersion (a resync) produces no event.
func TestInformerIgnoresSameResourceVersion(t *testing.T) {
	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "5"}})
	factory, stop := newFactory(t, client)
	c, err := kube.WrapInformer[*corev1.ConfigMap](factory.Core().V1().ConfigMaps().Informer(), stop)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(stop)
	c.WaitUntilSynced(stop)
	tracker := krttest.NewTracker[*corev1.ConfigMap](t)
	c.RegisterBatch(tracker.TrackBatch, false)

	same := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "5"}, Data: map[string]string{"x": "y"}}
	if _, err := client.CoreV1().ConfigMaps("ns").Update(context.Background(), same, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	next := same.DeepCopy()
	next.ResourceVersion = "6"
	if _, err := client.CoreV1().ConfigMaps("ns").Update(context.Background(), next, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tracker.WaitOrdered("update/ns/a")
	time.Sleep(10 * time.Millisecond)
	tracker.Empty()
	if got := (*c.GetKey("ns/a")).ResourceVersion; got != "6" {
		t.Errorf("ResourceVersion = %s, want 6", got)
	}
}
