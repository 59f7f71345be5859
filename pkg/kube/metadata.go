package kube

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/meshcp/meshcp/pkg/krt"
)

// NewMetadataCollection returns a collection of the metadata of the
// objects of resource gvr that filter selects: name, namespace, labels,
// annotations, owner references and the rest of ObjectMeta, without spec
// or status. The API server sends only that, so a metadata-only collection
// costs a fraction of a typed one; use it for kinds where that is all
// meshcp reads (which Deployments own a ReplicaSet, say). Filtering on
// fields of the spec is then impossible, except through FieldSelector
// where the API server supports it.
//
// Any resource the API server serves works, built-in or custom; it need
// not be in the registry. The namespace of the filter cannot be checked
// against the scope of an arbitrary resource: a namespace on a
// cluster-scoped resource fails when the informer lists. Resources of the
// groups the registry knows to be served by CRDs (Istio's and Gateway
// API's) wait for their CRD like NewCollection does.
//
// Metadata-only collections share informers with each other, never with
// typed ones, and run the *metav1.PartialObjectMetadata transforms.
func NewMetadataCollection(c *Client, gvr schema.GroupVersionResource, filter Filter, stop <-chan struct{}, opts ...krt.CollectionOption) (krt.Collection[*metav1.PartialObjectMetadata], error) {
	what := "metadata of " + gvr.GroupVersion().String() + "/" + gvr.Resource
	switch {
	case c == nil:
		return nil, fmt.Errorf("reading %s: no client", what)
	case stop == nil:
		return nil, fmt.Errorf("reading %s: no stop channel", what)
	case gvr.Version == "" || gvr.Resource == "":
		return nil, fmt.Errorf("reading %s: the resource needs a version and a resource name", what)
	case c.metadata == nil:
		return nil, fmt.Errorf("reading %s: the client has no metadata client", what)
	}
	f, err := filter.normalize(what, true)
	if err != nil {
		return nil, err
	}
	spec := informerSpec{
		key:      informerKey{gvr: gvr, metadataOnly: true, filter: f},
		describe: describe(what, f),
		objType:  reflect.TypeFor[*metav1.PartialObjectMetadata](),
	}
	spec.build = func() cache.SharedIndexInformer {
		return cache.NewSharedIndexInformerWithOptions(metadataListerWatcher(c, gvr, f, spec.describe), &metav1.PartialObjectMetadata{}, cache.SharedIndexInformerOptions{
			Indexers:          cache.Indexers{},
			ObjectDescription: spec.describe,
		})
	}
	opts = append([]krt.CollectionOption{
		krt.WithName(collectionName("metadata/"+gvr.GroupVersion().String()+"/"+gvr.Resource, f)),
		krt.WithLogger(c.logger),
	}, opts...)
	if c.kinds.crdGroups[gvr.Group] {
		need := crdRequirement{name: gvr.GroupResource().String(), version: gvr.Version}
		return newCRDCollection[*metav1.PartialObjectMetadata](c, spec, need, stop, opts)
	}
	return newInformerCollection[*metav1.PartialObjectMetadata](c, spec, stop, opts)
}

// metadataListerWatcher lists and watches the metadata of gvr through the
// metadata client of c, narrowed by f.
func metadataListerWatcher(c *Client, gvr schema.GroupVersionResource, f Filter, what string) cache.ListerWatcher {
	resource := c.metadata.Resource(gvr).Namespace(f.Namespace)
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			f.applyTo(&opts)
			list, err := resource.List(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("listing %s in %q: %w", what, f.Namespace, err)
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			f.applyTo(&opts)
			w, err := resource.Watch(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("watching %s in %q: %w", what, f.Namespace, err)
			}
			return w, nil
		},
	}, c.metadata)
}
