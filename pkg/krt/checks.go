package krt

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
)

// Checks turns on guards against the classic mistakes of transformation
// and handler authors. They cost a lot (every object is fingerprinted, every
// transformation runs twice) and are meant for tests and for debugging a
// misbehaving graph.
type Checks uint8

const (
	// CheckMutation panics, naming the collection and key, when a
	// transformation changes its input or an object it fetched, or a
	// handler changes an object it received: collections share their
	// objects, so such a change corrupts every other reader.
	CheckMutation Checks = 1 << iota
	// CheckPurity runs every transformation twice and reports (error log
	// and metric) when the two results differ, such as a slice built from
	// map iteration order or a timestamp: such a collection emits updates
	// for nothing and hides real ones.
	CheckPurity
	// CheckPurityStrict makes a purity violation panic instead.
	CheckPurityStrict
)

// ChecksEnv is the environment variable that turns checks on for every
// collection that does not set WithChecks: a comma-separated list of
// "mutation", "purity", "purity-strict", or "all" (mutation and strict
// purity).
const ChecksEnv = "KRT_CHECKS"

// WithChecks sets the checks of the collection, overriding KRT_CHECKS.
func WithChecks(c Checks) CollectionOption {
	return func(o *collectionOptions) { o.checks = &c }
}

// ParseChecks reads the KRT_CHECKS syntax.
func ParseChecks(s string) (Checks, error) {
	var c Checks
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "":
		case "mutation":
			c |= CheckMutation
		case "purity":
			c |= CheckPurity
		case "purity-strict":
			c |= CheckPurity | CheckPurityStrict
		case "all":
			c |= CheckMutation | CheckPurity | CheckPurityStrict
		default:
			return 0, fmt.Errorf("%s: unknown check %q: want mutation, purity, purity-strict or all", ChecksEnv, part)
		}
	}
	return c, nil
}

// checksFromEnv returns the checks KRT_CHECKS asks for; an unreadable
// value turns every check on, since someone asked for checking.
func checksFromEnv() Checks {
	c, err := ParseChecks(os.Getenv(ChecksEnv))
	if err != nil {
		return CheckMutation | CheckPurity
	}
	return c
}

// fingerprintSeed is fixed for the process so fingerprints taken before and
// after a call compare.
var fingerprintSeed = maphash.MakeSeed()

// fingerprint hashes everything reachable from v through exported fields:
// pointers are followed (each once) and maps are hashed independently of
// iteration order. Protobuf messages, held by pointer or by value (as
// Istio's Kubernetes types hold their specs), are hashed by their
// deterministic encoding, so the caches they keep do not look like changes.
func fingerprint(v any) uint64 {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	w := fingerprinter{h: &h, seen: map[uintptr]bool{}}
	w.value(reflect.ValueOf(v))
	return h.Sum64()
}

type fingerprinter struct {
	h    *maphash.Hash
	seen map[uintptr]bool
}

