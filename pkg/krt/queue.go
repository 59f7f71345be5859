package krt

import "sync"

// workQueue collects the work of one derived collection: changed inputs
// (coalesced by key, keeping the latest object and the order in which keys
// first arrived), changes of fetched collections, and the request to mark
// the collection synced. Producers never block; one worker drains it.
type workQueue[I any] struct {
	mu      sync.Mutex
	batch   workBatch[I]
	spare   workBatch[I] // recycled by the worker to avoid reallocating
	pending bool
	wake    chan struct{}
}

// workBatch is what the worker takes in one go.
type workBatch[I any] struct {
	order       []string
	inputs      map[string]*I // latest object per key; nil when deleted
	depEvents   []fetchedChange
	syncRequest bool
}

// fetchedChange is a batch of events of a collection that was fetched.
type fetchedChange struct {
	src    *source
	events []erasedEvent
}

func newWorkQueue[I any]() *workQueue[I] {
	return &workQueue[I]{
		batch: workBatch[I]{inputs: map[string]*I{}},
		spare: workBatch[I]{inputs: map[string]*I{}},
		wake:  make(chan struct{}, 1),
	}
}

// pushInputs queues changed inputs. It runs inline in the parent's commit.
func (q *workQueue[I]) pushInputs(events []keyedEvent[I]) {
	q.mu.Lock()
	for i := range events {
		e := &events[i]
		if _, queued := q.batch.inputs[e.key]; !queued {
			q.batch.order = append(q.batch.order, e.key)
		}
		q.batch.inputs[e.key] = e.New // nil for a delete
	}
	q.signalLocked()
	q.mu.Unlock()
}

// pushKeys queues keys to recompute, for collections that look their
// inputs up by key rather than receive them.
func (q *workQueue[I]) pushKeys(keys []string) {
	if len(keys) == 0 {
		return
	}
	q.mu.Lock()
	for _, k := range keys {
		if _, queued := q.batch.inputs[k]; !queued {
			q.batch.order = append(q.batch.order, k)
			q.batch.inputs[k] = nil
		}
	}
	q.signalLocked()
	q.mu.Unlock()
}

// pushFetched queues changes of a fetched collection.
func (q *workQueue[I]) pushFetched(src *source, events []erasedEvent) {
	q.mu.Lock()
	q.batch.depEvents = append(q.batch.depEvents, fetchedChange{src, events})
	q.signalLocked()
	q.mu.Unlock()
}

// requestSync asks the worker to mark the collection synced once everything
// queued so far is processed.
func (q *workQueue[I]) requestSync() {
	q.mu.Lock()
	q.batch.syncRequest = true
	q.signalLocked()
	q.mu.Unlock()
}

func (q *workQueue[I]) signalLocked() {
	if q.pending {
		return
	}
	q.pending = true
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// hasFetched reports whether changes of fetched collections are waiting.
func (q *workQueue[I]) hasFetched() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.batch.depEvents) > 0
}

// depth returns how much work is waiting: inputs and batches of fetched
// changes.
func (q *workQueue[I]) depth() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.batch.order) + len(q.batch.depEvents)
}

// take returns everything queued and leaves the queue empty.
func (q *workQueue[I]) take() workBatch[I] {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.batch
	q.batch, q.spare = q.spare, workBatch[I]{}
	q.pending = false
	return b
}

// recycle hands a processed batch back for reuse, unless it grew too big
// to be worth keeping (maps never shrink).
func (q *workQueue[I]) recycle(b workBatch[I]) {
	if len(b.inputs) > scratchLimit {
		b.inputs = map[string]*I{}
	} else {
		clear(b.inputs)
	}
	clear(b.order)
	clear(b.depEvents)
	b.order, b.depEvents, b.syncRequest = keepSmall(b.order), keepSmall(b.depEvents), false
	q.mu.Lock()
	q.spare = b
	q.mu.Unlock()
}

// run is the worker loop: it hands everything queued to process, batch
// after batch, until stop closes.
func (q *workQueue[I]) run(stop <-chan struct{}, process func(*workBatch[I])) {
	for {
		select {
		case <-stop:
			return
		case <-q.wake:
		}
		b := q.take()
		process(&b)
		q.recycle(b)
	}
}
