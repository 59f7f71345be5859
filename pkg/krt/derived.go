package krt

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
)

// TransformationSingle computes zero or one output from an input: nil means
// no output (and removes the input's previous one).
type TransformationSingle[I, O any] func(ctx HandlerContext, input I) *O

// TransformationMulti computes any number of outputs from an input.
type TransformationMulti[I, O any] func(ctx HandlerContext, input I) []O

// TransformationEmpty computes the value of a Singleton.
type TransformationEmpty[O any] func(ctx HandlerContext) *O

// NewCollection derives a collection holding, for every object of c, the
// output of f (or nothing when f returns nil). f is re-run when its input
// changes or when anything it read with Fetch changes. The output type must
// have a key (see GetKey); outputs of different inputs must not share one.
func NewCollection[I, O any](c Collection[I], f TransformationSingle[I, O], opts ...CollectionOption) Collection[O] {
	return newDerived(c, "Collection", opts, nil, func(ctx HandlerContext, in *I) (*O, []O) {
		return f(ctx, *in), nil
	})
}

// NewManyCollection derives a collection holding every output f returns for
// every object of c. Outputs of one input with the same key collapse to the
// last one.
func NewManyCollection[I, O any](c Collection[I], f TransformationMulti[I, O], opts ...CollectionOption) Collection[O] {
	return newDerived(c, "ManyCollection", opts, nil, func(ctx HandlerContext, in *I) (*O, []O) {
		return nil, f(ctx, *in)
	})
}

// transform runs one input: it returns one output, or a slice of them.
type transform[I, O any] func(ctx HandlerContext, in *I) (*O, []O)

// derived is a collection computed from a parent collection. One worker
// goroutine drains its queue: it runs the transformation for every changed
// input (outside any lock), then commits all results and their events at
// once.
type derived[I, O any] struct {
	*store[O]
	parent    *store[I]
	transform transform[I, O]
	queue     *workQueue[I]

	// Owned by the worker; the debug dump reads them under store.mu, which
	// the worker holds while it writes them.
	inputs map[string]*inputRecord[O]
	deps   *dependencyIndex

	watchMu sync.Mutex
	watched map[*source]watchedSource

	unsubscribeParent func()
	conflictReported  atomic.Bool
	// afterCommit, if set, sees every result once it is committed, in the
	// worker, in order: status collections keep their statuses with it.
	afterCommit func(r *result[I, O])

	// Worker scratch space, reused between batches.
	tracker dependencyTracker
	results []result[I, O]
	outputs []outputRef[O]
	events  []keyedEvent[O]
}

// watchedSource is a collection this one has fetched from.
type watchedSource struct {
	Syncer
	unsubscribe func()
}

// inputRecord is what the collection remembers about one input: the
// outputs it produced and what it read.
type inputRecord[O any] struct {
	outputs []outputRef[O]
	deps    *depList
}

// outputRef is one output as stored; the pointer tells whether the stored
// value under key is still this input's.
type outputRef[O any] struct {
	key string
	val *O
}

// result is the outcome of one run of the transformation.
type result[I, O any] struct {
	key      string
	input    *I
	extra    any // set by the transformation's wrapper, for commit hooks
	deleted  bool
	failed   bool
	discard  bool
	one      *O
	many     []O
	newDeps  []dependency // nil when unchanged
	depsSame bool
}

// singletonKey is the key of the one object of a Singleton whose type has no
// key of its own.
const singletonKey = "singleton"

func newDerived[I, O any](parent Collection[I], kind string, opts []CollectionOption, key func(*O) string, t transform[I, O]) *derived[I, O] {
	return newDerivedWithHook(parent, newConfig[O](kind, opts), key, t, nil)
}

func newDerivedWithHook[I, O any](parent Collection[I], cfg collectionConfig[O], key func(*O) string, t transform[I, O],
	afterCommit func(r *result[I, O]),
) *derived[I, O] {
	if key == nil {
		key = cfg.access.key
	}
	if key == nil {
		var zero O
		panic(fmt.Sprintf("krt: collection %q: cannot compute a key for %T: implement ResourceName() or GetName()/GetNamespace()", cfg.name, zero))
	}
	d := &derived[I, O]{
		store:       newStore(cfg, key),
		parent:      storeOf(parent),
		transform:   t,
		queue:       newWorkQueue[I](),
		inputs:      map[string]*inputRecord[O]{},
		deps:        newDependencyIndex(),
		watched:     map[*source]watchedSource{},
		afterCommit: afterCommit,
	}
	d.tracker.watch = d.watch
	d.unsubscribeParent = d.parent.addHandler(&inlineHandler[I]{
		onEvents: d.queue.pushInputs,
		onSynced: d.queue.requestSync,
	}, true)
	cfg.debugger.register(d.store, d)
	go func() {
		defer d.close()
		d.queue.run(d.cfg.stop, d.process)
	}()
	return d
}

