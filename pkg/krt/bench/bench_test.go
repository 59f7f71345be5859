package bench

import (
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/kube"
)

// world is one running copy of the benchmark: sources, informers and one
// controller under test, reporting Workload events to a waiter.
type world struct {
	pods          []*corev1.Pod
	services      []*corev1.Service
	podSource     *Source[*corev1.Pod]
	serviceSource *Source[*corev1.Service]
	podInformer   cache.SharedIndexInformer
	svcInformer   cache.SharedIndexInformer
	waiter        waiter
	computed      atomic.Int64 // transformations run or pods reconciled
	generation    int

	stop    chan struct{}
	running sync.WaitGroup
}

func newWorld(tb testing.TB) *world {
	w := &world{pods: NewPods(), services: NewServices(), stop: make(chan struct{})}
	w.podSource = NewSource(w.pods, &corev1.PodList{})
	w.serviceSource = NewSource(w.services, &corev1.ServiceList{})
	w.podInformer = NewInformer(w.podSource, &corev1.Pod{})
	w.svcInformer = NewInformer(w.serviceSource, &corev1.Service{})
	tb.Cleanup(func() {
		close(w.stop)
		w.running.Wait()
	})
	return w
}

func (w *world) startInformers(tb testing.TB) {
	w.running.Go(func() { w.podInformer.Run(w.stop) })
	w.running.Go(func() { w.svcInformer.Run(w.stop) })
	if !cache.WaitForCacheSync(w.stop, w.podInformer.HasSynced, w.svcInformer.HasSynced) {
		tb.Fatal("informers never synced")
	}
}

// startKrt runs the krt controller and reports its events.
func (w *world) startKrt(tb testing.TB, filter SelectorFilter, record func(Event)) krt.Collection[Workload] {
	pods, err := kube.WrapInformer[*corev1.Pod](w.podInformer, w.stop, krt.WithName("Pods"))
	if err != nil {
		tb.Fatal(err)
	}
	services, err := kube.WrapInformer[*corev1.Service](w.svcInformer, w.stop, krt.WithName("Services"))
	if err != nil {
		tb.Fatal(err)
	}
	w.startInformers(tb)
	workloads := NewKrtWorkloads(pods, services, filter, &w.computed, w.stop)
	if !workloads.WaitUntilSynced(w.stop) {
		tb.Fatal("workloads never synced")
	}
	reg := workloads.RegisterBatch(func(events []krt.Event[Workload]) {
		for _, e := range events {
			if record != nil {
				record(Event{Type: e.Event, Workload: e.Latest()})
			}
		}
		w.waiter.observe(len(events))
	}, false)
	reg.WaitUntilSynced(w.stop)
	return workloads
}

// startLegacy runs the hand-written controller and reports its events.
func (w *world) startLegacy(tb testing.TB, record func(Event)) *Legacy {
	l, err := NewLegacy(w.podInformer, w.svcInformer, func(e Event) {
		if record != nil {
			record(e)
		}
		w.waiter.observe(1)
	})
	if err != nil {
		tb.Fatal(err)
	}
	done := w.waiter.expect(Pods) // the initial Workload of every pod
	w.startInformers(tb)
	w.running.Go(func() { l.Run(w.stop) })
	<-done
	return l
}

// startInput only counts the pod updates the informer delivers: the cost of
// the input itself.
func (w *world) startInput(tb testing.TB) {
	_, err := w.podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ any) { w.waiter.observe(1) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	w.startInformers(tb)
}

// updatePodIPs gives every pod a new IP and waits for n events.
func (w *world) updatePodIPs(n int) {
	w.generation++
	done := w.waiter.expect(n)
	for i, p := range w.pods {
		next := *p
		next.Status.PodIP = PodIP(i, w.generation)
		next.ResourceVersion = strconv.Itoa(w.generation + 1)
		w.pods[i] = &next
		w.podSource.Update(&next)
	}
	<-done
}

// moveService points svc-00 (ns-0) at app-02, or back at app-00, and waits
// for the 40 workloads whose services change.
func (w *world) moveService() {
	w.generation++
	done := w.waiter.expect(2 * Pods / Services)
	next := *w.services[0]
	app := App(2)
	if next.Spec.Selector["app"] == app {
		app = App(0)
	}
	next.Spec.Selector = map[string]string{"app": app}
	next.ResourceVersion = strconv.Itoa(w.generation + 1)
	w.services[0] = &next
	w.serviceSource.Update(&next)
	<-done
}

