package krt_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// sourced is an object that says which source it came from.
type sourced struct {
	krt.Named
	From string
}

func sourcedObj(key, from string) sourced {
	ns, name, _ := strings.Cut(key, "/")
	return sourced{Named: krt.Named{Namespace: ns, Name: name}, From: from}
}

func TestJoinFallsBackToTheNextCopy(t *testing.T) {
	stop := krttest.Stop(t)
	high := krt.NewStaticCollection[sourced](nil, nil, krt.WithStop(stop), krt.WithName("high"))
	low := krt.NewStaticCollection[sourced](nil, nil, krt.WithStop(stop), krt.WithName("low"))
	joined := krt.JoinCollection([]krt.Collection[sourced]{high, low}, krt.WithStop(stop))
	tracker := krttest.NewTracker[sourced](t)
	joined.Register(tracker.Track)
	from := func() string { return joined.GetKey("ns/a").From }

	low.UpdateObject(sourcedObj("ns/a", "low"))
	tracker.WaitOrdered("add/ns/a")
	// An ADD over a lower-priority copy is an UPDATE.
	high.UpdateObject(sourcedObj("ns/a", "high"))
	tracker.WaitOrdered("update/ns/a")
	if from() != "high" {
		t.Fatalf("winner = %s, want high", from())
	}
	// A change to the hidden copy changes nothing.
	low.UpdateObject(sourced{Named: krt.Named{Namespace: "ns", Name: "a"}, From: "low, changed"})
	// Deleting the winner falls back to the next copy, as an UPDATE.
	high.DeleteObject("ns/a")
	tracker.WaitOrdered("update/ns/a")
	if from() != "low, changed" {
		t.Fatalf("after the fallback the winner is %q, want the low copy", from())
	}
	// Deleting the last copy is a real DELETE.
	low.DeleteObject("ns/a")
	tracker.WaitOrdered("delete/ns/a")
	// No duplicates anywhere.
	high.UpdateObject(sourcedObj("ns/b", "high"))
	low.UpdateObject(sourcedObj("ns/b", "low"))
	tracker.WaitOrdered("add/ns/b")
	byNamespace := krt.NewNamespaceIndex(joined)
	if got := len(joined.List()); got != 1 {
		t.Errorf("List has %d objects, want 1", got)
	}
	if got := byNamespace.Lookup("ns"); len(got) != 1 || got[0].From != "high" {
		t.Errorf("index lookup = %v, want the high copy only", got)
	}
}

func TestJoinWithMergeMergesEveryCopy(t *testing.T) {
	stop := krttest.Stop(t)
	a := krt.NewStaticCollection[sourced](nil, nil, krt.WithStop(stop))
	b := krt.NewStaticCollection[sourced](nil, nil, krt.WithStop(stop))
	merged := krt.JoinWithMergeCollection([]krt.Collection[sourced]{a, b}, func(copies []sourced) *sourced {
		out := copies[0]
		var froms []string
		for _, c := range copies {
			froms = append(froms, c.From)
		}
		out.From = strings.Join(froms, "+")
		return &out
	}, krt.WithStop(stop))
	tracker := krttest.NewTracker[sourced](t)
	merged.Register(tracker.Track)
	b.UpdateObject(sourcedObj("ns/x", "b"))
	tracker.WaitOrdered("add/ns/x")
	a.UpdateObject(sourcedObj("ns/x", "a"))
	tracker.WaitOrdered("update/ns/x")
	if got := merged.GetKey("ns/x").From; got != "a+b" {
		t.Errorf("merged = %q, want a+b (copies in the order of the collections)", got)
	}
	a.DeleteObject("ns/x")
	tracker.WaitOrdered("update/ns/x")
	b.DeleteObject("ns/x")
	tracker.WaitOrdered("delete/ns/x")
}

