// Package kube connects the krt graph to the Kubernetes API server through
// client-go: informers become krt collections.
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

	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := obj.(T); ok {
				store.UpdateObject(o)
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
			store.UpdateObject(o)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if o, ok := obj.(T); ok {
				store.DeleteObject(krt.GetKey(o))
			}
		},
	})
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

// registrationSyncer is synced once the informer has delivered its initial
// list to our handler. The registration only exists after the collection
// that needs the syncer is built, hence the ready channel.
type registrationSyncer struct {
	ready chan struct{}
	reg   cache.ResourceEventHandlerRegistration
}

func (s *registrationSyncer) set(reg cache.ResourceEventHandlerRegistration) {
	s.reg = reg
	close(s.ready)
}

func (s *registrationSyncer) HasSynced() bool {
	select {
	case <-s.ready:
		return s.reg.HasSynced()
	default:
		return false
	}
}

func (s *registrationSyncer) WaitUntilSynced(stop <-chan struct{}) bool {
	select {
	case <-s.ready:
	case <-stop:
		return false
	}
	select {
	case <-s.reg.HasSyncedChecker().Done():
		return true
	case <-stop:
		return s.reg.HasSynced()
	}
}
