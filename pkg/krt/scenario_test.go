package krt_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// pod, service and workload are the seed's world in plain types.
type pod struct {
	krt.Named
	Labels map[string]string
	IP     string
}

func (p pod) GetLabels() map[string]string { return p.Labels }

type service struct {
	krt.Named
	Selector map[string]string
}

func (s service) GetLabelSelector() map[string]string { return s.Selector }

type workload struct {
	krt.Named
	IP       string
	Services []string
}

func (w workload) Equals(o workload) bool {
	return w.Named == o.Named && w.IP == o.IP && slices.Equal(w.Services, o.Services)
}

// world is 1000 pods in 2 namespaces with 25 app labels and 50 services,
// one per (namespace, app), so each pod is selected by exactly one service.
type world struct {
	pods      krt.StaticCollection[pod]
	services  krt.StaticCollection[service]
	workloads krt.Collection[workload]
	computed  atomic.Int64
}

const (
	worldPods = 1000
	worldApps = 25
)

func appOf(i int) string { return fmt.Sprintf("app-%02d", i%worldApps) }
func nsOf(i int) string  { return fmt.Sprintf("ns-%d", i%2) }

func newWorld(t *testing.T, selectorFilter func(labels map[string]string) krt.FetchOption) *world {
	stop := krttest.Stop(t)
	w := &world{}
	var pods []pod
	for i := range worldPods {
		pods = append(pods, pod{
			Named:  krt.Named{Namespace: nsOf(i), Name: fmt.Sprintf("pod-%04d", i)},
			Labels: map[string]string{"app": appOf(i)},
			IP:     fmt.Sprintf("10.0.%d.%d", i/250, i%250),
		})
	}
	var services []service
	for i := range 2 * worldApps {
		services = append(services, service{
			Named:    krt.Named{Namespace: nsOf(i), Name: fmt.Sprintf("svc-%02d", i)},
			Selector: map[string]string{"app": appOf(i)},
		})
	}
	w.pods = krt.NewStaticCollection(nil, pods, krt.WithStop(stop), krt.WithName("Pods"))
	w.services = krt.NewStaticCollection(nil, services, krt.WithStop(stop), krt.WithName("Services"))
	byNamespace := krt.NewNamespaceIndex[service](w.services)
	w.workloads = krt.NewCollection[pod, workload](w.pods, func(ctx krt.HandlerContext, p pod) *workload {
		w.computed.Add(1)
		var opts []krt.FetchOption
		if selectorFilter != nil {
			opts = append(opts, selectorFilter(p.Labels))
		}
		var names []string
		for _, s := range byNamespace.Fetch(ctx, p.Namespace, opts...) {
			if selectorFilter == nil && !selects(s.Selector, p.Labels) {
				continue // the filter done by hand: invisible to krt
			}
			names = append(names, s.Name)
		}
		return &workload{Named: p.Named, IP: p.IP, Services: names}
	}, krt.WithStop(stop), krt.WithName("Workloads"), countsRuns)
	if !w.workloads.WaitUntilSynced(stop) {
		t.Fatal("workloads never synced")
	}
	return w
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Scenario (a): a selector change recomputes exactly the workloads whose
// pods matched the old or the new selector.
func TestSelectorChangeRecomputesOnlyMatchedPods(t *testing.T) {
	for _, tc := range []struct {
		name   string
		filter func(map[string]string) krt.FetchOption
		want   int
		// Dependency lists checked against the change: with the selector
		// index, the lists of pods labelled app-00 or app-02 (one per
		// namespace); with the namespace index alone, the one list all pods
		// of ns-0 share.
		checks uint64
	}{
		{"FilterSelectsNonEmpty", krt.FilterSelectsNonEmpty, 40, 4},
		{"FilterSelects", krt.FilterSelects, 40, 4},
		// Without a selector filter only the namespace index is known to
		// krt: every pod of the namespace is recomputed.
		{"namespace index alone", nil, 500, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.filter)
			tracker := krttest.NewTracker[workload](t)
			reg := w.workloads.RegisterBatch(tracker.TrackBatch, false)
			defer reg.UnregisterHandler()
			if got := w.computed.Load(); got != worldPods {
				t.Fatalf("initial computations = %d, want %d", got, worldPods)
			}
			w.computed.Store(0)

			// svc-00 (ns-0) moves from app-00 to app-02: 20 pods lose it,
			// 20 pods gain it.
			svc := *w.services.GetKey("ns-0/svc-00")
			svc.Selector = map[string]string{"app": appOf(2)}
			w.services.UpdateObject(svc)

			var want []string
			for i := range worldPods {
				if nsOf(i) == "ns-0" && (appOf(i) == appOf(0) || appOf(i) == appOf(2)) {
					want = append(want, fmt.Sprintf("update/ns-0/pod-%04d", i))
				}
			}
			tracker.WaitUnordered(want...)
			// A fence: a later, unrelated change must be the next event.
			fence := *w.pods.GetKey("ns-1/pod-0001")
			fence.IP = "192.0.2.1"
			w.pods.UpdateObject(fence)
			tracker.WaitOrdered("update/ns-1/pod-0001")

			if got := int(w.computed.Load()) - 1; got != tc.want {
				t.Errorf("recomputations for the selector change = %d, want %d", got, tc.want)
			}
			if got := krt.DependencyChecks(w.workloads); got != tc.checks {
				t.Errorf("dependency lists checked = %d, want %d", got, tc.checks)
			}
			moved := w.workloads.GetKey("ns-0/pod-0002")
			if moved == nil || !slices.Equal(moved.Services, []string{"svc-00", "svc-02"}) {
				t.Errorf("pod-0002 services = %v, want [svc-00 svc-02]", moved)
			}
			left := w.workloads.GetKey("ns-0/pod-0000")
			if left == nil || len(left.Services) != 0 {
				t.Errorf("pod-0000 services = %v, want none", left)
			}
		})
	}
}

