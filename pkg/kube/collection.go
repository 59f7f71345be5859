package kube

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshcp/meshcp/pkg/krt"
)

// NewCollection returns a collection of the objects of type T (*corev1.Pod,
// *networkingv1.VirtualService, *gatewayv1.HTTPRoute...) that filter
// selects, read through an informer of c. T must be one of the kinds in
// the registry (registry.go); any other type is an error.
//
// Collections of one kind and filter share an informer (see Client). Kinds
// served by a CustomResourceDefinition (Istio, Gateway API) tolerate a
// cluster without it: the collection is empty and synced until the CRD is
// established and serves the version the registry reads, then fills; if
// the CRD goes away, so do the objects.
//
// Closing stop stops the collection and releases its informer. The
// collection is named "kube/<group/version>/<Kind>", with the filter when
// there is one, and logs through the Client's logger; opts may override
// both. krt.WithStop in opts is ignored: stop is the collection's lifetime.
func NewCollection[T Object](c *Client, filter Filter, stop <-chan struct{}, opts ...krt.CollectionOption) (krt.Collection[T], error) {
	typ := reflect.TypeFor[T]()
	if c == nil {
		return nil, fmt.Errorf("reading %v: no client", typ)
	}
	if stop == nil {
		return nil, fmt.Errorf("reading %v: no stop channel", typ)
	}
	k, ok := c.kinds.lookup(typ)
	if !ok {
		if typ == reflect.TypeFor[*metav1.PartialObjectMetadata]() {
			return nil, fmt.Errorf("reading %v: metadata-only collections are built with NewMetadataCollection, for a GroupVersionResource", typ)
		}
		return nil, fmt.Errorf("reading %v: not a supported kind; the kinds a Client can read are listed in pkg/kube/registry.go", typ)
	}
	if k.api.clientset(c) == nil {
		return nil, fmt.Errorf("reading %s: the client has no %s clientset", k, k.api)
	}
	f, err := filter.normalize(k.String(), k.namespaced)
	if err != nil {
		return nil, err
	}
	spec := informerSpec{
		key:      informerKey{gvr: k.gvr, filter: f},
		describe: describe(k.String(), f),
		objType:  typ,
	}
	spec.build = func() cache.SharedIndexInformer {
		return cache.NewSharedIndexInformerWithOptions(k.listerWatcher(c, f), k.newObject(), cache.SharedIndexInformerOptions{
			// The informer needs no index of its own: reads go through the
			// krt collection, which keeps its own keys and indexes.
			Indexers:          cache.Indexers{},
			ObjectDescription: spec.describe,
		})
	}
	opts = append([]krt.CollectionOption{
		krt.WithName(collectionName(k.gvk.GroupVersion().String()+"/"+k.gvk.Kind, f)),
		krt.WithLogger(c.logger),
	}, opts...)
	if k.api.crdBacked() {
		return newCRDCollection[T](c, spec, crdRequirement{name: k.crdName(), version: k.gvr.Version}, stop, opts)
	}
	return newInformerCollection[T](c, spec, stop, opts)
}

// newInformerCollection wraps the shared informer of spec, which is
// started at once.
func newInformerCollection[T Object](c *Client, spec informerSpec, stop <-chan struct{}, opts []krt.CollectionOption) (krt.Collection[T], error) {
	informer, release, err := c.acquireInformer(spec)
	if err != nil {
		return nil, err
	}
	collection, err := WrapInformer[T](informer, stop, opts...)
	if err != nil {
		release()
		return nil, fmt.Errorf("reading %s: %w", spec.describe, err)
	}
	go func() {
		<-stop
		release()
	}()
	return collection, nil
}

// describe names an informer in errors and logs: "v1 Pod (ns=default)".
func describe(what string, f Filter) string {
	if f == (Filter{}) {
		return what
	}
	return what + " (" + f.String() + ")"
}

// collectionName is the default krt name of a collection:
// "kube/v1/Pod{ns=default}".
func collectionName(what string, f Filter) string {
	if f == (Filter{}) {
		return "kube/" + what
	}
	return "kube/" + what + "{" + f.String() + "}"
}
