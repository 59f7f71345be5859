// Package config is meshcp's model of configuration: a Config is one
// object of one kind (an Istio VirtualService, a Gateway API HTTPRoute, a
// Kubernetes Service, the mesh config...) with Kubernetes-style metadata,
// whatever its source (the API server, a file). Everything derived from
// configuration, and everything distributed over xDS, is a Config.
//
// The kinds, with how to decode, convert and validate each, live in
// package schema; validation results in package validation; the
// collections that read Configs from the API server or a folder in
// package sources.
package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupVersionKind names a kind of configuration.
type GroupVersionKind struct {
	Group   string
	Version string
	Kind    string
}

// String is "group/version/Kind", with "core" for the Kubernetes core group:
// "networking.istio.io/v1/VirtualService", "core/v1/Service". It is also
// the type URL under which the kind is distributed over xDS.
func (g GroupVersionKind) String() string {
	group := g.Group
	if group == "" {
		group = "core"
	}
	return group + "/" + g.Version + "/" + g.Kind
}

// APIVersion is the Kubernetes apiVersion: "group/version", or "version"
// for the core group.
func (g GroupVersionKind) APIVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// Meta is the metadata of a Config, as Kubernetes objects carry it.
type Meta struct {
	GroupVersionKind  GroupVersionKind
	UID               string
	Name              string
	Namespace         string
	Domain            string // the DNS domain of the cluster the object lives in
	Labels            map[string]string
	Annotations       map[string]string
	ResourceVersion   string
	CreationTimestamp time.Time
	OwnerReferences   []metav1.OwnerReference
	Generation        int64
}

// Spec is the desired state of a Config: a protobuf message (Istio kinds,
// MeshConfig) or a pointer to a Go struct (Gateway API and Kubernetes
// kinds).
type Spec any

// Status is the observed state of a Config, of the same shapes as Spec, or
// nil.
type Status any

// Config is one object of configuration.
type Config struct {
	Meta
	Spec   Spec
	Status Status
}

// ResourceName is the key of a Config within its kind: "namespace/name",
// or "name" for cluster-scoped kinds. Collections hold one kind each.
func (c Config) ResourceName() string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + "/" + c.Name
}

// GetName returns the name.
func (c Config) GetName() string { return c.Name }

// GetNamespace returns the namespace.
func (c Config) GetNamespace() string { return c.Namespace }

// GetLabels returns the labels.
func (c Config) GetLabels() map[string]string { return c.Labels }

// Key identifies a Config among all kinds:
// "group/version/Kind/namespace/name".
func (c Config) Key() string {
	return c.GroupVersionKind.String() + "/" + c.ResourceName()
}

// String is Key, for logs.
func (c Config) String() string { return c.Key() }

// Equals reports whether two Configs are the same. Protobuf specs and
// statuses are compared with proto.Equal, so neither krt nor anyone else
// ever compares protobuf internals by reflection.
func (c Config) Equals(o Config) bool {
	return c.Meta.Equals(o.Meta) && valuesEqual(c.Spec, o.Spec) && valuesEqual(c.Status, o.Status)
}

// Equals reports whether two Metas are the same.
func (m Meta) Equals(o Meta) bool {
	return m.GroupVersionKind == o.GroupVersionKind && m.UID == o.UID && m.Name == o.Name && m.Namespace == o.Namespace &&
		m.Domain == o.Domain && m.ResourceVersion == o.ResourceVersion && m.Generation == o.Generation &&
		m.CreationTimestamp.Equal(o.CreationTimestamp) &&
		maps.Equal(m.Labels, o.Labels) && maps.Equal(m.Annotations, o.Annotations) &&
		slices.EqualFunc(m.OwnerReferences, o.OwnerReferences, ownerReferencesEqual)
}

func ownerReferencesEqual(a, b metav1.OwnerReference) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		boolPtrEqual(a.Controller, b.Controller) && boolPtrEqual(a.BlockOwnerDeletion, b.BlockOwnerDeletion)
}

func boolPtrEqual(a, b *bool) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// valuesEqual compares specs or statuses: protobuf messages with
// proto.Equal, anything else with reflect.DeepEqual (Go structs of the
// Gateway API and Kubernetes, which hold no protobuf messages).
func valuesEqual(a, b any) bool {
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

// DeepCopy returns a Config that shares no memory with c.
func (c Config) DeepCopy() Config {
	out := c
	out.Labels = maps.Clone(c.Labels)
	out.Annotations = maps.Clone(c.Annotations)
	if c.OwnerReferences != nil {
		out.OwnerReferences = make([]metav1.OwnerReference, len(c.OwnerReferences))
		for i := range c.OwnerReferences {
			c.OwnerReferences[i].DeepCopyInto(&out.OwnerReferences[i])
		}
	}
	out.Spec = deepCopyValue(c.Spec)
	out.Status = deepCopyValue(c.Status)
	return out
}

// deepCopyValue copies a spec or status: protobuf messages with
// proto.Clone, generated Kubernetes types with their DeepCopy method.
func deepCopyValue(v any) any {
	if v == nil {
		return nil
	}
	if m, ok := v.(proto.Message); ok {
		return proto.Clone(m)
	}
	rv := reflect.ValueOf(v)
	if m := rv.MethodByName("DeepCopy"); m.IsValid() && m.Type().NumIn() == 0 && m.Type().NumOut() == 1 && m.Type().Out(0) == rv.Type() {
		if rv.Kind() == reflect.Pointer && rv.IsNil() {
			return v
		}
		return m.Call(nil)[0].Interface()
	}
	panic(fmt.Sprintf("config: cannot deep-copy a %T: specs and statuses are protobuf messages or generated Kubernetes types with DeepCopy", v))
}