// Identical dependency lists are stored once: pods of one namespace with one
// app label read the same thing.
func TestIdenticalDependencyListsAreShared(t *testing.T) {
	w := newWorld(t, krt.FilterSelectsNonEmpty)
	// One list per (namespace, app): 2 * 25.
	if got := krt.DependencyLists(w.workloads); got != 2*worldApps {
		t.Errorf("dependency lists = %d, want %d for %d inputs", got, 2*worldApps, worldPods)
	}
}

// Scenario (b): an equal result stops the change from travelling further.
func TestEqualSuppressesDownstreamEvents(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []object{{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"x": "1"}}},
		krt.WithStop(stop))
	var second, third atomic.Int64
	// The first level drops the labels, so a label change is invisible to it.
	first := krt.NewCollection[object, derivedObject](src, func(ctx krt.HandlerContext, o object) *derivedObject {
		return &derivedObject{Named: o.Named}
	}, krt.WithStop(stop))
	secondC := krt.NewCollection(first, func(ctx krt.HandlerContext, o derivedObject) *derivedObject {
		second.Add(1)
		return &derivedObject{Named: o.Named, Source: "second"}
	}, krt.WithStop(stop), countsRuns)
	thirdC := krt.NewCollection(secondC, func(ctx krt.HandlerContext, o derivedObject) *derivedObject {
		third.Add(1)
		return &derivedObject{Named: o.Named, Source: "third"}
	}, krt.WithStop(stop), countsRuns)
	thirdC.WaitUntilSynced(stop)
	tracker := krttest.NewTracker[derivedObject](t)
	thirdC.RegisterBatch(tracker.TrackBatch, false).WaitUntilSynced(stop)

	src.UpdateObject(object{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"x": "2"}})
	// Fence: a new object flows through all three levels after it.
	src.UpdateObject(object{Named: krt.Named{Namespace: "ns", Name: "fence"}})
	tracker.WaitOrdered("add/ns/fence")
	if second.Load() != 2 || third.Load() != 2 {
		t.Errorf("downstream transformations ran %d and %d times, want 2 and 2 (initial + fence)", second.Load(), third.Load())
	}
}

// keyedByLabel is keyed by its label, so changing the label changes its key.
type keyedByLabel struct {
	Key string
}

func (k keyedByLabel) ResourceName() string { return k.Key }