// watch subscribes the collection to changes of a fetched collection, once.
// It runs inside Fetch, before the read.
func (d *derived[I, O]) watch(fetched fetchable) {
	src := fetched.source()
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	if _, ok := d.watched[src]; ok {
		return
	}
	d.watched[src] = watchedSource{
		Syncer:      fetched,
		unsubscribe: fetched.registerErased(func(events []erasedEvent) { d.queue.pushFetched(src, events) }),
	}
}

// unsyncedFetched returns the collections this one fetched from that do not
// have their initial state yet; the collection itself is left out.
func (d *derived[I, O]) unsyncedFetched() []Syncer {
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	var out []Syncer
	for src, w := range d.watched {
		if src != d.src && !w.HasSynced() {
			out = append(out, w.Syncer)
		}
	}
	return out
}

// syncedFetched returns the fetched collections that are synced now.
func (d *derived[I, O]) syncedFetched() map[*source]bool {
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	out := make(map[*source]bool, len(d.watched))
	for src, w := range d.watched {
		if w.HasSynced() {
			out[src] = true
		}
	}
	return out
}

// syncedSince reports whether a fetched collection that was not synced
// (or not fetched at all) when before was taken is synced now.
func (d *derived[I, O]) syncedSince(before map[*source]bool) bool {
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	for src, w := range d.watched {
		if src != d.src && !before[src] && w.HasSynced() {
			return true
		}
	}
	return false
}

// deferSync asks for sync again once every collection in waitFor is synced.
// Their initial events reach the queue before they report synced, so the
// next sync request comes after the recomputations those events cause.
func (d *derived[I, O]) deferSync(waitFor []Syncer) {
	go func() {
		for _, s := range waitFor {
			if !s.WaitUntilSynced(d.cfg.stop) {
				return
			}
		}
		d.queue.requestSync()
	}()
}

func (d *derived[I, O]) close() {
	d.unsubscribeParent()
	d.watchMu.Lock()
	for _, w := range d.watched {
		w.unsubscribe()
	}
	d.watched = nil
	d.watchMu.Unlock()
	d.shutdown()
	d.cfg.debugger.unregister(d.store)
}

// process computes and commits one batch of work.
func (d *derived[I, O]) process(b *workBatch[I]) {
	var syncedBefore map[*source]bool
	if b.syncRequest {
		syncedBefore = d.syncedFetched()
	}
	d.stats.inputEvents.Add(uint64(len(b.order)))
	// Inputs recomputed because something they fetched changed. Their
	// current object is read from the parent when they are computed.
	var affected []string
	for _, fc := range b.depEvents {
		d.stats.fetchedEvents.Add(uint64(len(fc.events)))
		n, checked := d.deps.affected(fc.src, fc.events, func(input string) {
			if _, queued := b.inputs[input]; queued {
				return
			}
			b.inputs[input] = nil
			affected = append(affected, input)
		})
		d.stats.impacts.observe(n)
		d.stats.checks.Add(uint64(checked))
		if d.cfg.logger.Enabled(context.Background(), slog.LevelDebug) {
			d.cfg.logger.Debug(fmt.Sprintf("event size %d, impacts %d objects", len(fc.events), n), "source", fc.src.name)
		}
	}

	results := d.results[:0]
	for _, k := range b.order {
		results = append(results, d.compute(k, b.inputs[k]))
	}
	for _, k := range affected {
		in := d.parent.GetKey(k)
		if in == nil {
			continue // its deletion is queued or done already
		}
		results = append(results, d.compute(k, in))
	}

	// Synced means the initial state is complete, which includes what the
	// transformations read: wait for partly loaded fetched collections.
	// One that synced while this batch ran (or was first fetched in it)
	// may have its last initial events queued behind the batch; the
	// recomputations they cause are part of the initial state too, so
	// sync waits for the next batch, which takes them.
	syncNow := b.syncRequest
	if syncNow {
		switch waitFor := d.unsyncedFetched(); {
		case len(waitFor) > 0:
			syncNow = false
			d.deferSync(waitFor)
		case d.syncedSince(syncedBefore) && d.queue.hasFetched():
			syncNow = false
			d.queue.requestSync()
		}
	}

	d.mu.Lock()
	events := d.events[:0]
	for i := range results {
		events = d.commitLocked(&results[i], events)
	}
	d.dispatchLocked(events)
	d.mu.Unlock()
	if d.afterCommit != nil {
		for i := range results {
			d.afterCommit(&results[i])
		}
	}
	if syncNow {
		d.markSynced() // after the hooks: what they maintain is part of the state
	}

	clear(results)
	clear(events)
	d.results, d.events = keepSmall(results), keepSmall(events)
}

