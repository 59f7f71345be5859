package kube

import (
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
