package krt

import (
	"hash/maphash"
	"maps"
	"slices"
)

// dependency is one Fetch made by a transformation: which collection, and
// with which filter.
type dependency struct {
	src    *source
	filter filter
}

// erasedEvent is an event of a fetched collection, seen without its type:
// old and new hold *T pointers (or nil).
type erasedEvent struct {
	key      string
	old, new any
}

// dependencyTracker is the HandlerContext of one run of a transformation. It
// collects the dependencies the run declares through Fetch.
type dependencyTracker struct {
	// watch subscribes the collection being computed to a fetched one
	// before its first read; it is a no-op when already subscribed.
	watch   func(fetched fetchable)
	deps    []dependency
	discard bool
	extra   any // a side result for the collection, such as a status

	// With CheckMutation, the objects this run fetched, to check after it.
	watchFetched bool
	fetched      []watchedObject
	// With CheckPurity, the identity of every object this run fetched (the
	// stored pointer), so two runs can be told to have read the same state.
	recordFetched bool
	fetchedRefs   []any
}

// DiscardResult keeps the previous output of the input being computed.
func (t *dependencyTracker) DiscardResult() { t.discard = true }

func (t *dependencyTracker) tracker() *dependencyTracker { return t }

// fetchable is a collection as its dependents see it: an identity, its
// sync state, and a way to subscribe to its changes.
type fetchable interface {
	Syncer
	source() *source
	registerErased(onEvents func([]erasedEvent)) (unregister func())
}

// depend subscribes to fetched and records a new dependency on it,
// returning its filter for the caller to fill in. The pointer is valid
// until the next call.
func (t *dependencyTracker) depend(fetched fetchable) *filter {
	t.watch(fetched)
	t.deps = append(t.deps, dependency{src: fetched.source()})
	return &t.deps[len(t.deps)-1].filter
}

func (t *dependencyTracker) reset() {
	clear(t.deps) // drop references held by the reused backing array
	t.deps = t.deps[:0]
	t.discard = false
	t.extra = nil
	t.watchFetched = false
	clear(t.fetched)
	t.fetched = t.fetched[:0]
	t.recordFetched = false
	clear(t.fetchedRefs)
	t.fetchedRefs = t.fetchedRefs[:0]
}

// depList is the list of dependencies of one or more inputs. Inputs whose
// transformation read the same things share one list, so a namespace filter
// used by a thousand pods is stored, indexed and checked once.
type depList struct {
	deps     []dependency
	hash     uint64
	shared   bool // false when a FilterGeneric makes the list incomparable
	inputs   map[string]struct{}
	matchGen uint64 // the event check that last found this list affected
}

func (l *depList) sameAs(deps []dependency) bool {
	if len(l.deps) != len(deps) {
		return false
	}
	for i := range deps {
		if l.deps[i].src != deps[i].src || !l.deps[i].filter.equal(&deps[i].filter) {
			return false
		}
	}
	return true
}

// affectedBy reports whether an event of src touches something this list
// depends on, before or after the change.
func (l *depList) affectedBy(src *source, e *erasedEvent) bool {
	for i := range l.deps {
		d := &l.deps[i]
		if d.src != src {
			continue
		}
		if e.old != nil && d.filter.matches(src, e.key, e.old, 0) {
			return true
		}
		if e.new != nil && d.filter.matches(src, e.key, e.new, 0) {
			return true
		}
	}
	return false
}

// dependencyIndex holds the dependency lists of a collection's inputs and a
// reverse index per fetched collection from "what changed" to the lists
// that may care. It is owned by the collection's worker.
type dependencyIndex struct {
	seed    maphash.Seed
	lists   map[uint64][]*depList
	sources map[*source]*sourceIndex

	matchGen   uint64
	candidates map[*depList]struct{} // scratch, reused per event
}

func newDependencyIndex() *dependencyIndex {
	return &dependencyIndex{
		seed:       maphash.MakeSeed(),
		lists:      map[uint64][]*depList{},
		sources:    map[*source]*sourceIndex{},
		candidates: map[*depList]struct{}{},
	}
}

// acquire returns the shared list equal to deps, creating and indexing it
// if needed, and records that input uses it. A new list keeps deps itself:
// the caller hands it over. It returns nil for an input without
// dependencies.
func (x *dependencyIndex) acquire(input string, deps []dependency) *depList {
	if len(deps) == 0 {
		return nil
	}
	h, shared := x.hash(deps)
	if shared {
		for _, l := range x.lists[h] {
			if l.sameAs(deps) {
				l.inputs[input] = struct{}{}
				return l
			}
		}
	}
	l := &depList{deps: deps, hash: h, shared: shared, inputs: map[string]struct{}{input: {}}}
	if shared {
		x.lists[h] = append(x.lists[h], l)
	}
	for i := range l.deps {
		x.sourceIndex(l.deps[i].src).add(l, &l.deps[i])
	}
	return l
}

