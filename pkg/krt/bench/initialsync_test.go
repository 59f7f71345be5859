package bench

import (
	"fmt"
	goruntime "runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/kube"
)

// The initial-sync world, the size reported in istio/istio#55201 (about 25
// minutes to sync in a real cluster): 30k pods and 30k EndpointSlices, plus
// the services they belong to, 10 pods and 10 slices per service, spread
// over 30 namespaces.
const (
	syncPods       = 30000
	syncSlices     = 30000
	syncPerService = 10
	syncNamespaces = 30
)

// initialSyncObjects builds the cluster's objects.
func initialSyncObjects() []runtime.Object {
	var objs []runtime.Object
	for s := range syncPods / syncPerService {
		ns := fmt.Sprintf("ns-%02d", s%syncNamespaces)
		app := fmt.Sprintf("app-%04d", s)
		objs = append(objs, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app, ResourceVersion: "1"},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": app}},
		})
		for p := range syncPerService {
			objs = append(objs, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", app, p), ResourceVersion: "1",
					Labels: map[string]string{"app": app, "pod-template-hash": "5d8f7c9b4"}},
				Status: corev1.PodStatus{PodIP: fmt.Sprintf("10.%d.%d.%d", s/250, s%250, p)},
			})
		}
	}
	for s := range syncSlices / syncPerService {
		ns := fmt.Sprintf("ns-%02d", s%syncNamespaces)
		app := fmt.Sprintf("app-%04d", s)
		for i := range syncPerService {
			objs = append(objs, &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", app, i), ResourceVersion: "1",
					Labels: map[string]string{discoveryv1.LabelServiceName: app}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("172.%d.%d.%d", 16+s/250, s%250, i)}}},
			})
		}
	}
	return objs
}

// syncWorkload is a pod or an endpoint with the services it belongs to.
type syncWorkload struct {
	krt.Named
	IP       string
	Services []string
}

// buildInitialSync reads the cluster through informers into Workloads, a
// join of pod workloads (services fetched by namespace and selector) and
// endpoint-slice workloads (their service fetched by key), and returns it.
func buildInitialSync(client *fake.Clientset, stop <-chan struct{}) (krt.Collection[syncWorkload], informers.SharedInformerFactory, error) {
	factory := informers.NewSharedInformerFactory(client, 0)
	pods, err := kube.WrapInformer[*corev1.Pod](factory.Core().V1().Pods().Informer(), stop, krt.WithName("Pods"))
	if err != nil {
		return nil, nil, err
	}
	services, err := kube.WrapInformer[*corev1.Service](factory.Core().V1().Services().Informer(), stop, krt.WithName("Services"))
	if err != nil {
		return nil, nil, err
	}
	slices, err := kube.WrapInformer[*discoveryv1.EndpointSlice](factory.Discovery().V1().EndpointSlices().Informer(), stop, krt.WithName("EndpointSlices"))
	if err != nil {
		return nil, nil, err
	}
	byNamespace := krt.NewNamespaceIndex(services)
	podWorkloads := krt.NewCollection(pods, func(ctx krt.HandlerContext, p *corev1.Pod) *syncWorkload {
		var names []string
		for _, s := range byNamespace.Fetch(ctx, p.Namespace, krt.FilterSelectsNonEmpty(p.GetLabels())) {
			names = append(names, s.Name)
		}
		return &syncWorkload{Named: krt.NewNamed(p), IP: p.Status.PodIP, Services: names}
	}, krt.WithStop(stop), krt.WithName("PodWorkloads"))
	sliceWorkloads := krt.NewManyCollection(slices, func(ctx krt.HandlerContext, s *discoveryv1.EndpointSlice) []syncWorkload {
		svc := krt.FetchOne(ctx, services, krt.FilterKey(s.Namespace+"/"+s.Labels[discoveryv1.LabelServiceName]))
		if svc == nil {
			return nil
		}
		var out []syncWorkload
		for _, e := range s.Endpoints {
			for _, addr := range e.Addresses {
				out = append(out, syncWorkload{Named: krt.Named{Namespace: s.Namespace, Name: "endpoint-" + addr}, IP: addr, Services: []string{(*svc).Name}})
			}
		}
		return out
	}, krt.WithStop(stop), krt.WithName("EndpointSliceWorkloads"))
	workloads := krt.JoinCollection([]krt.Collection[syncWorkload]{podWorkloads, sliceWorkloads}, krt.WithStop(stop), krt.WithName("Workloads"))
	return workloads, factory, nil
}

// BenchmarkInitialSync: one op starts informers over a fake clientset
// holding the cluster and waits until Workloads is synced; heap-MB is the
// heap in use once synced (after a GC), beyond the fake clientset's own.
func BenchmarkInitialSync(b *testing.B) {
	// The simple clientset's tracker keeps objects without managed fields;
	// the field-managed one would dwarf what is measured.
	client := fake.NewSimpleClientset(initialSyncObjects()...)
	b.ReportAllocs()
	var heap float64
	for b.Loop() {
		heap = runInitialSync(b, client)
	}
	b.ReportMetric(heap, "heap-MB")
}

func runInitialSync(tb testing.TB, client *fake.Clientset) float64 {
	goruntime.GC()
	var before goruntime.MemStats
	goruntime.ReadMemStats(&before)
	stop := make(chan struct{})
	workloads, factory, err := buildInitialSync(client, stop)
	if err != nil {
		tb.Fatal(err)
	}
	factory.Start(stop)
	if !workloads.WaitUntilSynced(stop) {
		tb.Fatal("never synced")
	}
	if got, want := len(workloads.List()), syncPods+syncSlices; got != want {
		tb.Fatalf("%d workloads, want %d", got, want)
	}
	goruntime.GC()
	var after goruntime.MemStats
	goruntime.ReadMemStats(&after)
	close(stop)
	factory.Shutdown()
	return float64(after.HeapInuse-before.HeapInuse) / (1 << 20)
}
