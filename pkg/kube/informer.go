package kube

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/meshcp/meshcp/pkg/krt"
)

// Object is what an informer collection holds: a pointer to a typed
// Kubernetes object, such as *corev1.Pod.
type Object interface {
	runtime.Object
	metav1.Object
}

// WrapInformer turns a client-go shared informer into a krt collection of
// its objects, keyed "namespace/name" (or "name" for cluster-scoped kinds).
// Any typed informer works: core types, Istio's or Gateway API's clientsets.
//
// The collection keeps its own index of the informer's objects (pointers,
// not copies), so a handler registered with the existing state sees every
// object exactly once. It is synced when the informer has delivered its
// initial list. Two versions of an object are equal when their
// ResourceVersions are, so a resync or relist produces no events. Starting
// the informer is the caller's job; closing stop stops the collection and
// removes its handler from the informer.
func WrapInformer[T Object](informer cache.SharedIndexInformer, stop <-chan struct{}, opts ...krt.CollectionOption) (krt.Collection[T], error) {
	syncer := &registrationSyncer{ready: make(chan struct{})}
	opts = append(append(defaultOptions[T](), opts...), krt.WithStop(stop))
	store := krt.NewStaticCollection[T](syncer, nil, opts...)

	reg, err := informer.AddEventHandler(storeHandler(store, nil))
	if err != nil {
		return nil, fmt.Errorf("adding a handler to the %T informer: %w", *new(T), err)
	}
	syncer.set(reg)
	go func() {
		<-stop
		_ = informer.RemoveEventHandler(reg)
	}()
	return store, nil
}

// storeHandler writes the events of an informer of T into store. When
// guard is not nil, every write goes through it, so that the caller can
// drop the writes of a handler it has detached: client-go may still run one
// callback of a handler after RemoveEventHandler returns.
func storeHandler[T Object](store krt.StaticCollection[T], guard func(write func())) cache.ResourceEventHandler {
	w := storeWriter[T]{store: store, guard: guard}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := obj.(T); ok {
				w.update(o)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok := newObj.(T)
			if !ok {
				return
			}
			if old, ok := oldObj.(T); ok && sameVersion(old, o) {
				return // a resync: nothing changed
			}
			w.update(o)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if o, ok := obj.(T); ok {
				w.delete(krt.GetKey(o))
			}
		},
	}
}

// storeWriter applies informer events to a store, through a guard if
// there is one.
type storeWriter[T Object] struct {
	store krt.StaticCollection[T]
	guard func(write func())
}

func (w storeWriter[T]) update(o T) {
	if w.guard == nil {
		w.store.UpdateObject(o)
		return
	}
	w.guard(func() { w.store.UpdateObject(o) })
}

func (w storeWriter[T]) delete(key string) {
	if w.guard == nil {
		w.store.DeleteObject(key)
		return
	}
	w.guard(func() { w.store.DeleteObject(key) })
}

// defaultOptions gives informer collections what their type needs: equality
// by ResourceVersion, and the selector of kinds that select pods.
func defaultOptions[T Object]() []krt.CollectionOption {
	opts := []krt.CollectionOption{krt.WithEquality(equalByVersion[T])}
	if _, ok := any(*new(T)).(*corev1.Service); ok {
		opts = append(opts, krt.WithSelector(func(o T) map[string]string {
			return any(o).(*corev1.Service).Spec.Selector
		}))
	}
	return opts
}

// equalByVersion compares objects by ResourceVersion when both have one,
// which the API server changes on every write; otherwise by content.
func equalByVersion[T Object](a, b T) bool {
	if sameVersion(a, b) {
		return true
	}
	if a.GetResourceVersion() != "" && b.GetResourceVersion() != "" {
		return false
	}
	return krt.Equal[T](a, b)
}

func sameVersion[T Object](a, b T) bool {
	return a.GetResourceVersion() != "" && a.GetResourceVersion() == b.GetResourceVersion()
}
