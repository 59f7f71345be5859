package xds

import (
	"sync"
	"sync/atomic"
)

// ledger wakes whoever waits for clients to catch up (/debug/syncz?wait=)
// when the ACK state of any connection changes. With nobody waiting a
// notification costs one atomic load.
type ledger struct {
	waiting atomic.Int32
	mu      sync.Mutex
	waiters map[chan struct{}]struct{}
}

func newLedger() *ledger { return &ledger{waiters: map[chan struct{}]struct{}{}} }

// notify wakes every waiter.
func (l *ledger) notify() {
	if l.waiting.Load() == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// subscribe returns a channel that receives after changes, and its cancel.
func (l *ledger) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	l.waiters[ch] = struct{}{}
	l.mu.Unlock()
	l.waiting.Add(1)
	return ch, func() {
		l.mu.Lock()
		delete(l.waiters, ch)
		l.mu.Unlock()
		l.waiting.Add(-1)
	}
}