// Scenario (c): a key change is a DELETE of the old key and an ADD of the new.
func TestKeyChangeIsDeleteAndAdd(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []object{{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"k": "old"}}},
		krt.WithStop(stop))
	c := krt.NewCollection[object, keyedByLabel](src, func(ctx krt.HandlerContext, o object) *keyedByLabel {
		return &keyedByLabel{Key: o.Labels["k"]}
	}, krt.WithStop(stop))
	tracker := krttest.NewTracker[keyedByLabel](t)
	c.Register(tracker.Track)
	tracker.WaitOrdered("add/old")

	src.UpdateObject(object{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"k": "new"}})
	tracker.WaitUnordered("add/new", "delete/old")
	if c.GetKey("old") != nil || c.GetKey("new") == nil {
		t.Errorf("after the key change: old=%v new=%v", c.GetKey("old"), c.GetKey("new"))
	}

	s := krt.NewStatic(&keyedByLabel{Key: "one"}, true, krt.WithStop(stop))
	st := krttest.NewTracker[keyedByLabel](t)
	s.Register(st.Track)
	st.WaitOrdered("add/one")
	s.Set(&keyedByLabel{Key: "two"})
	st.WaitOrdered("delete/one", "add/two")
	s.Set(nil)
	st.WaitOrdered("delete/two")
}

type embedsProto struct {
	*wrapperspb.StringValue
}

type embedsProtoWithEquals struct {
	*wrapperspb.StringValue
	Name string
}

func (e embedsProtoWithEquals) ResourceName() string { return e.Name }
func (e embedsProtoWithEquals) Equals(o embedsProtoWithEquals) bool {
	return e.Name == o.Name && e.GetValue() == o.GetValue()
}

func (e embedsProto) ResourceName() string { return "x" }

// Scenario (d): a struct embedding a protobuf message panics with a clear
// message; one with an Equals method does not.
func TestEmbeddedProtoNeedsEquals(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []object{{Named: krt.Named{Name: "a"}}}, krt.WithStop(stop))

	func() {
		defer func() {
			p := recover()
			msg := fmt.Sprint(p)
			if p == nil || !strings.Contains(msg, "krt_test.embedsProto") || !strings.Contains(msg, "Equals") {
				t.Errorf("panic = %v, want one naming krt_test.embedsProto and Equals", p)
			}
		}()
		krt.NewCollection[object, embedsProto](src, func(krt.HandlerContext, object) *embedsProto { return nil }, krt.WithStop(stop))
	}()

	c := krt.NewCollection[object, embedsProtoWithEquals](src, func(_ krt.HandlerContext, o object) *embedsProtoWithEquals {
		return &embedsProtoWithEquals{StringValue: wrapperspb.String("v"), Name: o.Name}
	}, krt.WithStop(stop))
	c.WaitUntilSynced(stop)
	if c.GetKey("a") == nil {
		t.Fatal("collection with Equals produced nothing")
	}
}