func TestIndexAsCollectionGroupsByKey(t *testing.T) {
	stop := krttest.Stop(t)
	c, byNamespace := labelledWorld(t)
	groups := byNamespace.AsCollection(krt.WithStop(stop), krt.WithName("by-namespace"))
	groups.WaitUntilSynced(stop)
	members := func(ns string) []string {
		g := groups.GetKey(ns)
		if g == nil {
			return nil
		}
		if g.Key != ns {
			t.Fatalf("group %s has Key %q", ns, g.Key)
		}
		return keysOf(g.Objects)
	}
	if got := members("a"); !slices.Equal(got, []string{"a/app-x", "a/app-x-v1"}) {
		t.Fatalf("group a = %v", got)
	}
	tracker := krttest.NewTracker[krt.IndexObject[string, labelled]](t)
	groups.RegisterBatch(tracker.TrackBatch, false)
	c.UpdateObject(labelled{Named: krt.Named{Namespace: "c", Name: "new"}})
	tracker.WaitOrdered("add/c")
	c.DeleteObject("b/app-y")
	tracker.WaitOrdered("update/b")
	c.DeleteObject("b/empty")
	tracker.WaitOrdered("delete/b")
	if got := members("b"); got != nil {
		t.Errorf("group b after its last object left = %v", got)
	}
}

// When an input is deleted its status goes too, though the transformation
// never runs for a delete.
func TestStatusCollectionCleansUpOnDelete(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []versioned{
		{Named: krt.Named{Namespace: "ns", Name: "good"}, Value: 1},
		{Named: krt.Named{Namespace: "ns", Name: "bad"}, Value: -1},
	}, krt.WithStop(stop))
	statuses, outputs := krt.NewStatusCollection(src, func(ctx krt.HandlerContext, v versioned) (*string, *versioned) {
		if v.Value < 0 {
			msg := "rejected: negative value"
			return &msg, nil
		}
		msg := "accepted"
		return &msg, &v
	}, krt.WithStop(stop), krt.WithName("validated"))
	if !statuses.WaitUntilSynced(stop) || !outputs.WaitUntilSynced(stop) {
		t.Fatal("never synced")
	}
	status := func(key string) string {
		s := statuses.GetKey(key)
		if s == nil {
			return ""
		}
		return s.Status
	}
	if status("ns/good") != "accepted" || status("ns/bad") != "rejected: negative value" {
		t.Fatalf("statuses = %q, %q", status("ns/good"), status("ns/bad"))
	}
	if outputs.GetKey("ns/bad") != nil || outputs.GetKey("ns/good") == nil {
		t.Fatal("outputs do not follow the transformation")
	}
	tracker := krttest.NewTracker[krt.ObjectWithStatus[versioned, string]](t)
	statuses.Register(tracker.Track)
	tracker.WaitUnordered("add/ns/bad", "add/ns/good")
	src.DeleteObject("ns/bad")
	tracker.WaitOrdered("delete/ns/bad")
	src.UpdateObject(versioned{Named: krt.Named{Namespace: "ns", Name: "good"}, Value: -2})
	tracker.WaitOrdered("update/ns/good")
	if status("ns/good") != "rejected: negative value" || outputs.GetKey("ns/good") != nil {
		t.Errorf("after the change: status %q, output %v", status("ns/good"), outputs.GetKey("ns/good"))
	}
}

// A trigger recomputes its dependants every time, although the value it
// holds means nothing.
func TestRecomputeTrigger(t *testing.T) {
	stop := krttest.Stop(t)
	trigger := krt.NewRecomputeTrigger(false, krt.WithStop(stop))
	var external atomic.Int64 // state krt cannot see
	external.Store(1)
	src := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "ns", Name: "a"}}}, krt.WithStop(stop))
	out := krt.NewCollection(src, func(ctx krt.HandlerContext, v versioned) *versioned {
		trigger.MarkDependant(ctx)
		return &versioned{Named: v.Named, Value: int(external.Load())}
	}, krt.WithStop(stop))
	tracker := krttest.NewTracker[versioned](t)
	reg := out.Register(tracker.Track)
	if reg.HasSynced() {
		t.Fatal("synced before the trigger was")
	}
	trigger.MarkSynced()
	reg.WaitUntilSynced(stop)
	tracker.WaitOrdered("add/ns/a")
	for want := 2; want <= 4; want++ {
		external.Store(int64(want))
		trigger.TriggerRecomputation()
		tracker.WaitOrdered("update/ns/a")
		if got := out.GetKey("ns/a").Value; got != want {
			t.Fatalf("value after trigger = %d, want %d", got, want)
		}
	}
}

// Rigs for the combinators, for RunConformance.

type twoSourceRig[T any] struct {
	krt.Collection[T]
	first, second *staticRig
}

func (r *twoSourceRig[T]) CreateObject(key string) { r.second.CreateObject(key) }
func (r *twoSourceRig[T]) ReplaceKey(oldKey, newKey string) {
	r.second.DeleteObject(oldKey)
	r.first.CreateObject(newKey)
}
func (r *twoSourceRig[T]) MarkSynced() { r.first.MarkSynced(); r.second.MarkSynced() }

