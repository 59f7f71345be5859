package krt

import (
	"cmp"
	"slices"
	"sync"
)

// DebugHandler keeps a registry of running collections for debugging: every
// collection built WithDebugging registers under its name and a unique id
// and leaves when it is stopped.
type DebugHandler struct {
	mu      sync.Mutex
	nextUID uint64
	entries map[debuggable]uint64
}

// NewDebugHandler returns an empty registry.
func NewDebugHandler() *DebugHandler {
	return &DebugHandler{entries: map[debuggable]uint64{}}
}

// DebugCollection describes one registered collection.
type DebugCollection struct {
	UID    uint64
	Name   string
	Synced bool
}

// Collections lists the registered collections in registration order.
func (d *DebugHandler) Collections() []DebugCollection {
	d.mu.Lock()
	out := make([]DebugCollection, 0, len(d.entries))
	for c, uid := range d.entries {
		out = append(out, DebugCollection{UID: uid, Name: c.debugName(), Synced: c.HasSynced()})
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b DebugCollection) int { return cmp.Compare(a.UID, b.UID) })
	return out
}

// debuggable is what the registry needs from a collection.
type debuggable interface {
	debugName() string
	HasSynced() bool
}

func (s *store[T]) debugName() string { return s.cfg.name }

func (d *DebugHandler) register(c debuggable) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextUID++
	d.entries[c] = d.nextUID
}

func (d *DebugHandler) unregister(c debuggable) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.entries, c)
}
