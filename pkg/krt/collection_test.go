package krt_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// pointer is an input that names the config object it reads.
type pointer struct {
	krt.Named
	Target string
}

// Dependencies are recorded again on every run: after an input switches to
// another target, the old target no longer recomputes it.
func TestDependenciesAreReRecordedEachRun(t *testing.T) {
	stop := krttest.Stop(t)
	configs := krt.NewStaticCollection(nil, []versioned{
		{Named: krt.Named{Namespace: "cfg", Name: "a"}, Value: 1},
		{Named: krt.Named{Namespace: "cfg", Name: "b"}, Value: 10},
	}, krt.WithStop(stop))
	inputs := krt.NewStaticCollection(nil, []pointer{{Named: krt.Named{Namespace: "in", Name: "p"}, Target: "cfg/a"}}, krt.WithStop(stop))
	var runs atomic.Int64
	out := krt.NewCollection(inputs, func(ctx krt.HandlerContext, p pointer) *versioned {
		runs.Add(1)
		c := krt.FetchOne(ctx, krt.Collection[versioned](configs), krt.FilterKey(p.Target))
		if c == nil {
			return nil
		}
		return &versioned{Named: p.Named, Value: c.Value}
	}, krt.WithStop(stop), countsRuns)
	tracker := krttest.NewTracker[versioned](t)
	out.Register(tracker.Track)
	tracker.WaitOrdered("add/in/p")

	inputs.UpdateObject(pointer{Named: krt.Named{Namespace: "in", Name: "p"}, Target: "cfg/b"})
	tracker.WaitOrdered("update/in/p")
	if got := out.GetKey("in/p").Value; got != 10 {
		t.Fatalf("value after switching target = %d, want 10", got)
	}
	runs.Store(0)
	configs.UpdateObject(versioned{Named: krt.Named{Namespace: "cfg", Name: "a"}, Value: 2})
	configs.UpdateObject(versioned{Named: krt.Named{Namespace: "cfg", Name: "b"}, Value: 11})
	tracker.WaitOrdered("update/in/p")
	if got := runs.Load(); got != 1 {
		t.Errorf("runs after changing both targets = %d, want 1 (only the current target counts)", got)
	}
}

// A dependency matches the old and the new side of an event: an object that
// stops matching a filter recomputes the inputs that fetched it.
func TestDependencyMatchesOldAndNew(t *testing.T) {
	stop := krttest.Stop(t)
	objs := krt.NewStaticCollection(nil, []labelled{
		{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"team": "red"}},
		{Named: krt.Named{Namespace: "ns", Name: "b"}, Labels: map[string]string{"team": "red"}},
	}, krt.WithStop(stop))
	count := krt.NewSingleton(func(ctx krt.HandlerContext) *int {
		n := len(krt.Fetch(ctx, krt.Collection[labelled](objs), krt.FilterLabel(map[string]string{"team": "red"})))
		return &n
	}, krt.WithStop(stop))
	count.AsCollection().WaitUntilSynced(stop)
	values := make(chan int, 10)
	count.Register(func(e krt.Event[int]) {
		if e.New != nil {
			values <- *e.New
		}
	})
	expect := func(want int) {
		t.Helper()
		select {
		case got := <-values:
			if got != want {
				t.Fatalf("count = %d, want %d", got, want)
			}
		case <-time.After(krttest.Timeout):
			t.Fatalf("count never became %d", want)
		}
	}
	expect(2)
	// Moving out: only the old object matched.
	objs.UpdateObject(labelled{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"team": "blue"}})
	expect(1)
	// Moving in: only the new object matches.
	objs.UpdateObject(labelled{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"team": "red"}})
	expect(2)
	objs.DeleteObject("ns/b")
	expect(1)
}

