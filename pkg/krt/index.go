package krt

import (
	"fmt"
	"slices"
	"sync"
)

// Index finds the objects of a collection by a derived key, such as their
// namespace or a field they reference.
type Index[K comparable, O any] interface {
	// Lookup returns the objects indexed under k, ordered by object key. It
	// records no dependency; inside a transformation use Fetch.
	Lookup(k K) []O
	// Fetch returns the objects indexed under k that pass filters, ordered by
	// object key, and records the dependency like krt.Fetch.
	Fetch(ctx HandlerContext, k K, filters ...FetchOption) []O
	// AsCollection groups the objects by index key: one IndexObject per key
	// that has objects, kept up to date.
	AsCollection(opts ...CollectionOption) Collection[IndexObject[K, O]]
}

// IndexObject is the group of objects an index files under one key.
type IndexObject[K comparable, O any] struct {
	Key     K
	Objects []O
	name    string
}

// ResourceName is the index key as a string.
func (o IndexObject[K, O]) ResourceName() string { return o.name }

// Equals compares two groups object by object with Equal, so that objects
// with an Equals method, or protobuf messages inside them, are compared
// as their type says rather than by reflection (which reads a message's
// internal caches while other goroutines may be filling them).
func (o IndexObject[K, O]) Equals(other IndexObject[K, O]) bool {
	return indexObjectsEqual[K](equalFuncFor[O]())(o, other)
}

// indexObjectsEqual compares groups with eq for their objects; an index
// collection chooses eq once, not on every comparison.
func indexObjectsEqual[K comparable, O any](eq func(a, b *O) bool) func(a, b IndexObject[K, O]) bool {
	return func(a, b IndexObject[K, O]) bool {
		return a.Key == b.Key && a.name == b.name && slices.EqualFunc(a.Objects, b.Objects, func(x, y O) bool { return eq(&x, &y) })
	}
}

// NewIndex indexes the objects of c by the keys extract returns. Indexes are
// kept by the collection itself, updated in the same step as the objects, so
// a lookup never disagrees with the events that were delivered. Two indexes
// with the same name on one collection are the same index.
func NewIndex[K comparable, O any](c Collection[O], name string, extract func(o O) []K) Index[K, O] {
	s := storeOf(c)
	toString := indexKeyString[K]()
	return &index[K, O]{
		store:  s,
		keysOf: func(o *O) []K { return extract(*o) },
		idx: s.addIndex(name, func(o *O) []string {
			keys := extract(*o)
			if strs, ok := any(keys).([]string); ok {
				return strs
			}
			out := make([]string, len(keys))
			for i, k := range keys {
				out[i] = toString(k)
			}
			return out
		}, nil),
		toString: toString,
	}
}

// NewNamespaceIndex indexes the objects of c by namespace.
func NewNamespaceIndex[O any](c Collection[O]) Index[string, O] {
	s := storeOf(c)
	ns := s.access.namespace
	if ns == nil {
		panic(fmt.Sprintf("krt: NewNamespaceIndex: collection %q holds %T, which has no namespace", s.cfg.name, *new(O)))
	}
	keys := func(o *O) []string { return []string{ns(o)} }
	idx := s.addIndex("namespace", keys, func(o *O, key string) bool { return ns(o) == key })
	return &index[string, O]{store: s, idx: idx, keysOf: keys, toString: func(k string) string { return k }}
}

type index[K comparable, O any] struct {
	store    *store[O]
	idx      *storeIndex[O]
	keysOf   func(*O) []K
	toString func(K) string
}

func (i *index[K, O]) Lookup(k K) []O {
	var f filter
	f.setIndex(indexFilter{ref: i.idx, key: i.toString(k)})
	return readObjects(i.store, &f)
}

func (i *index[K, O]) Fetch(ctx HandlerContext, k K, filters ...FetchOption) []O {
	return fetch(ctx, i.store, indexFilter{ref: i.idx, key: i.toString(k)}, filters)
}