func (w *fingerprinter) value(v reflect.Value) {
	if !v.IsValid() {
		w.h.WriteByte(0)
		return
	}
	if v.Type() == timeType && v.CanInterface() {
		// Not its fields: a Location caches lookups.
		w.h.WriteString(v.Interface().(time.Time).Format(time.RFC3339Nano))
		return
	}
	if m, ok := asProto(v); ok {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err == nil {
			w.h.Write(b)
			return
		}
	}
	var buf [8]byte
	writeUint := func(u uint64) {
		for i := range buf {
			buf[i] = byte(u >> (8 * i))
		}
		w.h.Write(buf[:])
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			writeUint(1)
		} else {
			writeUint(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		writeUint(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		writeUint(v.Uint())
	case reflect.Float32, reflect.Float64:
		writeUint(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		writeUint(math.Float64bits(real(v.Complex())))
		writeUint(math.Float64bits(imag(v.Complex())))
	case reflect.String:
		w.h.WriteString(v.String())
		w.h.WriteByte(0)
	case reflect.Pointer, reflect.UnsafePointer:
		if v.IsNil() {
			w.h.WriteByte(0)
			return
		}
		if v.Kind() == reflect.UnsafePointer {
			writeUint(uint64(v.Pointer()))
			return
		}
		if w.seen[v.Pointer()] {
			writeUint(uint64(v.Pointer()))
			return
		}
		w.seen[v.Pointer()] = true
		w.value(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			w.h.WriteByte(0)
			return
		}
		w.h.WriteString(v.Elem().Type().String())
		w.value(v.Elem())
	case reflect.Struct:
		// Unexported fields are left out: callers cannot change them, and
		// they hold things like protobuf's internal state, which points
		// into the whole type registry.
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				w.value(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			w.h.WriteByte(0)
			return
		}
		writeUint(uint64(v.Len()))
		for i := range v.Len() {
			w.value(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			w.h.WriteByte(0)
			return
		}
		// Sum of per-entry hashes: independent of iteration order.
		var sum uint64
		iter := v.MapRange()
		for iter.Next() {
			var eh maphash.Hash
			eh.SetSeed(fingerprintSeed)
			// Each entry gets its own copy of the pointers seen so far, so
			// the order entries come in cannot change what they hash to.
			ew := fingerprinter{h: &eh, seen: maps.Clone(w.seen)}
			ew.value(iter.Key())
			ew.value(iter.Value())
			sum += eh.Sum64()
		}
		writeUint(uint64(v.Len()))
		writeUint(sum)
	case reflect.Func, reflect.Chan:
		writeUint(uint64(v.Pointer()))
	}
}

// watchedObject is an object a transformation or handler was handed, with
// its fingerprint at that time.
type watchedObject struct {
	collection, key string
	obj             any // a *T into the collection's storage
	fingerprint     uint64
}

func watchObject(collection, key string, obj any) watchedObject {
	return watchedObject{collection: collection, key: key, obj: obj, fingerprint: fingerprint(obj)}
}

// checkUnchanged reports to violation when the object was changed since it
// was watched. who names the culprit.
func (o watchedObject) checkUnchanged(who string, violation func(msg string)) {
	if fingerprint(o.obj) != o.fingerprint {
		violation(fmt.Sprintf("krt: %s mutated object %q of collection %q: objects handed out by collections are shared and read-only; copy before changing",
			who, o.key, o.collection))
	}
}

// sameResults compares two runs of a transformation, for the purity check.
func sameResults[O any](equal func(a, b *O) bool, key func(*O) string, oneA *O, manyA []O, oneB *O, manyB []O) bool {
	if (oneA == nil) != (oneB == nil) || (oneA != nil && !equal(oneA, oneB)) {
		return false
	}
	if len(manyA) != len(manyB) {
		return false
	}
	a, b := slices.Clone(manyA), slices.Clone(manyB)
	byKey := func(x, y O) int { return strings.Compare(key(&x), key(&y)) }
	slices.SortFunc(a, byKey)
	slices.SortFunc(b, byKey)
	for i := range a {
		if !equal(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// asProto returns v as a protobuf message: v itself, or its address when v
// is a message held by value. It never copies a message: copying races with
// the size cache protobuf updates atomically.
func asProto(v reflect.Value) (proto.Message, bool) {
	t := v.Type()
	switch {
	case !v.CanInterface():
		return nil, false
	case t.Kind() == reflect.Pointer && t.Implements(protoMessageType):
		if v.IsNil() {
			return nil, false
		}
		return v.Interface().(proto.Message), true
	case t.Kind() == reflect.Struct && v.CanAddr() && reflect.PointerTo(t).Implements(protoMessageType):
		return v.Addr().Interface().(proto.Message), true
	}
	return nil, false
}

var (
	protoMessageType = reflect.TypeFor[proto.Message]()
	timeType         = reflect.TypeFor[time.Time]()
)
