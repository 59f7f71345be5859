package krt

import (
	"fmt"
	"sync"
)

// keyedEvent is an event with the key of its object, which the store knows
// when it commits a change; passing it on saves every consumer from
// computing the key again.
type keyedEvent[T any] struct {
	key string
	Event[T]
}

// eventHandler receives the changes of a store. deliver and synced are
// called with the store's lock held, in commit order, and must not block.
// deliver must not keep the slice it is given: stores reuse it.
type eventHandler[T any] interface {
	deliver(events []keyedEvent[T])
	synced()
	stop()
}

// inlineHandler runs its callbacks in the committing goroutine. It is used
// inside the package by consumers that only queue work, such as a derived
// collection listening to its input.
type inlineHandler[T any] struct {
	onEvents func([]keyedEvent[T])
	onSynced func()
}

func (h *inlineHandler[T]) deliver(events []keyedEvent[T]) { h.onEvents(events) }

func (h *inlineHandler[T]) synced() {
	if h.onSynced != nil {
		h.onSynced()
	}
}

func (h *inlineHandler[T]) stop() {}

// handlerItem is one entry of an asyncHandler's queue: a batch of events, or
// the marker saying that everything before it makes up the initial state.
type handlerItem[T any] struct {
	events     []Event[T]
	keys       []string // with the mutation check only
	syncMarker bool
}

// asyncHandler runs a user's handler on its own goroutine, fed by an
// unbounded queue, so that a slow or blocked handler never holds up the
// collection or the other handlers. The goroutine exists only while there is
// something to deliver.
type asyncHandler[T any] struct {
	f          func([]Event[T])
	collection <-chan struct{} // the collection's stop channel
	unregister func()
	// With CheckMutation, the collection's name for the report.
	checkMutation  bool
	collectionName string
	violation      func(msg string)

	mu       sync.Mutex
	queue    []handlerItem[T]
	draining bool
	closed   bool

	syncedCh chan struct{}
	done     chan struct{} // closed by stop
	stopOnce sync.Once
}

func newAsyncHandler[T any](f func([]Event[T]), collectionStop <-chan struct{}) *asyncHandler[T] {
	return &asyncHandler[T]{
		f:          f,
		collection: collectionStop,
		syncedCh:   make(chan struct{}),
		done:       make(chan struct{}),
	}
}

func (h *asyncHandler[T]) deliver(events []keyedEvent[T]) {
	item := handlerItem[T]{events: make([]Event[T], len(events))}
	for i := range events {
		item.events[i] = events[i].Event
	}
	if h.checkMutation {
		item.keys = make([]string, len(events))
		for i := range events {
			item.keys[i] = events[i].key
		}
	}
	h.push(item)
}

func (h *asyncHandler[T]) synced() { h.push(handlerItem[T]{syncMarker: true}) }

func (h *asyncHandler[T]) push(item handlerItem[T]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.queue = append(h.queue, item)
	if !h.draining {
		h.draining = true
		go h.drain()
	}
}

// drain delivers queued items in order until the queue is empty.
func (h *asyncHandler[T]) drain() {
	for {
		h.mu.Lock()
		if h.closed || len(h.queue) == 0 {
			h.draining = false
			h.queue = nil
			h.mu.Unlock()
			return
		}
		items := h.queue
		h.queue = nil
		h.mu.Unlock()

		for _, item := range items {
			if h.isClosed() {
				break
			}
			if item.syncMarker {
				close(h.syncedCh)
				continue
			}
			h.call(item)
		}
	}
}

// call hands one batch to the handler, checking afterwards that it changed
// none of the objects when CheckMutation is on.
func (h *asyncHandler[T]) call(item handlerItem[T]) {
	if !h.checkMutation {
		h.f(item.events)
		return
	}
	var watched []watchedObject
	for i, e := range item.events {
		for _, o := range [2]*T{e.Old, e.New} {
			if o != nil {
				watched = append(watched, watchObject(h.collectionName, item.keys[i], o))
			}
		}
	}
	h.f(item.events)
	for _, o := range watched {
		o.checkUnchanged(fmt.Sprintf("a handler of collection %q", h.collectionName), h.violation)
	}
}

func (h *asyncHandler[T]) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

func (h *asyncHandler[T]) stop() {
	h.stopOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		h.queue = nil
		h.mu.Unlock()
		close(h.done)
	})
}

// HasSynced reports whether the handler has seen the initial state.
func (h *asyncHandler[T]) HasSynced() bool { return isClosed(h.syncedCh) }

// WaitUntilSynced waits for the handler to see the initial state; it returns
// false if stop, the collection's stop or UnregisterHandler comes first.
func (h *asyncHandler[T]) WaitUntilSynced(stop <-chan struct{}) bool {
	return waitClosed(h.syncedCh, stop, h.collection, h.done)
}

// UnregisterHandler stops delivery to the handler.
func (h *asyncHandler[T]) UnregisterHandler() {
	h.unregister()
	h.stop()
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitClosed waits for ch to close and reports true, or for any of cancel
// to close first and reports whether ch closed anyway. Nil cancel channels
// are ignored.
func waitClosed(ch <-chan struct{}, cancel ...<-chan struct{}) bool {
	for len(cancel) < 3 {
		cancel = append(cancel, nil)
	}
	select {
	case <-ch:
		return true
	case <-cancel[0]:
	case <-cancel[1]:
	case <-cancel[2]:
	}
	return isClosed(ch)
}