// scratchLimit is the largest scratch buffer a worker keeps between
// batches. An initial sync grows buffers to the size of the whole
// collection; keeping them would hold that memory for good.
const scratchLimit = 1024

// keepSmall returns s emptied for reuse, or nil when it has grown too big
// to be worth keeping.
func keepSmall[E any](s []E) []E {
	if cap(s) > scratchLimit {
		return nil
	}
	return s[:0]
}

// compute runs the transformation for one input (nil: the input is gone).
// A panic is recovered, logged and counted; the input keeps its previous
// output.
func (d *derived[I, O]) compute(key string, in *I) result[I, O] {
	if in == nil {
		return result[I, O]{key: key, deleted: true}
	}
	d.stats.recomputations.Add(1)
	t := &d.tracker
	t.reset()
	var input watchedObject
	if d.cfg.checks&CheckMutation != 0 {
		input = watchObject(d.parent.cfg.name, key, in)
		t.watchFetched = true
	}
	t.recordFetched = d.cfg.checks&CheckPurity != 0
	r := d.transformOnce(key, in, t)
	// The checks run outside run's recover: a violation must not pass for
	// an ordinary panic of the transformation.
	if d.cfg.checks&CheckMutation != 0 {
		who := fmt.Sprintf("the transformation of collection %q (input %q)", d.cfg.name, key)
		input.checkUnchanged(who, d.cfg.violation)
		for _, o := range t.fetched {
			o.checkUnchanged(who, d.cfg.violation)
		}
	}
	if d.cfg.checks&CheckPurity != 0 && !r.failed {
		d.checkPurity(key, in, &r, t.fetchedRefs)
	}
	return r
}

