package krt

import "sync/atomic"

// RecomputeTrigger lets code outside the graph make transformations run
// again: a transformation calls MarkDependant, and every later
// TriggerRecomputation recomputes it. It is the escape hatch for state krt
// cannot see (a value read from a file by hand, say); the caller owes a
// TriggerRecomputation every time that state changes.
type RecomputeTrigger struct {
	value StaticSingleton[int64]
	next  atomic.Int64
}

// NewRecomputeTrigger returns a trigger; with startSynced false,
// transformations that depend on it are not synced before MarkSynced.
func NewRecomputeTrigger(startSynced bool, opts ...CollectionOption) *RecomputeTrigger {
	t := &RecomputeTrigger{}
	t.value = NewStatic(new(int64), startSynced, opts...)
	return t
}

// MarkDependant records that the running transformation depends on the
// trigger.
func (t *RecomputeTrigger) MarkDependant(ctx HandlerContext) {
	FetchOne(ctx, t.value.AsCollection())
}

// TriggerRecomputation recomputes every dependant. Each call stores a new
// number, so Equal never takes it for "no change".
func (t *RecomputeTrigger) TriggerRecomputation() {
	v := t.next.Add(1)
	t.value.Set(&v)
}

// MarkSynced marks the trigger synced.
func (t *RecomputeTrigger) MarkSynced() { t.value.MarkSynced() }
