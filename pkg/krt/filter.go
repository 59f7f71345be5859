package krt

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// FetchOption narrows what Fetch returns and, with it, which changes of the
// fetched collection recompute the caller. Every option given must match.
// Each kind of filter may be given once per Fetch; FilterGeneric may be
// repeated.
type FetchOption func(*filter)

// FilterKey keeps the object with the given key.
func FilterKey(key string) FetchOption {
	return func(f *filter) { f.setKeys("FilterKey", []string{key}) }
}

// FilterKeys keeps the objects with any of the given keys.
func FilterKeys(keys ...string) FetchOption {
	unique := slices.Compact(slices.Sorted(slices.Values(keys)))
	return func(f *filter) { f.setKeys("FilterKeys", unique) }
}

// FilterObjectName keeps the object with the given namespace and name.
func FilterObjectName(name types.NamespacedName) FetchOption {
	return func(f *filter) { f.setKeys("FilterObjectName", []string{namespacedKey(name.Namespace, name.Name)}) }
}

// FilterIndex keeps the objects that idx files under key. The index must be
// one of the fetched collection.
func FilterIndex[K comparable, O any](idx Index[K, O], key K) FetchOption {
	i, ok := idx.(*index[K, O])
	if !ok {
		panic(fmt.Sprintf("krt: FilterIndex: %T is not an index built by krt.NewIndex", idx))
	}
	lookup := indexFilter{ref: i.idx, key: i.toString(key)}
	return func(f *filter) { f.setIndex(lookup) }
}

// FilterNamespace keeps the objects in namespace.
func FilterNamespace(namespace string) FetchOption {
	return func(f *filter) {
		f.mark(kindNamespace, "FilterNamespace")
		f.namespace = namespace
	}
}

// FilterLabel keeps the objects whose labels include every given label
// (given ⊆ object labels). With no labels it keeps everything.
func FilterLabel(labels map[string]string) FetchOption {
	return func(f *filter) {
		f.mark(kindLabel, "FilterLabel")
		f.labels = labels
	}
}

// FilterSelects keeps the objects whose label selector is satisfied by the
// given labels (object selector ⊆ given labels). An object with an empty
// selector matches, as an empty selector selects everything.
func FilterSelects(labels map[string]string) FetchOption {
	return func(f *filter) {
		f.mark(kindSelects, "FilterSelects")
		f.selects = labels
		f.selectsMode = selectsEmptyMatches
	}
}

// FilterSelectsNonEmpty is FilterSelects where an object with an empty
// selector matches nothing: how a Service selects Pods.
func FilterSelectsNonEmpty(labels map[string]string) FetchOption {
	return func(f *filter) {
		f.mark(kindSelects, "FilterSelectsNonEmpty")
		f.selects = labels
		f.selectsMode = selectsNonEmpty
	}
}

// FilterGeneric keeps the objects for which keep returns true; it receives
// the object itself (a T). Such a filter cannot be indexed: a change of the
// fetched collection is checked against every caller that used one. Only
// the callers that used it pay for that.
func FilterGeneric(keep func(obj any) bool) FetchOption {
	return func(f *filter) { f.generic = append(f.generic, keep) }
}

type filterKind uint8

const (
	kindKeys filterKind = 1 << iota
	kindIndex
	kindNamespace
	kindLabel
	kindSelects
)

type selectsMode uint8

const (
	selectsNone selectsMode = iota
	selectsEmptyMatches
	selectsNonEmpty
)

// filter is the conjunction of the FetchOptions of one Fetch.
type filter struct {
	given       filterKind
	keys        []string
	index       indexFilter
	namespace   string
	labels      map[string]string
	selects     map[string]string
	selectsMode selectsMode
	generic     []func(any) bool
}

// indexRef is a store index seen without its object type.
type indexRef interface {
	indexName() string
	// extractErased returns the index keys of an object (a *T).
	extractErased(obj any) []string
	// hasKey reports whether the index files an object (a *T) under key.
	hasKey(obj any, key string) bool
}

// indexFilter is a lookup of one key in one index.
type indexFilter struct {
	ref indexRef
	key string
}

func (f *filter) mark(k filterKind, name string) {
	if f.given&k != 0 {
		panic(fmt.Sprintf("krt: %s given twice in one Fetch, or together with a filter of the same kind", name))
	}
	f.given |= k
}

func (f *filter) setKeys(name string, keys []string) {
	f.mark(kindKeys, name)
	f.keys = keys
}

func (f *filter) setIndex(lookup indexFilter) {
	f.mark(kindIndex, "FilterIndex")
	f.index = lookup
}

func (f *filter) has(k filterKind) bool { return f.given&k != 0 }

// matches reports whether an object of src (a *T in an interface) with the
// given key passes the filter. skip names the filters the caller has
// already applied by construction, such as the index a read came from.
func (f *filter) matches(src *source, key string, obj any, skip filterKind) bool {
	check := f.given &^ skip
	if check&kindKeys != 0 && !slices.Contains(f.keys, key) {
		return false
	}
	if check&kindIndex != 0 && !f.index.ref.hasKey(obj, f.index.key) {
		return false
	}
	if check&kindNamespace != 0 && src.namespaceOf(obj) != f.namespace {
		return false
	}
	if check&kindLabel != 0 && !isSubset(f.labels, src.labelsOf(obj)) {
		return false
	}
	if check&kindSelects != 0 && !f.selectsMatch(src.selectorOf(obj)) {
		return false
	}
	if len(f.generic) > 0 {
		v := src.valueOf(obj)
		for _, keep := range f.generic {
			if !keep(v) {
				return false
			}
		}
	}
	return true
}

func (f *filter) selectsMatch(selector map[string]string) bool {
	if len(selector) == 0 {
		return f.selectsMode == selectsEmptyMatches
	}
	return isSubset(selector, f.selects)
}

// isSubset reports whether every entry of sub is in super.
func isSubset(sub, super map[string]string) bool {
	if len(sub) > len(super) {
		return false
	}
	for k, v := range sub {
		if got, ok := super[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// equal reports whether two filters select the same objects by the same
// means. Filters with a FilterGeneric are never equal: functions cannot be
// compared.
func (f *filter) equal(o *filter) bool {
	if f.given != o.given || len(f.generic) > 0 || len(o.generic) > 0 {
		return false
	}
	if !slices.Equal(f.keys, o.keys) || f.namespace != o.namespace || f.selectsMode != o.selectsMode {
		return false
	}
	if f.index != o.index {
		return false
	}
	return maps.Equal(f.labels, o.labels) && maps.Equal(f.selects, o.selects)
}
