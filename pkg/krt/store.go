package krt

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// store is the state every collection kind shares: objects by key, the
// indexes over them, the registered handlers and the sync state. Changes
// are applied and announced under one lock, so a handler that registers
// with the existing state sees every change exactly once.
type store[T any] struct {
	cfg    collectionConfig[T]
	access *objectAccess[T]
	src    *source
	key    func(*T) string

	mu      sync.RWMutex
	scratch []keyedEvent[T] // reused for single-object commits
	objects map[string]*T
	indexes map[string]*storeIndex[T]
	// Built on first use by label and selector filters; see prepareRead.
	byLabel    atomic.Pointer[labelIndex[T]]
	bySelector atomic.Pointer[labelIndex[T]]
	handlers   []eventHandler[T]
	synced     bool
	stopped    bool
	syncedCh   chan struct{}

	// For debugging and metrics.
	uid           atomic.Uint64 // set by a DebugHandler; 0 when not registered
	stats         collectionStats
	created       time.Time
	extraUpstream []graphEdge // upstream collections beyond the kind's own, under mu
}

func newStore[T any](cfg collectionConfig[T], key func(*T) string) *store[T] {
	return &store[T]{
		cfg:      cfg,
		access:   cfg.access,
		src:      newSource(cfg.name, cfg.access),
		key:      key,
		objects:  map[string]*T{},
		indexes:  map[string]*storeIndex[T]{},
		syncedCh: make(chan struct{}),
		created:  time.Now(),
	}
}

func (s *store[T]) getStore() *store[T] { return s }

func (s *store[T]) source() *source { return s.src }

// GetKey returns the object stored under key, or nil.
func (s *store[T]) GetKey(key string) *T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.objects[key]
}

// List returns every object, in no particular order.
func (s *store[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.objects))
	for _, o := range s.objects {
		out = append(out, *o)
	}
	return out
}

// only returns the single object of a singleton, or nil.
func (s *store[T]) only() *T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, o := range s.objects {
		return o
	}
	return nil
}

// Metadata returns the collection's metadata.
func (s *store[T]) Metadata() Metadata { return s.cfg.metadata }

// HasSynced reports whether the collection has its initial state.
func (s *store[T]) HasSynced() bool { return isClosed(s.syncedCh) }

// WaitUntilSynced waits for the initial state, or returns false when stop or
// the collection's own stop channel closes first.
func (s *store[T]) WaitUntilSynced(stop <-chan struct{}) bool {
	return waitClosed(s.syncedCh, stop, s.cfg.stop)
}

// Register calls f for every change, starting with the existing state.
func (s *store[T]) Register(f func(Event[T])) HandlerRegistration {
	return s.RegisterBatch(func(events []Event[T]) {
		for _, e := range events {
			f(e)
		}
	}, true)
}

// RegisterBatch calls f with batches of changes on a goroutine of its own.
func (s *store[T]) RegisterBatch(f func([]Event[T]), runExistingState bool) HandlerRegistration {
	h := newAsyncHandler(f, s.cfg.stop)
	h.checkMutation, h.collectionName, h.violation = s.cfg.checks&CheckMutation != 0, s.cfg.name, s.cfg.violation
	h.unregister = s.addHandler(h, runExistingState)
	return h
}

// addHandler registers h and returns the function that removes it. With
// runExisting, the current objects are delivered to h first, as one batch of
// ADD events ordered by key; nothing committed later can come before them
// or be missed, since both happen under the same lock.
func (s *store[T]) addHandler(h eventHandler[T], runExisting bool) (unregister func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		h.stop()
		return func() {}
	}
	if runExisting && len(s.objects) > 0 {
		initial := make([]keyedEvent[T], 0, len(s.objects))
		for k, o := range s.objects {
			initial = append(initial, keyedEvent[T]{key: k, Event: Event[T]{New: o, Event: EventAdd}})
		}
		slices.SortFunc(initial, func(a, b keyedEvent[T]) int { return strings.Compare(a.key, b.key) })
		h.deliver(initial)
	}
	if s.synced {
		h.synced()
	}
	s.handlers = append(s.handlers, h)
	return func() { s.removeHandler(h) }
}

