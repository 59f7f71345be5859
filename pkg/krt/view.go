package krt

import (
	"sync"
	"sync/atomic"
)

// view is a collection whose object under each key is recomputed from other
// collections by a function of the key: joins and index views are views.
// Sources only report which keys changed, inline and without blocking; one
// worker recomputes those keys outside any lock and commits them as one
// batch. Looking the sources up from the worker, rather than in a source's
// commit, keeps two sources' locks from ever being taken in opposite orders.
type view[T any] struct {
	*store[T]
	compute func(key string) *T
	queue   *workQueue[struct{}]

	unsyncedSources atomic.Int32
	mu              sync.Mutex // guards unsubscribe and sources
	unsubscribe     []func()
	sources         []storeHandle
}

func newView[T any](cfg collectionConfig[T], key func(*T) string, sources int, compute func(key string) *T) *view[T] {
	v := &view[T]{
		store:   newStore(cfg, key),
		compute: compute,
		queue:   newWorkQueue[struct{}](),
	}
	v.unsyncedSources.Store(int32(sources))
	if sources == 0 {
		v.queue.requestSync()
	}
	return v
}

// subscribeView makes v recompute the keys keysOf returns for every change
// of src, starting with src's current content.
func subscribeView[S, T any](v *view[T], src *store[S], keysOf func(e *keyedEvent[S], keys []string) []string) {
	unsubscribe := src.addHandler(&inlineHandler[S]{
		onEvents: func(events []keyedEvent[S]) {
			var keys []string
			for i := range events {
				keys = keysOf(&events[i], keys)
			}
			v.queue.pushKeys(keys)
		},
		onSynced: func() {
			if v.unsyncedSources.Add(-1) == 0 {
				v.queue.requestSync()
			}
		},
	}, true)
	v.mu.Lock()
	v.unsubscribe = append(v.unsubscribe, unsubscribe)
	v.sources = append(v.sources, src)
	v.mu.Unlock()
}

// start runs the worker; call it once every source is subscribed.
func (v *view[T]) start() {
	v.cfg.debugger.register(v.store, v)
	go func() {
		defer v.close()
		v.queue.run(v.cfg.stop, v.process)
	}()
}

func (v *view[T]) process(b *workBatch[struct{}]) {
	results := make([]*T, len(b.order))
	for i, k := range b.order {
		results[i] = v.compute(k)
	}
	v.store.mu.Lock()
	var events []keyedEvent[T]
	for i, k := range b.order {
		if ev, changed := v.applyLocked(k, results[i]); changed {
			events = append(events, ev)
		}
	}
	v.dispatchLocked(events)
	if b.syncRequest {
		v.markSyncedLocked()
	}
	v.store.mu.Unlock()
}

func (v *view[T]) close() {
	v.mu.Lock()
	for _, unsubscribe := range v.unsubscribe {
		unsubscribe()
	}
	v.unsubscribe = nil
	v.mu.Unlock()
	v.shutdown()
	v.cfg.debugger.unregister(v.store)
}

// upstream lists the collections the view reads, for the debug graph.
func (v *view[T]) upstream() []graphEdge {
	v.mu.Lock()
	defer v.mu.Unlock()
	edges := make([]graphEdge, len(v.sources))
	for i, s := range v.sources {
		edges[i] = graphEdge{from: s, kind: "input"}
	}
	return edges
}
