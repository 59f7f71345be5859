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
	return fetch(ctx, storeOf(c), indexFilter{}, filters)
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

// fetch records a dependency of ctx on s and reads s. A lookup in one of the
// store's indexes may be given ready-made, as Index.Fetch does.
func fetch[T any](ctx HandlerContext, s *store[T], lookup indexFilter, filters []FetchOption) []T {
	if ctx == nil {
		panic("krt: Fetch needs the HandlerContext of a transformation; outside one use List, GetKey or Index.Lookup")
	}
	// The filter is built in place in the tracker's dependency list, which
	// is reused from run to run: no allocation per Fetch.
	t := ctx.tracker()
	f := t.depend(s)
	if lookup.ref != nil {
		f.setIndex(lookup)
	}
	for _, o := range filters {
		o(f)
	}
	if t.watchFetched || t.recordFetched {
		return readObjectsVisiting(s, f, func(key string, obj *T) {
			if t.watchFetched {
				t.fetched = append(t.fetched, watchObject(s.cfg.name, key, obj))
			}
			if t.recordFetched {
				t.fetchedRefs = append(t.fetchedRefs, obj)
			}
		})
	}
	return readObjects(s, f)
}

// storeOf returns the store behind a collection built by this package.
func storeOf[T any](c Collection[T]) *store[T] {
	if sc, ok := c.(interface{ getStore() *store[T] }); ok {
		return sc.getStore()
	}
	panic(fmt.Sprintf("krt: %T was not built by krt; only krt collections can be fetched or indexed", c))
}

// readPlan is where a read starts: the place that yields the fewest
// candidates for the filter, each of which is then checked against it.
type readPlan int

const (
	readAll      readPlan = iota // every object
	readKeys                     // the named keys
	readIndex                    // one posting of a NewIndex index
	readSelector                 // the selector index, for FilterSelects*
	readLabel                    // the label index, for FilterLabel
)

// readObjects returns the objects of s that pass f, ordered by key.
func readObjects[T any](s *store[T], f *filter) []T {
	return readObjectsVisiting(s, f, nil)
}

// readObjectsVisiting is readObjects that also calls visit, if not nil, with
// each object as stored.
func readObjectsVisiting[T any](s *store[T], f *filter, visit func(key string, obj *T)) []T {
	s.prepareRead(f)
	type hit struct {
		key string
		obj *T
	}

	s.mu.RLock()
	plan, cost, skip := s.planRead(f)
	var small [8]hit // most reads find a handful of objects
	hits := small[:0]
	if cost > len(small) {
		hits = make([]hit, 0, min(cost, 64))
	}
	check := func(k string, o *T) {
		if o != nil && f.matches(s.src, k, o, skip) {
			hits = append(hits, hit{k, o})
		}
	}
	switch plan {
	case readKeys:
		for _, k := range f.keys {
			check(k, s.objects[k])
		}
	case readIndex:
		for k := range s.indexes[f.index.ref.indexName()].postings[f.index.key] {
			check(k, s.objects[k])
		}
	case readSelector:
		x := s.bySelector.Load()
		for k, v := range f.selects {
			for key := range x.postings[labelPair{k, v}] {
				check(key, s.objects[key])
			}
		}
		if f.selectsMode == selectsEmptyMatches {
			for key := range x.none {
				check(key, s.objects[key])
			}
		}
	case readLabel:
		for key := range s.byLabel.Load().rarest(f.labels) {
			check(key, s.objects[key])
		}
	default:
		for k, o := range s.objects {
			check(k, o)
		}
	}
	s.mu.RUnlock()

	if len(hits) > 1 {
		slices.SortFunc(hits, func(a, b hit) int { return strings.Compare(a.key, b.key) })
		if plan == readSelector && len(f.selects) > 1 {
			// An object whose selector has several of the labels was found
			// once per label.
			hits = slices.CompactFunc(hits, func(a, b hit) bool { return a.key == b.key })
		}
	}
	out := make([]T, len(hits))
	for i, h := range hits {
		out[i] = *h.obj
		if visit != nil {
			visit(h.key, h.obj)
		}
	}
	return out
}

// planRead picks the read with the fewest candidates and says which parts of
// f that read already guarantees. The caller holds the read lock.
func (s *store[T]) planRead(f *filter) (plan readPlan, cost int, skip filterKind) {
	if f.has(kindKeys) {
		return readKeys, len(f.keys), kindKeys
	}
	plan, cost = readAll, len(s.objects)
	if f.has(kindIndex) {
		x, ok := s.indexes[f.index.ref.indexName()]
		if !ok || indexRef(x) != f.index.ref {
			s.mu.RUnlock()
			panic(fmt.Sprintf("krt: FilterIndex with index %q, which does not belong to collection %q", f.index.ref.indexName(), s.cfg.name))
		}
		if n := len(x.postings[f.index.key]); n <= cost {
			plan, cost, skip = readIndex, n, kindIndex
		}
	}
	if x := s.bySelector.Load(); f.has(kindSelects) && x != nil {
		n := 0
		for k, v := range f.selects {
			n += len(x.postings[labelPair{k, v}])
		}
		if f.selectsMode == selectsEmptyMatches {
			n += len(x.none)
		}
		if n < cost {
			plan, cost, skip = readSelector, n, 0
		}
	}
	if x := s.byLabel.Load(); f.has(kindLabel) && len(f.labels) > 0 && x != nil {
		if n := len(x.rarest(f.labels)); n < cost {
			plan, cost, skip = readLabel, n, 0
		}
	}
	return plan, cost, skip
}