func (s *store[T]) removeHandler(h eventHandler[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = slices.DeleteFunc(s.handlers, func(x eventHandler[T]) bool { return x == h })
}

// registerErased subscribes a dependent collection to this one's changes,
// delivered inline in type-erased form. It is how Fetch keeps a dependent
// informed: it is called before the first read, so no change can slip in
// between.
func (s *store[T]) registerErased(onEvents func([]erasedEvent)) (unregister func()) {
	return s.addHandler(&inlineHandler[T]{onEvents: func(events []keyedEvent[T]) {
		erased := make([]erasedEvent, len(events))
		for i, e := range events {
			erased[i] = erasedEvent{key: e.key}
			if e.Old != nil {
				erased[i].old = e.Old
			}
			if e.New != nil {
				erased[i].new = e.New
			}
		}
		onEvents(erased)
	}}, false)
}

// applyLocked stores obj under key (nil deletes) and returns the event that
// describes the change, or false when nothing changed. Indexes are updated
// with the object. The caller holds the write lock.
func (s *store[T]) applyLocked(key string, obj *T) (keyedEvent[T], bool) {
	old := s.objects[key]
	switch {
	case old == nil && obj == nil:
		return keyedEvent[T]{}, false
	case obj == nil:
		delete(s.objects, key)
		s.reindexLocked(key, old, nil)
		return keyedEvent[T]{key: key, Event: Event[T]{Old: old, Event: EventDelete}}, true
	case old == nil:
		s.objects[key] = obj
		s.reindexLocked(key, nil, obj)
		return keyedEvent[T]{key: key, Event: Event[T]{New: obj, Event: EventAdd}}, true
	case old == obj || s.access.equal(old, obj):
		return keyedEvent[T]{}, false
	default:
		s.objects[key] = obj
		s.reindexLocked(key, old, obj)
		return keyedEvent[T]{key: key, Event: Event[T]{Old: old, New: obj, Event: EventUpdate}}, true
	}
}

// dispatchLocked hands a batch of committed changes to every handler. The
// caller holds the write lock.
func (s *store[T]) dispatchLocked(events []keyedEvent[T]) {
	if len(events) == 0 {
		return
	}
	s.stats.eventsOut.Add(uint64(len(events)))
	for _, h := range s.handlers {
		h.deliver(events)
	}
}

// dispatchOneLocked dispatches a single event without allocating a batch.
func (s *store[T]) dispatchOneLocked(ev keyedEvent[T]) {
	s.scratch = append(s.scratch[:0], ev)
	s.dispatchLocked(s.scratch)
	clear(s.scratch)
}

// markSynced records that the initial state is complete and tells every
// handler, after the events it has already been given.
func (s *store[T]) markSynced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markSyncedLocked()
}

func (s *store[T]) markSyncedLocked() {
	if s.synced || s.stopped {
		return
	}
	s.synced = true
	s.stats.syncedAfter.Store(int64(time.Since(s.created)))
	close(s.syncedCh)
	for _, h := range s.handlers {
		h.synced()
	}
	if uid := s.uid.Load(); uid != 0 {
		s.cfg.logger.Debug(fmt.Sprintf("%s synced (uid %d)", s.cfg.name, uid), "objects", len(s.objects))
	} else {
		s.cfg.logger.Debug(s.cfg.name+" synced", "objects", len(s.objects))
	}
}

// shutdown stops every handler; the objects stay readable.
func (s *store[T]) shutdown() {
	s.mu.Lock()
	handlers := s.handlers
	s.handlers = nil
	s.stopped = true
	s.mu.Unlock()
	for _, h := range handlers {
		h.stop()
	}
}