// A panic in a transformation is recovered and counted; the input keeps its
// previous output and the other inputs keep flowing.
func TestTransformationPanicKeepsPreviousOutput(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []versioned{
		{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 1},
		{Named: krt.Named{Namespace: "ns", Name: "b"}, Value: 1},
	}, krt.WithStop(stop))
	out := krt.NewCollection(src, func(ctx krt.HandlerContext, v versioned) *versioned {
		if v.Value < 0 {
			panic(fmt.Sprintf("negative value %d", v.Value))
		}
		return &versioned{Named: v.Named, Value: v.Value * 10}
	}, krt.WithStop(stop), krt.WithLogger(krttest.Logger(t)))
	tracker := krttest.NewTracker[versioned](t)
	out.Register(tracker.Track)
	tracker.WaitOrdered("add/ns/a", "add/ns/b")

	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: -1})
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "b"}, Value: 2})
	tracker.WaitOrdered("update/ns/b")
	if got := out.GetKey("ns/a"); got == nil || got.Value != 10 {
		t.Errorf("output of the panicking input = %v, want the previous one (10)", got)
	}
	if got := krt.Panics(out); got != 1 {
		t.Errorf("panics counted = %d, want 1", got)
	}
	// Once the input is fixed it flows again.
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 3})
	tracker.WaitOrdered("update/ns/a")
	if got := out.GetKey("ns/a").Value; got != 30 {
		t.Errorf("output after the fix = %d, want 30", got)
	}
}

// DiscardResult keeps the previous output but still records what was read.
func TestDiscardResult(t *testing.T) {
	stop := krttest.Stop(t)
	ready := krt.NewStatic(&versioned{Named: krt.Named{Name: "ready"}, Value: 1}, true, krt.WithStop(stop))
	src := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 1}}, krt.WithStop(stop))
	out := krt.NewCollection(src, func(ctx krt.HandlerContext, v versioned) *versioned {
		if r := krt.FetchOne(ctx, ready.AsCollection()); r == nil || r.Value == 0 {
			ctx.DiscardResult()
			return nil
		}
		return &versioned{Named: v.Named, Value: v.Value}
	}, krt.WithStop(stop))
	tracker := krttest.NewTracker[versioned](t)
	out.Register(tracker.Track)
	tracker.WaitOrdered("add/ns/a")

	ready.Set(&versioned{Named: krt.Named{Name: "ready"}, Value: 0})
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 2})
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "fence"}, Value: 2})
	// Nothing for ns/a: its result was discarded. The fence is discarded too.
	ready.Set(&versioned{Named: krt.Named{Name: "ready"}, Value: 1})
	tracker.WaitUnordered("update/ns/a", "add/ns/fence")
	if got := out.GetKey("ns/a").Value; got != 2 {
		t.Errorf("value once ready again = %d, want 2", got)
	}
}

// Changes to one key queued while the worker is busy are computed once.
func TestQueuedChangesToOneKeyAreCoalesced(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "ns", Name: "a"}}}, krt.WithStop(stop))
	entered, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int64
	out := krt.NewCollection(src, func(ctx krt.HandlerContext, v versioned) *versioned {
		if runs.Add(1) == 2 {
			close(entered)
			<-release
		}
		return &versioned{Named: v.Named, Value: v.Value}
	}, krt.WithStop(stop), countsRuns)
	out.WaitUntilSynced(stop)
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 1})
	<-entered // the worker is busy with value 1
	for v := 2; v <= 100; v++ {
		src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: v})
	}
	tracker := krttest.NewTracker[versioned](t)
	out.RegisterBatch(tracker.TrackBatch, false)
	close(release)
	tracker.WaitOrdered("update/ns/a", "update/ns/a")
	if got, runsNow := out.GetKey("ns/a").Value, runs.Load(); got != 100 || runsNow != 3 {
		t.Errorf("value = %d after %d runs, want 100 after 3 (initial, 1, then 2..100 at once)", got, runsNow)
	}
}

