package krt

import "sync/atomic"

// collectionStats counts what a collection did, for metrics and tests. All
// fields are updated atomically by the collection and read at any time.
type collectionStats struct {
	inputEvents      atomic.Uint64 // changes of the primary input received
	fetchedEvents    atomic.Uint64 // changes of fetched collections received
	eventsOut        atomic.Uint64 // events dispatched to handlers
	recomputations   atomic.Uint64 // transformation runs
	panics           atomic.Uint64 // transformation runs that panicked
	checks           atomic.Uint64 // dependency lists checked against fetched events
	purityViolations atomic.Uint64 // transformations whose two runs differed (CheckPurity)
	impacts          impactHistogram
	syncedAfter      atomic.Int64 // nanoseconds from construction to synced; 0 until then
}

// impactBounds are the upper bounds of the buckets of impactHistogram.
var impactBounds = [...]float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000}

// impactHistogram records how many inputs each batch of fetched-collection
// events recomputed: the figure that tells a well-indexed dependency (a
// handful) from one that scans (the whole collection).
type impactHistogram struct {
	buckets [len(impactBounds)]atomic.Uint64 // cumulative counts are built at read time
	count   atomic.Uint64
	sum     atomic.Uint64
}

func (h *impactHistogram) observe(n int) {
	for i, bound := range impactBounds {
		if float64(n) <= bound {
			h.buckets[i].Add(1)
			break
		}
	}
	h.count.Add(1)
	h.sum.Add(uint64(n))
}
