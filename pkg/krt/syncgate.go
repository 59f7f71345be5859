package krt

import "sync"

// SyncGate is a Syncer that is synced once MarkSynced is called: the sync
// state of a source krt does not run itself, such as a collection that
// waits on several informers, or a test that needs to hold a collection
// back.
type SyncGate struct {
	once sync.Once
	ch   chan struct{}
}

// NewSyncGate returns a gate that is not synced yet.
func NewSyncGate() *SyncGate { return &SyncGate{ch: make(chan struct{})} }

// MarkSynced opens the gate; later calls do nothing.
func (g *SyncGate) MarkSynced() { g.once.Do(func() { close(g.ch) }) }

// HasSynced reports whether the gate is open.
func (g *SyncGate) HasSynced() bool { return isClosed(g.ch) }

// WaitUntilSynced waits for the gate to open, or returns false when stop
// closes first.
func (g *SyncGate) WaitUntilSynced(stop <-chan struct{}) bool { return waitClosed(g.ch, stop) }