// Stopping a collection stops its handlers and leaves the debug registry.
func TestStopReleasesHandlersAndDebugEntry(t *testing.T) {
	debug := krt.NewDebugHandler()
	stop := make(chan struct{})
	src := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Name: "a"}}}, krt.WithStop(stop), krt.WithName("src"), krt.WithDebugging(debug))
	out := krt.NewCollection(src, func(ctx krt.HandlerContext, v versioned) *versioned { return &v },
		krt.WithStop(stop), krt.WithName("out"), krt.WithDebugging(debug))
	out.WaitUntilSynced(stop)
	var names []string
	for _, c := range debug.Collections() {
		names = append(names, fmt.Sprintf("%s:%v", c.Name, c.State.Synced))
	}
	if fmt.Sprint(names) != "[src:true out:true]" {
		t.Fatalf("debug collections = %v", names)
	}
	var after atomic.Int64
	out.Register(func(krt.Event[versioned]) { after.Add(1) })
	close(stop)
	deadline := time.After(krttest.Timeout)
	for len(debug.Collections()) > 0 {
		select {
		case <-deadline:
			t.Fatalf("still registered after stop: %v", debug.Collections())
		case <-time.After(time.Millisecond):
		}
	}
	before := after.Load()
	src.UpdateObject(versioned{Named: krt.Named{Name: "b"}})
	if reg := out.Register(func(krt.Event[versioned]) {}); reg.WaitUntilSynced(make(chan struct{})) {
		t.Error("a handler registered after stop claims to be synced")
	}
	if after.Load() != before {
		t.Error("a handler of a stopped collection still receives events")
	}
}

func TestMissingStopPanics(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || fmt.Sprint(p) != `krt: collection "nostop" has no stop channel: pass krt.WithStop` {
			t.Errorf("panic = %v", p)
		}
	}()
	krt.NewStaticCollection[versioned](nil, nil, krt.WithName("nostop"))
}

// A nil result means no output: the input's previous output is deleted.
func TestNilResultDeletesOutput(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 1}}, krt.WithStop(stop))
	out := krt.NewCollection(src, func(ctx krt.HandlerContext, v versioned) *versioned {
		if v.Value == 0 {
			return nil
		}
		return &v
	}, krt.WithStop(stop))
	tracker := krttest.NewTracker[versioned](t)
	out.Register(tracker.Track)
	tracker.WaitOrdered("add/ns/a")
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 0})
	tracker.WaitOrdered("delete/ns/a")
	if out.GetKey("ns/a") != nil || len(out.List()) != 0 {
		t.Errorf("output still present after a nil result: %v", out.List())
	}
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 2})
	tracker.WaitOrdered("add/ns/a")
}

// A many collection adds, updates and deletes outputs as an input's result
// set changes, and deletes them all when the input goes.
func TestManyCollectionFollowsResultSet(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 3}}, krt.WithStop(stop))
	out := krt.NewManyCollection(src, func(ctx krt.HandlerContext, v versioned) []versioned {
		var res []versioned
		for i := range v.Value {
			res = append(res, versioned{Named: krt.Named{Namespace: v.Name, Name: fmt.Sprint(i)}, Value: v.Value})
		}
		return res
	}, krt.WithStop(stop))
	tracker := krttest.NewTracker[versioned](t)
	out.Register(tracker.Track)
	tracker.WaitUnordered("add/a/0", "add/a/1", "add/a/2")

	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 1})
	tracker.WaitUnordered("update/a/0", "delete/a/1", "delete/a/2")
	src.DeleteObject("ns/a")
	tracker.WaitOrdered("delete/a/0")
	if len(out.List()) != 0 {
		t.Errorf("outputs left after the input was deleted: %v", out.List())
	}
}

// Two inputs producing one output key: the last writer wins, and the output
// survives the deletion of the input that no longer owns it.
func TestOutputKeySharedByTwoInputs(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "ns", Name: "a"}, Value: 1}}, krt.WithStop(stop))
	out := krt.NewCollection(src, func(ctx krt.HandlerContext, v versioned) *versioned {
		return &versioned{Named: krt.Named{Name: "shared"}, Value: v.Value}
	}, krt.WithStop(stop), krt.WithLogger(krttest.Logger(t)))
	tracker := krttest.NewTracker[versioned](t)
	out.Register(tracker.Track)
	tracker.WaitOrdered("add/shared")
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "b"}, Value: 2})
	tracker.WaitOrdered("update/shared")
	src.DeleteObject("ns/a")
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "fence"}, Value: 3})
	tracker.WaitOrdered("update/shared")
	if got := out.GetKey("shared"); got == nil || got.Value != 3 {
		t.Errorf("shared output = %v, want value 3", got)
	}
}
