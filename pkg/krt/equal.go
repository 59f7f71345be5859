package krt

import (
	"fmt"
	"reflect"

	"google.golang.org/protobuf/proto"
)

// Equal reports whether two values are the same, which decides whether a
// recomputed result is an update or nothing at all. In order:
//
//  1. a type's Equals method (Equaler), on the value or its pointer;
//  2. proto.Equal, for protobuf messages;
//  3. a panic naming the type, for a struct that embeds a protobuf message
//     without an Equals method: reflect.DeepEqual cannot compare protobuf
//     internals reliably, and a silent wrong answer would lose updates;
//  4. reflect.DeepEqual.
func Equal[T any](a, b T) bool {
	return equalFuncFor[T]()(&a, &b)
}

// equalFuncFor chooses, once per type, how Equal compares values of T. The
// returned function takes pointers so that comparing never copies a struct
// into an interface. It panics for a struct that embeds a protobuf message
// without an Equals method, so such a mistake shows at construction time.
func equalFuncFor[T any]() func(a, b *T) bool {
	if eq := accessorFor[T, Equaler[T]](); eq != nil {
		return func(a, b *T) bool { return eq(a).Equals(*b) }
	}
	if eq := accessorFor[T, Equaler[*T]](); eq != nil {
		return func(a, b *T) bool { return eq(a).Equals(b) }
	}
	typ := reflect.TypeFor[T]()
	protoType := reflect.TypeFor[proto.Message]()
	if typ.Kind() == reflect.Interface {
		// The dynamic type is only known per value.
		return func(a, b *T) bool { return equalDynamic(any(*a), any(*b)) }
	}
	if typ.Kind() == reflect.Pointer && typ.Implements(protoType) {
		if !declaresProto(typ) {
			panic(embeddedProtoMessage(typ))
		}
		return func(a, b *T) bool {
			return proto.Equal(any(*a).(proto.Message), any(*b).(proto.Message))
		}
	}
	if typ.Kind() == reflect.Struct && reflect.PointerTo(typ).Implements(protoType) {
		panic(embeddedProtoMessage(typ))
	}
	// DeepEqual on the two pointers compares what they point to.
	return func(a, b *T) bool { return reflect.DeepEqual(a, b) }
}

// declaresProto tells a generated protobuf message from a type that only
// inherits ProtoReflect from an embedded message: the message a generated
// type reflects is itself.
func declaresProto(typ reflect.Type) bool {
	v := reflect.New(typ.Elem()).Interface().(proto.Message)
	return reflect.TypeOf(v.ProtoReflect().Interface()) == typ
}

func embeddedProtoMessage(typ reflect.Type) string {
	return fmt.Sprintf("krt: cannot compare %v: it embeds a protobuf message, which reflect.DeepEqual "+
		"cannot compare reliably; give the type an Equals(%v) bool method", typ, typ)
}

// equalDynamic compares two values held in interfaces, for collections of
// an interface type.
func equalDynamic(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	if am, ok := a.(proto.Message); ok {
		return proto.Equal(am, b.(proto.Message))
	}
	return reflect.DeepEqual(a, b)
}
