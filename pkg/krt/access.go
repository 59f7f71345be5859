package krt

import "strings"

// objectAccess holds how to read the key, labels, selector and namespace of
// a T, and how to compare two of them. It is chosen once per collection so
// that the hot paths never type-switch or copy structs into interfaces.
type objectAccess[T any] struct {
	key       func(*T) string // nil when T has no key of its own
	labels    func(*T) map[string]string
	selector  func(*T) map[string]string
	namespace func(*T) string
	equal     func(a, b *T) bool
}

func newObjectAccess[T any]() *objectAccess[T] {
	a := &objectAccess[T]{}
	a.key, _ = keyFuncFor[T]()
	if l := accessorFor[T, Labeler](); l != nil {
		a.labels = func(p *T) map[string]string { return l(p).GetLabels() }
	}
	if s := accessorFor[T, LabelSelectorer](); s != nil {
		a.selector = func(p *T) map[string]string { return s(p).GetLabelSelector() }
	}
	if m := accessorFor[T, namespacedObject](); m != nil {
		a.namespace = func(p *T) string { return m(p).GetNamespace() }
	} else if a.key != nil {
		key := a.key
		a.namespace = func(p *T) string {
			ns, _, found := strings.Cut(key(p), "/")
			if !found {
				return ""
			}
			return ns
		}
	}
	return a
}

// source is a collection seen as the origin of dependencies: its identity
// (the pointer) and type-erased accessors over the *T values its events and
// reads carry. Filters are evaluated through it, on reads and on events
// alike, so both always agree on what matches.
type source struct {
	name        string
	labelsOf    func(obj any) map[string]string
	selectorOf  func(obj any) map[string]string
	namespaceOf func(obj any) string
	valueOf     func(obj any) any
}

func newSource[T any](name string, a *objectAccess[T]) *source {
	s := &source{
		name:        name,
		labelsOf:    func(any) map[string]string { return nil },
		selectorOf:  func(any) map[string]string { return nil },
		namespaceOf: func(any) string { return "" },
		valueOf:     func(obj any) any { return *obj.(*T) },
	}
	if a.labels != nil {
		s.labelsOf = func(obj any) map[string]string { return a.labels(obj.(*T)) }
	}
	if a.selector != nil {
		s.selectorOf = func(obj any) map[string]string { return a.selector(obj.(*T)) }
	}
	if a.namespace != nil {
		s.namespaceOf = func(obj any) string { return a.namespace(obj.(*T)) }
	}
	return s
}
