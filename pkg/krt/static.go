package krt

import (
	"fmt"
	"maps"
	"slices"
)

// NewStaticCollection returns a collection whose content is written from
// outside the graph. It starts with vals and is synced once synced is (nil:
// at once).
func NewStaticCollection[T any](synced Syncer, vals []T, opts ...CollectionOption) StaticCollection[T] {
	cfg := newConfig[T]("StaticCollection", opts)
	if cfg.access.key == nil {
		var zero T
		panic(fmt.Sprintf("krt: static collection %q: cannot compute a key for %T: implement ResourceName() or GetName()/GetNamespace()", cfg.name, zero))
	}
	return newStaticCollection(cfg, cfg.access.key, synced, vals)
}

type staticCollection[T any] struct {
	*store[T]
}

func newStaticCollection[T any](cfg collectionConfig[T], key func(*T) string, synced Syncer, vals []T) *staticCollection[T] {
	c := &staticCollection[T]{store: newStore(cfg, key)}
	c.Reset(vals)
	if synced == nil {
		c.markSynced()
	}
	cfg.debugger.register(c.store, c.store)
	go func() {
		if synced != nil && synced.WaitUntilSynced(cfg.stop) {
			c.markSynced()
		}
		<-cfg.stop
		c.shutdown()
		cfg.debugger.unregister(c.store)
	}()
	return c
}

// UpdateObject adds obj or replaces the object with its key.
func (c *staticCollection[T]) UpdateObject(obj T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := &obj
	if ev, changed := c.applyLocked(c.key(p), p); changed {
		c.dispatchOneLocked(ev)
	}
}

// DeleteObject removes the object stored under key.
func (c *staticCollection[T]) DeleteObject(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev, changed := c.applyLocked(key, nil); changed {
		c.dispatchOneLocked(ev)
	}
}

// DeleteObjects removes every object for which match returns true, in key
// order, as one batch.
func (c *staticCollection[T]) DeleteObjects(match func(obj T) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var events []keyedEvent[T]
	for _, k := range slices.Sorted(maps.Keys(c.objects)) {
		if match(*c.objects[k]) {
			ev, _ := c.applyLocked(k, nil)
			events = append(events, ev)
		}
	}
	c.dispatchLocked(events)
}

// Reset replaces the content with objs, as one batch: deletes of the keys
// that are gone (in key order), then adds and updates in the order of objs.
func (c *staticCollection[T]) Reset(objs []T) {
	ptrs := make([]*T, len(objs))
	for i := range objs {
		ptrs[i] = &objs[i]
	}
	c.resetPointers(ptrs)
}

func (c *staticCollection[T]) resetPointers(objs []*T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, len(objs))
	next := make(map[string]struct{}, len(objs))
	for i, o := range objs {
		keys[i] = c.key(o)
		next[keys[i]] = struct{}{}
	}
	var events []keyedEvent[T]
	for _, k := range slices.Sorted(maps.Keys(c.objects)) {
		if _, keep := next[k]; !keep {
			ev, _ := c.applyLocked(k, nil)
			events = append(events, ev)
		}
	}
	for i, o := range objs {
		if ev, changed := c.applyLocked(keys[i], o); changed {
			events = append(events, ev)
		}
	}
	c.dispatchLocked(events)
}
