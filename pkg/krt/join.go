package krt

import "fmt"

// JoinCollection combines collections of the same type into one. When
// several hold a key, the first collection in cs that has it wins: adding a
// key to a higher-priority collection is an UPDATE of the joined object,
// deleting the winning copy falls back (as an UPDATE) to the next copy, and
// the key is deleted only when no collection has it. The joined collection
// holds one object per key, so List, GetKey and indexes never see
// duplicates.
func JoinCollection[T any](cs []Collection[T], opts ...CollectionOption) Collection[T] {
	stores := storesOf(cs)
	return newJoin(newConfig[T]("Join", opts), stores, func(key string) *T {
		for _, s := range stores {
			if o := s.GetKey(key); o != nil {
				return o
			}
		}
		return nil
	})
}

// JoinWithMergeCollection combines collections of the same type into one,
// merging every copy of a key with merge (copies are passed in the order of
// cs). merge returning nil removes the key.
func JoinWithMergeCollection[T any](cs []Collection[T], merge func(copies []T) *T, opts ...CollectionOption) Collection[T] {
	stores := storesOf(cs)
	return newJoin(newConfig[T]("MergeJoin", opts), stores, func(key string) *T {
		var copies []T
		for _, s := range stores {
			if o := s.GetKey(key); o != nil {
				copies = append(copies, *o)
			}
		}
		if len(copies) == 0 {
			return nil
		}
		return merge(copies)
	})
}

func newJoin[T any](cfg collectionConfig[T], stores []*store[T], compute func(key string) *T) Collection[T] {
	key := cfg.access.key
	if key == nil {
		panic(fmt.Sprintf("krt: join %q: cannot compute a key for %T: implement ResourceName() or GetName()/GetNamespace()", cfg.name, *new(T)))
	}
	v := newView(cfg, key, len(stores), compute)
	for _, s := range stores {
		subscribeView(v, s, func(e *keyedEvent[T], keys []string) []string { return append(keys, e.key) })
	}
	v.start()
	return v
}

func storesOf[T any](cs []Collection[T]) []*store[T] {
	stores := make([]*store[T], len(cs))
	for i, c := range cs {
		stores[i] = storeOf(c)
	}
	return stores
}