func (i *index[K, O]) AsCollection(opts ...CollectionOption) Collection[IndexObject[K, O]] {
	// Equality first, so an option of the caller's can replace it.
	opts = append([]CollectionOption{WithEquality(indexObjectsEqual[K](equalFuncFor[O]()))}, opts...)
	cfg := newConfig[IndexObject[K, O]]("IndexCollection", opts)
	var keys sync.Map // index key string -> K, for the keys seen so far
	v := newView(cfg, func(o *IndexObject[K, O]) string { return o.name }, 1, func(name string) *IndexObject[K, O] {
		k, ok := keys.Load(name)
		if !ok {
			return nil
		}
		var f filter
		f.setIndex(indexFilter{ref: i.idx, key: name})
		objs := readObjects(i.store, &f)
		if len(objs) == 0 {
			return nil
		}
		return &IndexObject[K, O]{Key: k.(K), Objects: objs, name: name}
	})
	subscribeView(v, i.store, func(e *keyedEvent[O], out []string) []string {
		for _, o := range [2]*O{e.Old, e.New} {
			if o == nil {
				continue
			}
			for _, k := range i.keysOf(o) {
				name := i.toString(k)
				keys.Store(name, k)
				out = append(out, name)
			}
		}
		return out
	})
	v.start()
	return v
}

// indexKeyString converts index keys to the strings the store indexes by.
func indexKeyString[K comparable]() func(K) string {
	var zero K
	if _, ok := any(zero).(string); ok {
		return func(k K) string { return any(k).(string) }
	}
	if _, ok := any(zero).(fmt.Stringer); ok {
		return func(k K) string { return any(k).(fmt.Stringer).String() }
	}
	return func(k K) string { return fmt.Sprint(k) }
}

// storeIndex maps index keys to the keys of the objects that have them.
type storeIndex[T any] struct {
	name     string
	extract  func(*T) []string
	has      func(*T, string) bool // optional: extract without allocating
	postings map[string]map[string]struct{}
}

func (x *storeIndex[T]) extractErased(obj any) []string { return x.extract(obj.(*T)) }

func (x *storeIndex[T]) hasKey(obj any, key string) bool {
	if x.has != nil {
		return x.has(obj.(*T), key)
	}
	return slices.Contains(x.extract(obj.(*T)), key)
}

func (x *storeIndex[T]) indexName() string { return x.name }

// addIndex returns the index called name, building it over the current
// objects if it does not exist yet. has, if not nil, answers whether an
// object is filed under a key without building the list of its keys.
func (s *store[T]) addIndex(name string, extract func(*T) []string, has func(*T, string) bool) *storeIndex[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.indexes[name]; ok {
		return x
	}
	x := &storeIndex[T]{name: name, extract: extract, has: has, postings: map[string]map[string]struct{}{}}
	for k, o := range s.objects {
		x.add(k, extract(o))
	}
	s.indexes[name] = x
	return x
}

func (x *storeIndex[T]) add(objKey string, indexKeys []string) {
	for _, ik := range indexKeys {
		set := x.postings[ik]
		if set == nil {
			set = map[string]struct{}{}
			x.postings[ik] = set
		}
		set[objKey] = struct{}{}
	}
}

func (x *storeIndex[T]) remove(objKey string, indexKeys []string) {
	for _, ik := range indexKeys {
		set := x.postings[ik]
		delete(set, objKey)
		if len(set) == 0 {
			delete(x.postings, ik)
		}
	}
}

// reindexLocked moves an object from the index keys of old to those of obj.
func (s *store[T]) reindexLocked(key string, old, obj *T) {
	for _, x := range s.indexes {
		var before, after []string
		if old != nil {
			before = x.extract(old)
		}
		if obj != nil {
			after = x.extract(obj)
		}
		if slices.Equal(before, after) {
			continue
		}
		x.remove(key, before)
		x.add(key, after)
	}
	if x := s.byLabel.Load(); x != nil {
		x.update(key, old, obj)
	}
	if x := s.bySelector.Load(); x != nil {
		x.update(key, old, obj)
	}
}