// release records that input no longer uses l, dropping l when unused.
func (x *dependencyIndex) release(l *depList, input string) {
	if l == nil {
		return
	}
	delete(l.inputs, input)
	if len(l.inputs) > 0 {
		return
	}
	for i := range l.deps {
		x.sources[l.deps[i].src].remove(l, &l.deps[i])
	}
	if l.shared {
		x.lists[l.hash] = slices.DeleteFunc(x.lists[l.hash], func(o *depList) bool { return o == l })
		if len(x.lists[l.hash]) == 0 {
			delete(x.lists, l.hash)
		}
	}
}

func (x *dependencyIndex) sourceIndex(src *source) *sourceIndex {
	si := x.sources[src]
	if si == nil {
		si = newSourceIndex()
		x.sources[src] = si
	}
	return si
}

// affected calls visit with every input whose dependencies match one of the
// events of src (old or new side), each input at most once per call. It
// returns how many inputs were visited and how many dependency lists had to
// be checked against an event to find them.
func (x *dependencyIndex) affected(src *source, events []erasedEvent, visit func(input string)) (visited, checked int) {
	si := x.sources[src]
	if si == nil {
		return 0, 0
	}
	x.matchGen++
	for i := range events {
		e := &events[i]
		clear(x.candidates)
		si.candidates(src, e, x.candidates)
		for l := range x.candidates {
			if l.matchGen == x.matchGen {
				continue
			}
			checked++
			if !l.affectedBy(src, e) {
				continue
			}
			l.matchGen = x.matchGen
			for input := range l.inputs {
				visit(input)
				visited++
			}
		}
	}
	return visited, checked
}

// hash fingerprints a dependency list for sharing. Label maps are hashed
// independently of their iteration order.
func (x *dependencyIndex) hash(deps []dependency) (uint64, bool) {
	var h maphash.Hash
	h.SetSeed(x.seed)
	shared := true
	for i := range deps {
		d := &deps[i]
		maphash.WriteComparable(&h, d.src)
		f := &d.filter
		if len(f.generic) > 0 {
			shared = false
		}
		h.WriteByte(byte(f.given))
		h.WriteByte(byte(f.selectsMode))
		for _, k := range f.keys {
			h.WriteString(k)
			h.WriteByte(0)
		}
		if f.has(kindIndex) {
			h.WriteString(f.index.ref.indexName())
			h.WriteByte(0)
			h.WriteString(f.index.key)
		}
		h.WriteString(f.namespace)
		h.WriteByte(0)
		writeLabels(&h, x.seed, f.labels)
		writeLabels(&h, x.seed, f.selects)
	}
	return h.Sum64(), shared
}

func writeLabels(h *maphash.Hash, seed maphash.Seed, labels map[string]string) {
	var sum uint64
	for k, v := range labels {
		sum += maphash.String(seed, k) ^ (maphash.String(seed, v) * 31)
	}
	var buf [8]byte
	for i := range buf {
		buf[i] = byte(sum >> (8 * i))
	}
	h.Write(buf[:])
	h.WriteByte(byte(len(labels)))
}

// labelPair is one label key and value, the unit of the label indexes.
type labelPair struct{ key, value string }

type listSet = map[*depList]struct{}

type indexPosting struct {
	ref indexRef
	key string
}

// sourceIndex is the reverse index of the dependencies on one fetched
// collection. Each dependency is filed under its most selective filter;
// finding candidates for an event costs a few map lookups, and the
// candidates are then checked exactly against the event.
type sourceIndex struct {
	byKey       map[string]listSet
	byIndex     map[indexPosting]listSet
	indexRefs   map[indexRef]int
	byNamespace map[string]listSet
	// Selector filters, by each label the caller offered: an object whose
	// selector is {app: a} can only match callers that offered app=a.
	bySelectorLabel map[labelPair]listSet
	// FilterSelects callers, which also match objects with empty selectors.
	selectsEmpty listSet
	// FilterLabel callers, by one label they require: an object can only
	// match if it carries that label.
	byLabel     map[labelPair]listSet
	anyLabels   listSet // FilterLabel with no labels: matches every object
	unindexable listSet // no filter or only FilterGeneric: checked on every event
}