func TestEqual(t *testing.T) {
	type plain struct {
		A int
		B []string
	}
	for _, tc := range []struct {
		name string
		eq   func() bool
		want bool
	}{
		{"Equals method", func() bool { return krt.Equal(workload{IP: "1", Services: []string{}}, workload{IP: "1"}) }, true},
		{"Equals method differs", func() bool { return krt.Equal(workload{IP: "1"}, workload{IP: "2"}) }, false},
		{"proto equal", func() bool { return krt.Equal(wrapperspb.String("a"), wrapperspb.String("a")) }, true},
		{"proto differs", func() bool { return krt.Equal(wrapperspb.String("a"), wrapperspb.String("b")) }, false},
		{"DeepEqual", func() bool { return krt.Equal(plain{1, []string{"x"}}, plain{1, []string{"x"}}) }, true},
		{"DeepEqual differs", func() bool { return krt.Equal(plain{1, nil}, plain{2, nil}) }, false},
		{"pointers compare their values", func() bool { return krt.Equal(&plain{A: 1}, &plain{A: 1}) }, true},
		{"interface holding protos", func() bool { return krt.Equal[any](wrapperspb.String("a"), wrapperspb.String("a")) }, true},
		{"status pairs compare each part by its Equals", func() bool {
			sized, fresh := wrapperspb.String("a"), wrapperspb.String("a")
			_ = proto.Size(sized) // fills internals reflection would see
			return krt.Equal(krt.ObjectWithStatus[specHolder, string]{Obj: specHolder{sized}, Status: "ok"},
				krt.ObjectWithStatus[specHolder, string]{Obj: specHolder{fresh}, Status: "ok"})
		}, true},
		{"status pairs differ by status", func() bool {
			return krt.Equal(krt.ObjectWithStatus[specHolder, string]{Obj: specHolder{wrapperspb.String("a")}, Status: "ok"},
				krt.ObjectWithStatus[specHolder, string]{Obj: specHolder{wrapperspb.String("a")}, Status: "bad"})
		}, false},
	} {
		if got := tc.eq(); got != tc.want {
			t.Errorf("%s: Equal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// specHolder holds a protobuf message behind an interface, as config.Config
// holds its spec, and compares it with proto.Equal.
type specHolder struct{ Spec proto.Message }

func (h specHolder) Equals(o specHolder) bool { return proto.Equal(h.Spec, o.Spec) }

// Scenario (e): sync travels down a chain of three derived collections, and
// each level has its initial state when it says it is synced.
func TestSyncChain(t *testing.T) {
	stop := krttest.Stop(t)
	gate := krttest.NewSyncGate()
	var objs []object
	for i := range 100 {
		objs = append(objs, object{Named: krt.Named{Namespace: "ns", Name: fmt.Sprint(i)}})
	}
	src := krt.NewStaticCollection(gate, objs, krt.WithStop(stop))
	levels := []krt.Collection[derivedObject]{}
	var parent krt.Collection[derivedObject] = krt.NewCollection[object, derivedObject](src, func(_ krt.HandlerContext, o object) *derivedObject {
		return &derivedObject{Named: o.Named, Source: "1"}
	}, krt.WithStop(stop), krt.WithName("level1"))
	levels = append(levels, parent)
	for i := 2; i <= 3; i++ {
		parent = krt.NewCollection(parent, func(_ krt.HandlerContext, o derivedObject) *derivedObject {
			return &derivedObject{Named: o.Named, Source: fmt.Sprint(i)}
		}, krt.WithStop(stop), krt.WithName(fmt.Sprintf("level%d", i)))
		levels = append(levels, parent)
	}
	// Each level's handler, registered before sync, must have the full
	// initial state when its registration says it is synced.
	var seen [3]atomic.Int64
	var regs []krt.HandlerRegistration
	for i, c := range levels {
		regs = append(regs, c.RegisterBatch(func(events []krt.Event[derivedObject]) { seen[i].Add(int64(len(events))) }, true))
	}
	for i, c := range levels {
		if c.HasSynced() || regs[i].HasSynced() {
			t.Fatalf("level %d synced before its source", i+1)
		}
	}
	gate.MarkSynced()
	for i := len(levels) - 1; i >= 0; i-- {
		if !regs[i].WaitUntilSynced(stop) {
			t.Fatalf("level %d handler never synced", i+1)
		}
		// Synced below implies synced above.
		for j := 0; j <= i; j++ {
			if !levels[j].HasSynced() {
				t.Fatalf("level %d synced before level %d", i+1, j+1)
			}
		}
		if got := len(levels[i].List()); got != 100 {
			t.Fatalf("level %d has %d objects when synced, want 100", i+1, got)
		}
		if got := seen[i].Load(); got != 100 {
			t.Fatalf("level %d handler saw %d events when synced, want 100", i+1, got)
		}
	}
}

// versioned is an object with a value, for the write races of scenario (f).
type versioned struct {
	krt.Named
	Value int
}

// Scenario (f): a dependency is registered before the read, so writes that
// race with a transformation are never lost.
func TestNoEventLostUnderConcurrentWrites(t *testing.T) {
	stop := krttest.Stop(t)
	const n, writes = 20, 200
	var configs, inputs []versioned
	for i := range n {
		configs = append(configs, versioned{Named: krt.Named{Namespace: "cfg", Name: fmt.Sprint(i)}})
		inputs = append(inputs, versioned{Named: krt.Named{Namespace: "in", Name: fmt.Sprint(i)}})
	}
	cfgs := krt.NewStaticCollection(nil, configs, krt.WithStop(stop))
	ins := krt.NewStaticCollection(nil, inputs, krt.WithStop(stop))
	views := krt.NewCollection(ins, func(ctx krt.HandlerContext, in versioned) *versioned {
		c := krt.FetchOne(ctx, krt.Collection[versioned](cfgs), krt.FilterKey("cfg/"+in.Name))
		runtime.Gosched() // widen the window between the read and the commit
		if c == nil {
			return nil
		}
		return &versioned{Named: in.Named, Value: c.Value}
	}, krt.WithStop(stop))

	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for v := 1; v <= writes; v++ {
				cfgs.UpdateObject(versioned{Named: krt.Named{Namespace: "cfg", Name: fmt.Sprint(i)}, Value: v})
			}
		})
	}
	wg.Wait()

	caughtUp := func() bool {
		list := views.List()
		if len(list) != n {
			return false
		}
		for _, v := range list {
			if v.Value != writes {
				return false
			}
		}
		return true
	}
	changed := make(chan struct{}, 1)
	reg := views.Register(func(krt.Event[versioned]) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer reg.UnregisterHandler()
	deadline := time.After(krttest.Timeout)
	for !caughtUp() {
		select {
		case <-changed:
		case <-deadline:
			var stale []string
			for _, v := range views.List() {
				if v.Value != writes {
					stale = append(stale, fmt.Sprintf("%s=%d", v.Name, v.Value))
				}
			}
			t.Fatalf("views never caught up with the last write; stale: %v", stale)
		}
	}
}

// A derived collection is synced only once the collections its
// transformations fetched from are synced too, and their initial objects
// are reflected in its outputs: synced never means "partly loaded".
func TestSyncWaitsForFetchedCollections(t *testing.T) {
	stop := krttest.Stop(t)
	gate := krttest.NewSyncGate()
	configs := krt.NewStaticCollection[versioned](gate, nil, krt.WithStop(stop), krt.WithName("configs"))
	inputs := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "in", Name: "a"}}}, krt.WithStop(stop))
	views := krt.NewCollection(inputs, func(ctx krt.HandlerContext, in versioned) *versioned {
		c := krt.FetchOne(ctx, krt.Collection[versioned](configs), krt.FilterKey("cfg/"+in.Name))
		if c == nil {
			return &versioned{Named: in.Named, Value: -1}
		}
		return &versioned{Named: in.Named, Value: c.Value}
	}, krt.WithStop(stop))
	tracker := krttest.NewTracker[versioned](t)
	reg := views.Register(tracker.Track)
	// The initial input is computed (and the sync request handled in the
	// same step) while the fetched collection is empty and loading.
	tracker.WaitOrdered("add/in/a")
	if views.HasSynced() || reg.HasSynced() {
		t.Fatal("synced while a fetched collection was still loading")
	}
	// The fetched collection fills up, then syncs.
	configs.UpdateObject(versioned{Named: krt.Named{Namespace: "cfg", Name: "a"}, Value: 7})
	tracker.WaitOrdered("update/in/a")
	if views.HasSynced() {
		t.Fatal("synced while a fetched collection was still loading")
	}
	gate.MarkSynced()
	if !views.WaitUntilSynced(stop) || !reg.WaitUntilSynced(stop) {
		t.Fatal("never synced")
	}
	if got := views.GetKey("in/a"); got == nil || got.Value != 7 {
		t.Fatalf("output when synced = %v, want the fetched value 7", got)
	}
}

