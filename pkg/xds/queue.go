package xds

import "sync"

// pushQueue holds the connections waiting for a push, each at most once:
// a request for a connection already waiting merges into the one it has,
// and a connection being pushed is not handed out again until done, so a
// client never has two pushes in flight and a burst of changes costs it
// one push. Workers take connections in the order they were queued.
type pushQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	order    []*connection
	pending  map[*connection]*PushRequest
	inFlight map[*connection]bool
	closed   bool
}

func newPushQueue() *pushQueue {
	q := &pushQueue{pending: map[*connection]*PushRequest{}, inFlight: map[*connection]bool{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// enqueue asks for a push of req to c.
func (q *pushQueue) enqueue(c *connection, req *PushRequest) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if prev, waiting := q.pending[c]; waiting {
		q.pending[c] = prev.Merge(req)
		return
	}
	q.pending[c] = req
	if !q.inFlight[c] {
		q.order = append(q.order, c)
		q.cond.Signal()
	}
}

// next blocks until a connection is due and hands it out with its merged
// request; ok is false once the queue is closed.
func (q *pushQueue) next() (c *connection, req *PushRequest, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.order) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, nil, false
	}
	c = q.order[0]
	q.order[0] = nil
	q.order = q.order[1:]
	req = q.pending[c]
	delete(q.pending, c)
	q.inFlight[c] = true
	return c, req, true
}

// done marks c's push finished; a request that arrived meanwhile queues it
// again.
func (q *pushQueue) done(c *connection) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.inFlight, c)
	if _, waiting := q.pending[c]; waiting && !q.closed {
		q.order = append(q.order, c)
		q.cond.Signal()
	}
}

// remove forgets a connection that closed.
func (q *pushQueue) remove(c *connection) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.pending, c)
	for i, o := range q.order {
		if o == c {
			q.order = append(q.order[:i], q.order[i+1:]...)
			break
		}
	}
}

// close wakes every worker and makes them return.
func (q *pushQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// length is the number of connections waiting.
func (q *pushQueue) length() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}
