package krt

import (
	"fmt"
	"slices"
	"strings"
)

// Fetch reads the objects of c that pass filters, ordered by key, and
// records that the input being transformed depends on them: when a matching
// object of c is added, changed or removed (or an object stops or starts
// matching), the input is computed again. It is the only way a
// transformation may read another collection.
//
// The dependency is registered before c is read, so a change that lands
// between the read and the end of the transformation is not lost.
func Fetch[T any](ctx HandlerContext, c Collection[T], filters ...FetchOption) []T {
	if ctx == nil {
		panic("krt: Fetch needs the HandlerContext of a transformation; outside one use List, GetKey or Index.Lookup")
	}
	s := storeOf(c)
	f := buildFilter(filters)
	ctx.tracker().depend(s.src, s.registerErased, f)
	return readObjects(s, &f)
}

// FetchOne is Fetch for at most one object: the first match by key, or nil.
// Read a Singleton with FetchOne(ctx, singleton.AsCollection()).
func FetchOne[T any](ctx HandlerContext, c Collection[T], filters ...FetchOption) *T {
	res := Fetch(ctx, c, filters...)
	if len(res) == 0 {
		return nil
	}
	return &res[0]
}

// storeOf returns the store behind a collection built by this package.
func storeOf[T any](c Collection[T]) *store[T] {
	if sc, ok := c.(interface{ getStore() *store[T] }); ok {
		return sc.getStore()
	}
	panic(fmt.Sprintf("krt: %T was not built by krt; only krt collections can be fetched or indexed", c))
}

// readObjects returns the objects of s that pass f, ordered by key. It starts
// from the narrowest place f allows (the named keys, an index posting, or
// the whole collection) and applies the rest of f to each candidate.
func readObjects[T any](s *store[T], f *filter) []T {
	type hit struct {
		key string
		obj *T
	}
	var hits []hit
	collect := func(key string, obj *T, skip filterKind) {
		if f.matches(s.src, key, obj, skip) {
			hits = append(hits, hit{key, obj})
		}
	}

	s.mu.RLock()
	switch {
	case f.has(kindKeys):
		for _, k := range f.keys {
			if o := s.objects[k]; o != nil {
				collect(k, o, kindKeys)
			}
		}
	case f.has(kindIndex):
		x, ok := s.indexes[f.index.ref.indexName()]
		if !ok || indexRef(x) != f.index.ref {
			s.mu.RUnlock()
			panic(fmt.Sprintf("krt: FilterIndex with index %q, which does not belong to collection %q", f.index.ref.indexName(), s.cfg.name))
		}
		for k := range x.postings[f.index.key] {
			collect(k, s.objects[k], kindIndex)
		}
	default:
		for k, o := range s.objects {
			collect(k, o, 0)
		}
	}
	s.mu.RUnlock()

	if len(hits) > 1 {
		slices.SortFunc(hits, func(a, b hit) int { return strings.Compare(a.key, b.key) })
	}
	out := make([]T, len(hits))
	for i, h := range hits {
		out[i] = *h.obj
	}
	return out
}
