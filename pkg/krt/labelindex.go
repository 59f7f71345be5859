package krt

import (
	"maps"
	"sync/atomic"
)

// labelIndex files the objects of a store under each pair of a label map:
// their labels, or their selector. Label and selector filters read from it
// instead of checking every object. A store builds one the first time a
// Fetch needs it and keeps it up to date from then on.
type labelIndex[T any] struct {
	of       func(*T) map[string]string
	postings map[labelPair]map[string]struct{}
	none     map[string]struct{} // objects whose map is empty
}

func newLabelIndex[T any](of func(*T) map[string]string, objects map[string]*T) *labelIndex[T] {
	x := &labelIndex[T]{of: of, postings: map[labelPair]map[string]struct{}{}, none: map[string]struct{}{}}
	for k, o := range objects {
		x.add(k, of(o))
	}
	return x
}

func (x *labelIndex[T]) add(key string, labels map[string]string) {
	if len(labels) == 0 {
		x.none[key] = struct{}{}
		return
	}
	for k, v := range labels {
		p := labelPair{k, v}
		set := x.postings[p]
		if set == nil {
			set = map[string]struct{}{}
			x.postings[p] = set
		}
		set[key] = struct{}{}
	}
}

func (x *labelIndex[T]) remove(key string, labels map[string]string) {
	if len(labels) == 0 {
		delete(x.none, key)
		return
	}
	for k, v := range labels {
		p := labelPair{k, v}
		set := x.postings[p]
		delete(set, key)
		if len(set) == 0 {
			delete(x.postings, p)
		}
	}
}

// update moves an object from the pairs of old to those of obj (either may
// be nil). An update that keeps the map, the usual case, costs one compare.
func (x *labelIndex[T]) update(key string, old, obj *T) {
	var before, after map[string]string
	if old != nil {
		before = x.of(old)
	}
	if obj != nil {
		after = x.of(obj)
	}
	if old != nil && obj != nil && maps.Equal(before, after) {
		return
	}
	if old != nil {
		x.remove(key, before)
	}
	if obj != nil {
		x.add(key, after)
	}
}

// rarest returns the posting of the least common pair of labels: an object
// carrying all of labels is in every one of their postings, so the smallest
// is the cheapest superset.
func (x *labelIndex[T]) rarest(labels map[string]string) map[string]struct{} {
	var best map[string]struct{}
	first := true
	for k, v := range labels {
		set := x.postings[labelPair{k, v}]
		if first || len(set) < len(best) {
			best, first = set, false
		}
	}
	return best
}

// prepareRead builds the label or selector index f would read from, if the
// store does not have it yet.
func (s *store[T]) prepareRead(f *filter) {
	wantLabels := f.has(kindLabel) && len(f.labels) > 0 && s.access.labels != nil && s.byLabel.Load() == nil
	wantSelector := f.has(kindSelects) && s.access.selector != nil && s.bySelector.Load() == nil
	if !wantLabels && !wantSelector {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ensureLabelIndex(&s.byLabel, wantLabels, s.access.labels, s.objects)
	ensureLabelIndex(&s.bySelector, wantSelector, s.access.selector, s.objects)
}

func ensureLabelIndex[T any](p *atomic.Pointer[labelIndex[T]], want bool, of func(*T) map[string]string, objects map[string]*T) {
	if want && p.Load() == nil {
		p.Store(newLabelIndex(of, objects))
	}
}
