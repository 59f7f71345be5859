package krt

import (
	"fmt"
	"reflect"
)

// namespacedObject is the part of Kubernetes object metadata that keys use.
type namespacedObject interface {
	GetName() string
	GetNamespace() string
}

// GetKey returns the key of an object. One rule is used everywhere in krt:
//
//   - a type with a ResourceName method is keyed by it;
//   - an object with GetName and GetNamespace (every Kubernetes object, and
//     Named) is keyed "namespace/name", or "name" when it is cluster-scoped;
//   - a string is its own key.
//
// GetKey panics for any other type: such values can only live in a
// Singleton, where the key is fixed.
func GetKey[T any](obj T) string {
	key, ok := keyFuncFor[T]()
	if !ok {
		panic(fmt.Sprintf("krt: cannot compute a key for %T: implement ResourceName() or GetName()/GetNamespace()", obj))
	}
	return key(&obj)
}

// namespacedKey builds the key of a Kubernetes-style object.
func namespacedKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// keyFuncFor returns the key function for T, chosen once by the rules of
// GetKey, or false when T has no key. The returned function takes a pointer
// so that calling it never copies a struct into an interface.
func keyFuncFor[T any]() (func(*T) string, bool) {
	if named := accessorFor[T, ResourceNamer](); named != nil {
		return func(p *T) string { return named(p).ResourceName() }, true
	}
	if meta := accessorFor[T, namespacedObject](); meta != nil {
		return func(p *T) string {
			o := meta(p)
			return namespacedKey(o.GetNamespace(), o.GetName())
		}, true
	}
	if reflect.TypeFor[T]().Kind() == reflect.String {
		var zero T
		if _, ok := any(zero).(string); ok {
			return func(p *T) string { return any(*p).(string) }, true
		}
		return func(p *T) string { return reflect.ValueOf(p).Elem().String() }, true
	}
	return nil, false
}

func isPointer[T any]() bool {
	return reflect.TypeFor[T]().Kind() == reflect.Pointer
}

// accessorFor finds interface I on a *T, or on T itself when T is a pointer,
// and returns a function reading it without copying the value. It returns
// nil when neither has the method set of I.
func accessorFor[T, I any]() func(*T) I {
	var zero T
	if _, ok := any(&zero).(I); ok {
		return func(p *T) I { return any(p).(I) }
	}
	if isPointer[T]() {
		if _, ok := any(zero).(I); ok {
			return func(p *T) I { return any(*p).(I) }
		}
	}
	return nil
}