// A fetched collection that gets its initial objects and syncs while a
// batch is being computed: its events are queued behind the batch, and
// the recomputations they cause are still part of the initial state, so
// the collection is synced only after them.
func TestSyncWaitsForEventsOfACollectionThatSyncedMidBatch(t *testing.T) {
	stop := krttest.Stop(t)
	gate := krttest.NewSyncGate()
	configs := krt.NewStaticCollection[versioned](gate, nil, krt.WithStop(stop), krt.WithName("configs"))
	inputs := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "in", Name: "a"}}}, krt.WithStop(stop))
	fetched, resume, observed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	views := krt.NewCollection(inputs, func(ctx krt.HandlerContext, in versioned) *versioned {
		c := krt.FetchOne(ctx, krt.Collection[versioned](configs), krt.FilterKey("cfg/"+in.Name))
		switch runs.Add(1) {
		case 1:
			close(fetched) // read while configs is empty...
			<-resume       // ...which fills and syncs before this run ends
		case 2:
			// The recomputation holds on until the test has looked, or a
			// moment: a collection that claimed sync before it would be
			// seen with the stale output.
			select {
			case <-observed:
			case <-time.After(200 * time.Millisecond):
			}
		}
		if c == nil {
			return &versioned{Named: in.Named, Value: -1}
		}
		return &versioned{Named: in.Named, Value: c.Value}
	}, krt.WithStop(stop), countsRuns)
	<-fetched
	configs.UpdateObject(versioned{Named: krt.Named{Namespace: "cfg", Name: "a"}, Value: 7})
	gate.MarkSynced()
	if !configs.WaitUntilSynced(stop) {
		t.Fatal("configs never synced")
	}
	close(resume)
	if !views.WaitUntilSynced(stop) {
		t.Fatal("never synced")
	}
	got := views.GetKey("in/a")
	close(observed)
	if got == nil || got.Value != 7 {
		t.Fatalf("output when synced = %v, want the fetched value 7", got)
	}
}
