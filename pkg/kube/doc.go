// Package kube is how meshcp reads the Kubernetes API: as krt collections,
// kept up to date by client-go informers.
//
// # Clients
//
// A Client bundles the clientsets meshcp reads through: Kubernetes (core,
// discovery), Istio (networking.istio.io, security.istio.io), Gateway API
// (gateway.networking.k8s.io), apiextensions (CustomResourceDefinitions)
// and the metadata-only client. NewClient builds them from a rest.Config;
// NewClientFromClientsets takes them ready-made, and package kubefake
// builds a Client over client-go fakes for unit tests. The Client owns the
// informers of its collections; Shutdown stops them all.
//
// # Collections
//
// NewCollection[T] returns a krt.Collection of the objects of T — a kind
// of the registry (registry.go: core/v1 Pods, Services, Namespaces,
// Secrets, ConfigMaps, Nodes; discovery/v1 EndpointSlices; Istio's
// networking and security v1 kinds; Gateway API v1) — that a Filter
// selects: a namespace, a label selector and a field selector, applied by
// the API server, so objects outside the filter are never sent, decoded or
// held. An unknown type, a bad selector or a namespace on a cluster-scoped
// kind is an error, not a panic. WrapInformer remains for informers built
// elsewhere.
//
// A collection over an informer keeps its own index of the informer's
// objects (pointers to them, not copies) under krt keys, "namespace/name"
// or "name" for cluster-scoped kinds. Changes are applied to that index and
// announced under one lock, so a handler registered with the existing state
// receives each object exactly once: never missed between the snapshot and
// the live events, never twice. Objects are equal when their
// ResourceVersions are, so resyncs and relists produce no events. Reads
// and lookups go through krt (GetKey, indexes, label filters), not through
// the informer's store, which has no indexes of its own.
//
// # Sharing
//
// Collections of one kind and one Filter (selectors compared in canonical
// form) share one informer: one list, one watch, one copy of each object,
// however many collections read them. The first collection starts the
// informer; it stops when the last one is stopped, or when the Client shuts
// down. Typed and metadata-only informers of a resource are distinct.
//
// # Transforms
//
// Every informer of a Client transforms objects before storing them: it
// removes metadata.managedFields, the annotations named with
// WithStrippedAnnotations (kubectl's last-applied-configuration, say), and
// runs the caller's rewrites given with WithTransform. This happens before
// the store on purpose: the informer keeps what the transform returns for
// as long as it runs, and collections point at those same objects, so
// whatever is dropped there is never held at all, while stripping further
// down the graph would keep the full object and a smaller copy of it.
//
// # Metadata only
//
// NewMetadataCollection reads a resource through the metadata client: the
// API server sends each object's ObjectMeta only (labels, annotations,
// owner references), as *metav1.PartialObjectMetadata. For kinds where
// nothing else is read this saves most of the memory and bandwidth a typed
// informer would cost. Any served resource works, in the registry or not.
//
// # Custom resources that may not be installed
//
// Istio and Gateway API kinds are served by CustomResourceDefinitions,
// which a cluster may lack. Their collections do not fail and do not hold
// up sync: the Client watches CRDs with one shared apiextensions informer
// (slimmed to names, versions and conditions), and a collection whose CRD
// is missing, not yet Established or not serving the version read is
// empty and synced. When the CRD becomes ready the collection starts (or
// joins) the informer of its kind and fills, with no restart; if the CRD is
// deleted, the informer is released and the collection emptied, as a DELETE
// of each object, until the CRD returns. Each collection logs once when it
// starts waiting and once when its CRD appears. Resources of those API
// groups read through NewMetadataCollection wait for their CRD the same
// way.
package kube
