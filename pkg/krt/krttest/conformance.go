package krttest

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/meshcp/meshcp/pkg/krt"
)

// Rig is a collection under test plus the means to change it. Keys are
// "namespace/name" strings; the rig builds objects with those keys.
type Rig[T any] interface {
	krt.Collection[T]
	// CreateObject makes an object with key appear in the collection.
	CreateObject(key string)
	// ReplaceKey makes the object with oldKey go away and one with newKey
	// appear, as a single change of the rig's source.
	ReplaceKey(oldKey, newKey string)
}

// GatedRig is a Rig that starts unsynced and syncs on MarkSynced, so the
// suite can check that handlers registered before sync sync with it.
type GatedRig interface {
	MarkSynced()
}

// SingletonRig is a Rig that holds one object at most: creating an object
// replaces the current one.
type SingletonRig interface {
	IsSingleton() bool
}

// RunConformance runs the behaviour every krt collection promises against
// rigs made by newRig, in this order: empty at start with the given
// metadata; a handler registered before sync syncs with the collection; ADD
// events arrive in order and List/GetKey agree; late handlers get the
// existing state once; a blocked handler blocks neither the others nor
// sync; an unregistered handler receives nothing more; concurrent creates
// racing with a late registration are each delivered exactly once;
// ReplaceKey is one DELETE and one ADD.
func RunConformance[T any](t *testing.T, newRig func(t *testing.T, md krt.Metadata) Rig[T]) {
	md := krt.Metadata{"conformance": t.Name()}
	rig := newRig(t, md)
	stop := Stop(t)
	single := isSingleton(rig)

	// Empty at start, with the given metadata.
	if got := rig.Metadata(); !maps.Equal(got, md) {
		t.Fatalf("Metadata() = %v, want %v", got, md)
	}
	if got := rig.List(); len(got) != 0 {
		t.Fatalf("List() at start = %v, want empty", keys(got))
	}
	if got := rig.GetKey("a/b"); got != nil {
		t.Fatalf("GetKey(a/b) at start = %v, want nil", got)
	}

	// A handler registered before sync syncs with the collection.
	early := NewTracker[T](t)
	earlyReg := rig.Register(early.Track)
	if gate, ok := rig.(GatedRig); ok {
		if rig.HasSynced() || earlyReg.HasSynced() {
			t.Fatalf("synced before the rig's source was: collection %v, handler %v", rig.HasSynced(), earlyReg.HasSynced())
		}
		gate.MarkSynced()
	}
	if !rig.WaitUntilSynced(stop) {
		t.Fatal("collection never synced")
	}
	if !earlyReg.WaitUntilSynced(stop) {
		t.Fatal("handler registered before sync never synced")
	}

	// ADD events arrive in order; List and GetKey agree with them.
	initial := []string{"a/b", "a/c", "a/d"}
	for _, k := range initial {
		rig.CreateObject(k)
	}
	if single {
		early.WaitOrdered("add/a/b", "delete/a/b", "add/a/c", "delete/a/c", "add/a/d")
		assertContent(t, rig, "a/d")
	} else {
		early.WaitOrdered("add/a/b", "add/a/c", "add/a/d")
		assertContent(t, rig, initial...)
	}

	// A late handler gets the existing state once, then live events.
	late := NewTracker[T](t)
	lateReg := rig.Register(late.Track)
	if !lateReg.WaitUntilSynced(stop) {
		t.Fatal("late handler never synced")
	}
	current := keys(rig.List())
	late.WaitUnordered(prefixed("add/", current)...)
	late.Empty()

	// RegisterBatch with the existing state hands it over as one batch.
	batches := make(chan []krt.Event[T], 4)
	batchReg := rig.RegisterBatch(func(events []krt.Event[T]) { batches <- events }, true)
	if !batchReg.WaitUntilSynced(stop) {
		t.Fatal("batch handler never synced")
	}
	first := <-batches
	var firstKeys []string
	for _, e := range first {
		if e.Event != krt.EventAdd {
			t.Fatalf("initial batch has a %s event", e.Event)
		}
		firstKeys = append(firstKeys, krt.GetKey(*e.New))
	}
	if slices.Sort(firstKeys); !slices.Equal(firstKeys, current) {
		t.Fatalf("initial batch = %v, want all of %v at once", firstKeys, current)
	}
	batchReg.UnregisterHandler()

	// A blocked handler blocks neither the other handlers nor sync.
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	blockedReg := rig.RegisterBatch(func([]krt.Event[T]) { <-release }, true)
	rig.CreateObject("a/e")
	expectCreate(early, single, current, "a/e")
	expectCreate(late, single, current, "a/e")
	if !rig.HasSynced() {
		t.Fatal("collection unsynced while a handler is blocked")
	}
	other := rig.Register(func(krt.Event[T]) {})
	if !other.WaitUntilSynced(stop) {
		t.Fatal("a new handler did not sync while another one was blocked")
	}
	other.UnregisterHandler()
	releaseOnce.Do(func() { close(release) })
	if !blockedReg.WaitUntilSynced(stop) {
		t.Fatal("blocked handler never synced after it was released")
	}
	blockedReg.UnregisterHandler()
	current = keys(rig.List())

	// An unregistered handler receives nothing more.
	lateReg.UnregisterHandler()
	rig.CreateObject("a/f")
	expectCreate(early, single, current, "a/f")
	late.Empty()
	current = keys(rig.List())

	// Concurrent creates racing with a late registration are each delivered
	// exactly once to it.
	if !single {
		racer := NewTracker[T](t)
		var wg sync.WaitGroup
		const n = 20
		start := make(chan struct{})
		created := make([]string, n)
		for i := range n {
			created[i] = fmt.Sprintf("race/%02d", i)
			wg.Go(func() {
				<-start
				rig.CreateObject(created[i])
			})
		}
		var racerReg krt.HandlerRegistration
		wg.Go(func() {
			<-start
			racerReg = rig.RegisterBatch(racer.TrackBatch, true)
		})
		close(start)
		wg.Wait()
		early.WaitUnordered(prefixed("add/", created)...)
		if !racerReg.WaitUntilSynced(stop) {
			t.Fatal("racing handler never synced")
		}
		// Everything present now reached the racer exactly once. A fence
		// object, created after all of the above, bounds the wait.
		rig.CreateObject("race/fence")
		early.WaitOrdered("add/race/fence")
		all := append(slices.Clone(current), created...)
		racer.WaitUnordered(prefixed("add/", append(all, "race/fence"))...)
		racer.Empty()
		racerReg.UnregisterHandler()
		current = keys(rig.List())
	}

	// ReplaceKey is exactly one DELETE of the old key and one ADD of the new.
	oldKey := current[0]
	rig.ReplaceKey(oldKey, "z/replaced")
	early.WaitUnordered("delete/"+oldKey, "add/z/replaced")
	if rig.GetKey(oldKey) != nil {
		t.Fatalf("GetKey(%s) after ReplaceKey: still present", oldKey)
	}
	if got := rig.GetKey("z/replaced"); got == nil || krt.GetKey(*got) != "z/replaced" {
		t.Fatalf("GetKey(z/replaced) after ReplaceKey = %v", got)
	}
	early.Empty()
	earlyReg.UnregisterHandler()
}

// expectCreate waits for the events that creating key causes: an ADD, after
// a DELETE of the current object for a singleton.
func expectCreate[T any](tr *Tracker[T], single bool, current []string, key string) {
	if single && len(current) > 0 {
		tr.WaitOrdered("delete/"+current[0], "add/"+key)
		return
	}
	tr.WaitOrdered("add/" + key)
}

func assertContent[T any](t *testing.T, c krt.Collection[T], want ...string) {
	t.Helper()
	if got := keys(c.List()); !slices.Equal(got, want) {
		t.Fatalf("List() keys = %v, want %v", got, want)
	}
	for _, k := range want {
		o := c.GetKey(k)
		if o == nil || krt.GetKey(*o) != k {
			t.Fatalf("GetKey(%s) = %v", k, o)
		}
	}
}

func isSingleton(rig any) bool {
	s, ok := rig.(SingletonRig)
	return ok && s.IsSingleton()
}

func keys[T any](objs []T) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = krt.GetKey(o)
	}
	slices.Sort(out)
	return out
}

func prefixed(prefix string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = prefix + k
	}
	return out
}
