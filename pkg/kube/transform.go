package kube

import (
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// transforms are what a Client strips from objects, and the callers' own
// rewrites, applied by every informer it starts before the object is
// stored.
//
// Why before the store: an informer keeps one decoded copy of every object
// it watches for as long as it runs, and a krt collection over it holds
// pointers to those same copies. Whatever survives the transform is what
// meshcp pays for in memory, for every object, all the time; what the
// transform drops is garbage as soon as it has been decoded. Stripping
// later (in a krt transformation, say) would keep the full object in the
// informer and a second, smaller copy beside it. metadata.managedFields is
// the usual culprit: the server-side-apply bookkeeping of an object is
// often larger than the object, and nothing in meshcp reads it.
type transforms struct {
	annotations []string
	byType      map[reflect.Type][]func(any) any
}

// WithStrippedAnnotations names annotations to remove from every object
// before it is stored, in addition to metadata.managedFields, which is
// always removed. corev1.LastAppliedConfigAnnotation, kubectl's copy of the
// whole object as last applied, is the usual one.
func WithStrippedAnnotations(names ...string) ClientOption {
	return func(o *clientOptions) {
		o.transforms.annotations = append(slices.Clone(o.transforms.annotations), names...)
	}
}

// WithTransform adds fn to the rewrites of objects of type T: a kind of the
// registry, or *metav1.PartialObjectMetadata for metadata-only collections.
// It runs after the built-in stripping, on the informer's goroutine,
// before the object is stored, and returns what to store: obj itself,
// changed in place (it was just decoded and nobody else holds it), or a
// smaller object of the same type built from it. It must be idempotent, as
// client-go may hand it an object it has already transformed, and it
// cannot fail; a nil result stores obj as it is. Transforms of one type run
// in the order they were given.
func WithTransform[T Object](fn func(obj T) T) ClientOption {
	return func(o *clientOptions) {
		if fn == nil {
			return
		}
		typ := reflect.TypeFor[T]()
		byType := make(map[reflect.Type][]func(any) any, len(o.transforms.byType)+1)
		for t, fns := range o.transforms.byType {
			byType[t] = fns
		}
		byType[typ] = append(slices.Clone(byType[typ]), func(obj any) any {
			typed, ok := obj.(T)
			if !ok {
				return obj
			}
			var none T
			if out := fn(typed); any(out) != any(none) {
				return out
			}
			return obj
		})
		o.transforms.byType = byType
	}
}

// forType returns the transform of informers of objects of type typ.
func (t transforms) forType(typ reflect.Type) cache.TransformFunc {
	custom := t.byType[typ]
	annotations := t.annotations
	return func(obj any) (any, error) {
		if o, ok := obj.(metav1.Object); ok {
			stripMetadata(o, annotations)
		}
		for _, fn := range custom {
			obj = fn(obj)
		}
		return obj, nil
	}
}

// stripMetadata removes managedFields and the named annotations from o, in
// place.
func stripMetadata(o metav1.Object, annotations []string) {
	o.SetManagedFields(nil)
	if len(annotations) == 0 {
		return
	}
	current := o.GetAnnotations()
	if len(current) == 0 {
		return
	}
	for _, name := range annotations {
		delete(current, name)
	}
	if len(current) == 0 {
		o.SetAnnotations(nil)
	}
}