func newSourceIndex() *sourceIndex {
	return &sourceIndex{
		byKey:           map[string]listSet{},
		byIndex:         map[indexPosting]listSet{},
		indexRefs:       map[indexRef]int{},
		byNamespace:     map[string]listSet{},
		bySelectorLabel: map[labelPair]listSet{},
		selectsEmpty:    listSet{},
		byLabel:         map[labelPair]listSet{},
		anyLabels:       listSet{},
		unindexable:     listSet{},
	}
}

func (si *sourceIndex) add(l *depList, d *dependency)    { si.file(l, d, true) }
func (si *sourceIndex) remove(l *depList, d *dependency) { si.file(l, d, false) }

// file adds l to, or removes it from, the postings of d's most selective
// filter.
func (si *sourceIndex) file(l *depList, d *dependency, add bool) {
	f := &d.filter
	switch {
	case f.has(kindKeys):
		for _, k := range f.keys {
			post(si.byKey, k, l, add)
		}
	case f.has(kindSelects):
		// Filed under every offered label; an object's selector must use
		// some of them to match. With no labels offered, only an empty
		// selector can match, and only for FilterSelects.
		for k, v := range f.selects {
			post(si.bySelectorLabel, labelPair{k, v}, l, add)
		}
		if f.selectsMode == selectsEmptyMatches {
			postSet(si.selectsEmpty, l, add)
		}
	case f.has(kindLabel) && len(f.labels) > 0:
		post(si.byLabel, firstLabel(f.labels), l, add)
	case f.has(kindLabel):
		postSet(si.anyLabels, l, add)
	case f.has(kindIndex):
		post(si.byIndex, indexPosting{f.index.ref, f.index.key}, l, add)
		if add {
			si.indexRefs[f.index.ref]++
		} else if si.indexRefs[f.index.ref]--; si.indexRefs[f.index.ref] == 0 {
			delete(si.indexRefs, f.index.ref)
		}
	case f.has(kindNamespace):
		post(si.byNamespace, f.namespace, l, add)
	default:
		postSet(si.unindexable, l, add)
	}
}

// candidates adds to out every list that may be affected by e: a superset,
// checked exactly by the caller.
func (si *sourceIndex) candidates(src *source, e *erasedEvent, out listSet) {
	addAll := func(set listSet) {
		for l := range set {
			out[l] = struct{}{}
		}
	}
	addAll(si.byKey[e.key])
	addAll(si.unindexable)
	for _, obj := range [2]any{e.old, e.new} {
		if obj == nil {
			continue
		}
		for ref := range si.indexRefs {
			for _, k := range ref.extractErased(obj) {
				addAll(si.byIndex[indexPosting{ref, k}])
			}
		}
		if len(si.byNamespace) > 0 {
			addAll(si.byNamespace[src.namespaceOf(obj)])
		}
		if len(si.bySelectorLabel) > 0 || len(si.selectsEmpty) > 0 {
			selector := src.selectorOf(obj)
			if len(selector) == 0 {
				addAll(si.selectsEmpty)
			} else {
				addAll(si.smallestSelectorPosting(selector))
			}
		}
		if len(si.byLabel) > 0 || len(si.anyLabels) > 0 {
			addAll(si.anyLabels)
			for k, v := range src.labelsOf(obj) {
				addAll(si.byLabel[labelPair{k, v}])
			}
		}
	}
}

// smallestSelectorPosting returns the callers that offered the rarest label
// of selector. A caller matches only if it offered all of them, so any one
// posting is a superset; the smallest is the cheapest to check.
func (si *sourceIndex) smallestSelectorPosting(selector map[string]string) listSet {
	var best listSet
	first := true
	for k, v := range selector {
		set := si.bySelectorLabel[labelPair{k, v}]
		if len(set) == 0 {
			return nil
		}
		if first || len(set) < len(best) {
			best, first = set, false
		}
	}
	return best
}

func firstLabel(labels map[string]string) labelPair {
	keys := slices.Sorted(maps.Keys(labels))
	return labelPair{keys[0], labels[keys[0]]}
}

func post[K comparable](m map[K]listSet, k K, l *depList, add bool) {
	set := m[k]
	if add {
		if set == nil {
			set = listSet{}
			m[k] = set
		}
		set[l] = struct{}{}
		return
	}
	delete(set, l)
	if len(set) == 0 {
		delete(m, k)
	}
}

func postSet(set listSet, l *depList, add bool) {
	if add {
		set[l] = struct{}{}
	} else {
		delete(set, l)
	}
}