// transformOnce calls the transformation for one input. A panic is recovered, logged
// and counted; the input keeps its previous output.
func (d *derived[I, O]) transformOnce(key string, in *I, t *dependencyTracker) (r result[I, O]) {
	r.key, r.input = key, in
	defer func() {
		if p := recover(); p != nil {
			d.stats.panics.Add(1)
			d.cfg.logger.Error("transformation panicked; keeping the previous output",
				"key", key, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r = result[I, O]{key: key, input: in, failed: true}
			// Keep what the previous run depended on, plus what this run
			// read before it failed, so either kind of change retries it.
			var prev []dependency
			if rec := d.inputs[key]; rec != nil && rec.deps != nil {
				prev = rec.deps.deps
			}
			r.newDeps = append(append([]dependency(nil), prev...), t.deps...)
		}
	}()
	r.one, r.many = d.transform(t, in)
	r.discard, r.extra = t.discard, t.extra
	var prev *depList
	if rec := d.inputs[key]; rec != nil {
		prev = rec.deps
	}
	if (prev == nil && len(t.deps) == 0) || (prev != nil && prev.sameAs(t.deps)) {
		r.depsSame = true
	} else {
		r.newDeps = append([]dependency(nil), t.deps...)
	}
	return r
}

// checkPurity runs the transformation a second time and reports when the
// result differs from the first run's. Runs that did not read the same
// stored objects (a fetched collection changed in between) prove nothing
// and are not judged.
func (d *derived[I, O]) checkPurity(key string, in *I, first *result[I, O], firstFetched []any) {
	scratch := &dependencyTracker{watch: func(fetchable) {}, recordFetched: true}
	var one *O
	var many []O
	func() {
		defer func() {
			if p := recover(); p != nil {
				one, many = nil, []O{} // a panic only the second time differs too
			}
		}()
		one, many = d.transform(scratch, in)
	}()
	if !slices.Equal(firstFetched, scratch.fetchedRefs) || sameResults(d.access.equal, d.key, first.one, first.many, one, many) {
		return
	}
	d.stats.purityViolations.Add(1)
	msg := fmt.Sprintf("krt: the transformation of collection %q is not pure: two runs for input %q gave different results "+
		"(a slice built from map order? a clock? a read outside Fetch?)", d.cfg.name, key)
	d.cfg.logger.Error(msg, "key", key)
	if d.cfg.checks&CheckPurityStrict != 0 {
		d.cfg.violation(msg)
	}
}

// commitLocked applies one result to the store and the dependency index and
// appends the events it causes. The caller holds the write lock.
func (d *derived[I, O]) commitLocked(r *result[I, O], events []keyedEvent[O]) []keyedEvent[O] {
	rec := d.inputs[r.key]
	if r.deleted {
		if rec == nil {
			return events
		}
		events = d.replaceOutputsLocked(rec, nil, events)
		d.deps.release(rec.deps, r.key)
		delete(d.inputs, r.key)
		return events
	}
	if rec == nil {
		rec = &inputRecord[O]{}
		d.inputs[r.key] = rec
	}
	if !r.failed && !r.discard {
		d.outputs = d.outputs[:0]
		if r.one != nil {
			d.outputs = append(d.outputs, outputRef[O]{key: d.key(r.one), val: r.one})
		}
		for i := range r.many {
			p := &r.many[i]
			d.outputs = append(d.outputs, outputRef[O]{key: d.key(p), val: p})
		}
		d.outputs = uniqueOutputs(d.outputs)
		events = d.replaceOutputsLocked(rec, d.outputs, events)
		clear(d.outputs)
	}
	if !r.depsSame {
		prev := rec.deps
		rec.deps = d.deps.acquire(r.key, r.newDeps)
		d.deps.release(prev, r.key)
	}
	return events
}

// replaceOutputsLocked makes next the outputs of rec: new and changed ones
// are stored, and the ones rec no longer produces are removed unless another
// input has since stored its own value under that key.
func (d *derived[I, O]) replaceOutputsLocked(rec *inputRecord[O], next []outputRef[O], events []keyedEvent[O]) []keyedEvent[O] {
	hadKey := keyLookup(rec.outputs)
	for i := range next {
		ref := &next[i]
		if cur := d.objects[ref.key]; cur != nil && !hadKey(ref.key) {
			d.reportKeyConflict(ref.key)
		}
		if ev, changed := d.applyLocked(ref.key, ref.val); changed {
			events = append(events, ev)
		} else {
			ref.val = d.objects[ref.key] // equal: the stored value stays
		}
	}
	hasKey := keyLookup(next)
	for _, old := range rec.outputs {
		if hasKey(old.key) || d.objects[old.key] != old.val {
			continue
		}
		if ev, changed := d.applyLocked(old.key, nil); changed {
			events = append(events, ev)
		}
	}
	rec.outputs = append(rec.outputs[:0], next...)
	return events
}

// reportKeyConflict logs an output key that a second input produced. The
// first conflict of a collection is a warning; the rest are debug lines, so
// one mistake in a transformation cannot flood the log.
func (d *derived[I, O]) reportKeyConflict(key string) {
	const msg = "output key produced by more than one input; the last one wins"
	if d.conflictReported.CompareAndSwap(false, true) {
		d.cfg.logger.Warn(msg+" (further conflicts are logged at debug level)", "outputKey", key)
		return
	}
	d.cfg.logger.Debug(msg, "outputKey", key)
}

// keyLookup tells whether refs has an output with a given key: by scanning
// when refs is short, through a map when it is long.
func keyLookup[O any](refs []outputRef[O]) func(key string) bool {
	if len(refs) <= 8 {
		return func(key string) bool {
			for i := range refs {
				if refs[i].key == key {
					return true
				}
			}
			return false
		}
	}
	set := make(map[string]struct{}, len(refs))
	for i := range refs {
		set[refs[i].key] = struct{}{}
	}
	return func(key string) bool { _, ok := set[key]; return ok }
}

// uniqueOutputs keeps the last output of each key, in first-seen order.
func uniqueOutputs[O any](refs []outputRef[O]) []outputRef[O] {
	if len(refs) < 2 {
		return refs
	}
	pos := make(map[string]int, len(refs))
	out := refs[:0]
	for _, ref := range refs {
		if i, ok := pos[ref.key]; ok {
			out[i] = ref
			continue
		}
		pos[ref.key] = len(out)
		out = append(out, ref)
	}
	return out
}
