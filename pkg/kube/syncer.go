package kube

import (
	"sync"

	"k8s.io/client-go/tools/cache"
)

// registrationSyncer is synced once the informer has delivered its initial
// list to our handler. The registration only exists after the collection
// that needs the syncer is built, hence the ready channel.
type registrationSyncer struct {
	ready chan struct{}
	reg   cache.ResourceEventHandlerRegistration
}

func (s *registrationSyncer) set(reg cache.ResourceEventHandlerRegistration) {
	s.reg = reg
	close(s.ready)
}

func (s *registrationSyncer) HasSynced() bool {
	select {
	case <-s.ready:
		return s.reg.HasSynced()
	default:
		return false
	}
}

func (s *registrationSyncer) WaitUntilSynced(stop <-chan struct{}) bool {
	select {
	case <-s.ready:
	case <-stop:
		return false
	}
	select {
	case <-s.reg.HasSyncedChecker().Done():
		return true
	case <-stop:
		return s.reg.HasSynced()
	}
}

// syncGate is a krt.Syncer that syncs when open is called, for
// collections whose sync depends on more than one informer.
type syncGate struct {
	once sync.Once
	ch   chan struct{}
}

func newSyncGate() *syncGate { return &syncGate{ch: make(chan struct{})} }

// open marks the gate synced; later calls do nothing.
func (g *syncGate) open() { g.once.Do(func() { close(g.ch) }) }

func (g *syncGate) HasSynced() bool {
	select {
	case <-g.ch:
		return true
	default:
		return false
	}
}

func (g *syncGate) WaitUntilSynced(stop <-chan struct{}) bool {
	select {
	case <-g.ch:
		return true
	case <-stop:
		return g.HasSynced()
	}
}
