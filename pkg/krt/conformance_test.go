package krt_test

import (
	"strings"
	"testing"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// object is the input type of the rigs: keyed by namespace/name.
type object struct {
	krt.Named
	Labels map[string]string
}

func (o object) GetLabels() map[string]string { return o.Labels }

func objectFromKey(key string) object {
	ns, name, _ := strings.Cut(key, "/")
	return object{Named: krt.Named{Namespace: ns, Name: name}}
}

// derivedObject is what the derived rigs produce.
type derivedObject struct {
	krt.Named
	Source string
}

// staticRig drives a StaticCollection; the derived rigs sit on top of one.
type staticRig struct {
	krt.StaticCollection[object]
	gate *krt.SyncGate
}

func newStaticRig(t *testing.T, md krt.Metadata) *staticRig {
	gate := krttest.NewSyncGate()
	c := krt.NewStaticCollection[object](gate, nil, krt.WithStop(krttest.Stop(t)), krt.WithMetadata(md), krt.WithName("static"))
	return &staticRig{StaticCollection: c, gate: gate}
}

func (r *staticRig) CreateObject(key string) { r.UpdateObject(objectFromKey(key)) }

func (r *staticRig) ReplaceKey(oldKey, newKey string) {
	r.DeleteObject(oldKey)
	r.UpdateObject(objectFromKey(newKey))
}

func (r *staticRig) MarkSynced() { r.gate.MarkSynced() }

// derivedRig is a derived collection over a staticRig.
type derivedRig struct {
	krt.Collection[derivedObject]
	source *staticRig
}

func (r *derivedRig) CreateObject(key string)          { r.source.CreateObject(key) }
func (r *derivedRig) ReplaceKey(oldKey, newKey string) { r.source.ReplaceKey(oldKey, newKey) }
func (r *derivedRig) MarkSynced()                      { r.source.MarkSynced() }

// singletonRig drives a StaticSingleton.
type singletonRig struct {
	krt.StaticSingleton[object]
	krt.Collection[object]
}

func (r *singletonRig) CreateObject(key string) {
	o := objectFromKey(key)
	r.Set(&o)
}

func (r *singletonRig) ReplaceKey(_, newKey string) { r.CreateObject(newKey) }
func (r *singletonRig) IsSingleton() bool           { return true }
func (r *singletonRig) MarkSynced()                 { r.StaticSingleton.MarkSynced() }

// Resolve the methods both embedded types have.
func (r *singletonRig) Metadata() krt.Metadata { return r.Collection.Metadata() }
func (r *singletonRig) Register(f func(krt.Event[object])) krt.HandlerRegistration {
	return r.Collection.Register(f)
}

func TestConformance(t *testing.T) {
	t.Run("static collection", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[object] {
			return newStaticRig(t, md)
		})
	})
	t.Run("static singleton", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[object] {
			s := krt.NewStatic[object](nil, false, krt.WithStop(krttest.Stop(t)), krt.WithMetadata(md))
			return &singletonRig{StaticSingleton: s, Collection: s.AsCollection()}
		})
	})
	t.Run("collection", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[derivedObject] {
			src := newStaticRig(t, nil)
			c := krt.NewCollection(krt.Collection[object](src.StaticCollection), func(ctx krt.HandlerContext, o object) *derivedObject {
				return &derivedObject{Named: o.Named, Source: "collection"}
			}, krt.WithStop(krttest.Stop(t)), krt.WithMetadata(md))
			return &derivedRig{Collection: c, source: src}
		})
	})
	t.Run("many collection", func(t *testing.T) {
		krttest.RunConformance(t, func(t *testing.T, md krt.Metadata) krttest.Rig[derivedObject] {
			src := newStaticRig(t, nil)
			c := krt.NewManyCollection(krt.Collection[object](src.StaticCollection), func(ctx krt.HandlerContext, o object) []derivedObject {
				return []derivedObject{{Named: o.Named, Source: "many"}}
			}, krt.WithStop(krttest.Stop(t)), krt.WithMetadata(md))
			return &derivedRig{Collection: c, source: src}
		})
	})
}