func TestCombinatorConformance(t *testing.T) {
	t.Run("join", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[object] {
			first, second := newStaticRig(t, nil), newStaticRig(t, nil)
			c := krt.JoinCollection([]krt.Collection[object]{first.StaticCollection, second.StaticCollection},
				krt.WithStop(krttest.Stop(t)), krt.WithMetadata(md))
			return &twoSourceRig[object]{Collection: c, first: first, second: second}
		})
	})
	t.Run("merge join", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[object] {
			first, second := newStaticRig(t, nil), newStaticRig(t, nil)
			c := krt.JoinWithMergeCollection([]krt.Collection[object]{first.StaticCollection, second.StaticCollection},
				func(copies []object) *object { return &copies[len(copies)-1] },
				krt.WithStop(krttest.Stop(t)), krt.WithMetadata(md))
			return &twoSourceRig[object]{Collection: c, first: first, second: second}
		})
	})
	t.Run("index view", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[krt.IndexObject[string, object]] {
			src := newStaticRig(t, nil)
			byKey := krt.NewIndex(krt.Collection[object](src.StaticCollection), "key", func(o object) []string { return []string{o.ResourceName()} })
			return &indexRig{Collection: byKey.AsCollection(krt.WithStop(krttest.Stop(t)), krt.WithMetadata(md)), source: src}
		})
	})
	t.Run("status", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[krt.ObjectWithStatus[object, string]] {
			src := newStaticRig(t, nil)
			statuses, _ := krt.NewStatusCollection(krt.Collection[object](src.StaticCollection), func(ctx krt.HandlerContext, o object) (*string, *derivedObject) {
				s := fmt.Sprintf("seen %s", o.Name)
				return &s, &derivedObject{Named: o.Named}
			}, krt.WithStop(krttest.Stop(t)), krt.WithMetadata(md))
			return &statusRig{Collection: statuses, source: src}
		})
	})
}

type indexRig struct {
	krt.Collection[krt.IndexObject[string, object]]
	source *staticRig
}

func (r *indexRig) CreateObject(key string)          { r.source.CreateObject(key) }
func (r *indexRig) ReplaceKey(oldKey, newKey string) { r.source.ReplaceKey(oldKey, newKey) }
func (r *indexRig) MarkSynced()                      { r.source.MarkSynced() }

type statusRig struct {
	krt.Collection[krt.ObjectWithStatus[object, string]]
	source *staticRig
}

func (r *statusRig) CreateObject(key string)          { r.source.CreateObject(key) }
func (r *statusRig) ReplaceKey(oldKey, newKey string) { r.source.ReplaceKey(oldKey, newKey) }
func (r *statusRig) MarkSynced()                      { r.source.MarkSynced() }

// looseName is equal to another with the same name, whatever its note.
type looseName struct {
	Name string
	Note string
}

func (l looseName) Equals(o looseName) bool { return l.Name == o.Name }

// An index group compares its objects as their type says: the groups of
// an index over objects with an Equals method, or holding protobuf
// messages, are never compared by reflection (which would see the note
// here, and read a message's caches while another goroutine fills them).
func TestIndexObjectEqualsComparesObjectsByTheirType(t *testing.T) {
	a := krt.IndexObject[string, looseName]{Key: "ns", Objects: []looseName{{Name: "x", Note: "first"}}}
	b := krt.IndexObject[string, looseName]{Key: "ns", Objects: []looseName{{Name: "x", Note: "second"}}}
	if !krt.Equal(a, b) {
		t.Error("groups whose objects are Equal differ")
	}
	c := krt.IndexObject[string, looseName]{Key: "ns", Objects: []looseName{{Name: "y"}}}
	if krt.Equal(a, c) {
		t.Error("groups of different objects are Equal")
	}
	spec := func(v string) specHolder { return specHolder{Spec: wrapperspb.String(v)} }
	p := krt.IndexObject[string, specHolder]{Key: "ns", Objects: []specHolder{spec("a")}}
	q := krt.IndexObject[string, specHolder]{Key: "ns", Objects: []specHolder{spec("a")}}
	_ = proto.Size(q.Objects[0].Spec) // fills q's size cache, which DeepEqual would see
	if !krt.Equal(p, q) {
		t.Error("groups of equal protobuf specs differ")
	}
}