// waiter lets a benchmark operation wait for the events it caused.
type waiter struct {
	mu   sync.Mutex
	seen int
	want int
	done chan struct{}
}

func (w *waiter) expect(n int) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen, w.want, w.done = 0, n, make(chan struct{})
	return w.done
}

func (w *waiter) observe(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen += n
	if w.done != nil && w.seen >= w.want {
		close(w.done)
		w.done = nil
	}
}

// BenchmarkControllers: one op updates the IPs of all 1000 pods and waits
// for the 1000 Workload events. "input" is the informer alone delivering
// the 1000 updates.
func BenchmarkControllers(b *testing.B) {
	b.Run("krt", func(b *testing.B) {
		w := newWorld(b)
		w.startKrt(b, ByIndexAndSelector, nil)
		b.ReportAllocs()
		for b.Loop() {
			w.updatePodIPs(Pods)
		}
	})
	b.Run("legacy", func(b *testing.B) {
		w := newWorld(b)
		w.startLegacy(b, nil)
		b.ReportAllocs()
		for b.Loop() {
			w.updatePodIPs(Pods)
		}
	})
	b.Run("input", func(b *testing.B) {
		w := newWorld(b)
		w.startInput(b)
		b.ReportAllocs()
		for b.Loop() {
			w.updatePodIPs(Pods)
		}
	})
}

// BenchmarkServiceChurn: one op changes the selector of one service and
// waits for the 40 workloads it moves between; recomputations/op counts
// the pods computed again. With the selector indexed that is the 40 pods
// the old or new selector matches; with the namespace index alone, all 500
// pods of the namespace.
func BenchmarkServiceChurn(b *testing.B) {
	for _, tc := range []struct {
		name   string
		filter SelectorFilter
	}{
		{"krt", ByIndexAndSelector},
		{"krt-namespace-index-only", ByIndexOnly},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := newWorld(b)
			w.startKrt(b, tc.filter, nil)
			before := w.computed.Load()
			b.ReportAllocs()
			for b.Loop() {
				w.moveService()
			}
			b.ReportMetric(float64(w.computed.Load()-before)/float64(b.N), "recomputations/op")
		})
	}
	b.Run("legacy", func(b *testing.B) {
		w := newWorld(b)
		l := w.startLegacy(b, nil)
		before := l.Reconciles.Load()
		b.ReportAllocs()
		for b.Loop() {
			w.moveService()
		}
		b.ReportMetric(float64(l.Reconciles.Load()-before)/float64(b.N), "recomputations/op")
	})
}

// The two controllers compared by the benchmarks compute the same thing.
func TestKrtAndLegacyAgree(t *testing.T) {
	type state struct {
		mu        sync.Mutex
		workloads map[string]Workload
	}
	record := func(s *state) func(Event) {
		return func(e Event) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if e.Type == krt.EventDelete {
				delete(s.workloads, e.Workload.ResourceName())
				return
			}
			s.workloads[e.Workload.ResourceName()] = e.Workload
		}
	}
	snapshot := func(s *state) map[string]Workload {
		s.mu.Lock()
		defer s.mu.Unlock()
		return maps.Clone(s.workloads)
	}

	krtState := &state{workloads: map[string]Workload{}}
	kw := newWorld(t)
	workloads := kw.startKrt(t, ByIndexAndSelector, nil)
	for _, wl := range workloads.List() {
		krtState.workloads[wl.ResourceName()] = wl
	}
	workloads.RegisterBatch(func(events []krt.Event[Workload]) {
		for _, e := range events {
			record(krtState)(Event{Type: e.Event, Workload: e.Latest()})
		}
	}, false)
	legacyState := &state{workloads: map[string]Workload{}}
	lw := newWorld(t)
	lw.startLegacy(t, record(legacyState))

	for _, w := range []*world{kw, lw} {
		w.updatePodIPs(Pods)
		w.moveService()
	}
	// The recording handlers may trail the waiters by a batch.
	deadline := time.Now().Add(10 * time.Second)
	for !maps.EqualFunc(snapshot(krtState), snapshot(legacyState), Workload.Equals) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got, want := snapshot(krtState), snapshot(legacyState)
	if len(got) != Pods || !maps.EqualFunc(got, want, Workload.Equals) {
		t.Fatalf("krt has %d workloads, legacy %d, and they differ", len(got), len(want))
	}
	if moved := got["ns-0/pod-0002"]; len(moved.ServiceNames) != 2 {
		t.Fatalf("pod-0002 services = %v, want svc-00 and svc-02", moved.ServiceNames)
	}
}
