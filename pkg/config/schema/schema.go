// Package schema is the registry of the kinds of configuration meshcp
// reads: for each, its group, version and the versions read as it, plural,
// scope, spec and status types, how to convert a typed Kubernetes object
// into a Config, how to decode one from YAML or JSON, and how to validate
// it.
package schema

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/validation"
)

// Schema describes one kind.
type Schema struct {
	// GVK is the kind as meshcp holds it: the newest version it reads.
	GVK config.GroupVersionKind
	// VersionAliases are older versions read as GVK ("v1alpha3",
	// "v1beta1"): the same schema, served under another name.
	VersionAliases []string
	// Plural is the resource name in the API ("virtualservices").
	Plural string
	// ClusterScoped kinds have no namespace.
	ClusterScoped bool
	// ObjectType is the typed Kubernetes object of the kind, such as
	// *networkingv1.VirtualService; nil for kinds only read from files.
	ObjectType reflect.Type
	// Validate checks a Config of the kind; nil checks nothing beyond
	// decoding.
	Validate validation.Func

	newSpec    func() config.Spec
	newStatus  func() config.Status
	fromObject func(obj metav1.Object) (config.Spec, config.Status)
}

// String is the kind's GVK.
func (s *Schema) String() string { return s.GVK.String() }

// NewSpec returns an empty spec of the kind.
func (s *Schema) NewSpec() config.Spec { return s.newSpec() }

// FromObject converts a typed Kubernetes object of the kind into a Config.
// The spec and status point into obj, which like every object an informer
// hands out is shared and read-only: no copy is made.
func (s *Schema) FromObject(obj metav1.Object, domain string) (config.Config, error) {
	if s.fromObject == nil || reflect.TypeOf(obj) != s.ObjectType {
		return config.Config{}, fmt.Errorf("%s: cannot convert a %T", s.GVK, obj)
	}
	spec, status := s.fromObject(obj)
	return config.Config{Meta: config.MetaFromObject(s.GVK, obj, domain), Spec: spec, Status: status}, nil
}

func unknownFieldWarning(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "unknown field"); i >= 0 {
		msg = msg[i:]
	}
	return msg + " (ignored)"
}

// Registry is a set of kinds, looked up by GVK or by apiVersion and kind
// (older versions included). It is built once and never changed.
type Registry struct {
	all     []*Schema
	byGVK   map[config.GroupVersionKind]*Schema
	byAlias map[config.GroupVersionKind]*Schema
	byType  map[reflect.Type]*Schema
}

// NewRegistry returns a registry of schemas; two schemas may not claim the
// same GVK.
func NewRegistry(schemas ...*Schema) (*Registry, error) {
	r := &Registry{
		byGVK:   map[config.GroupVersionKind]*Schema{},
		byAlias: map[config.GroupVersionKind]*Schema{},
		byType:  map[reflect.Type]*Schema{},
	}
	for _, s := range schemas {
		names := []config.GroupVersionKind{s.GVK}
		for _, v := range s.VersionAliases {
			names = append(names, config.GroupVersionKind{Group: s.GVK.Group, Version: v, Kind: s.GVK.Kind})
		}
		for _, n := range names {
			if _, dup := r.byAlias[n]; dup {
				return nil, fmt.Errorf("schema registry: %s is claimed twice", n)
			}
			r.byAlias[n] = s
		}
		r.byGVK[s.GVK] = s
		if s.ObjectType != nil {
			r.byType[s.ObjectType] = s
		}
		r.all = append(r.all, s)
	}
	return r, nil
}

// All returns every kind, in registration order.
func (r *Registry) All() []*Schema { return append([]*Schema(nil), r.all...) }

// ByGVK returns the kind with exactly this GVK.
func (r *Registry) ByGVK(gvk config.GroupVersionKind) (*Schema, bool) {
	s, ok := r.byGVK[gvk]
	return s, ok
}

// ByKind returns the kind an object of apiVersion and kind is read as, older
// versions included.
func (r *Registry) ByKind(apiVersion, kind string) (*Schema, bool) {
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		group, version = "", apiVersion
	}
	s, ok := r.byAlias[config.GroupVersionKind{Group: group, Version: version, Kind: kind}]
	return s, ok
}

// ByObject returns the kind of a typed Kubernetes object.
func (r *Registry) ByObject(obj metav1.Object) (*Schema, bool) {
	s, ok := r.byType[reflect.TypeOf(obj)]
	return s, ok
}

// FromObject converts a typed Kubernetes object of a registered kind.
func (r *Registry) FromObject(obj metav1.Object, domain string) (config.Config, error) {
	s, ok := r.ByObject(obj)
	if !ok {
		return config.Config{}, fmt.Errorf("no registered kind for %T", obj)
	}
	return s.FromObject(obj, domain)
}

// Validate runs the kind's validator on c; a Config of an unknown kind is
// an error.
func (r *Registry) Validate(c config.Config) validation.Result {
	s, ok := r.ByGVK(c.GroupVersionKind)
	if !ok {
		var res validation.Result
		res.Errorf("kind", "unknown kind %s", c.GroupVersionKind)
		return res
	}
	if s.Validate == nil {
		return validation.Result{}
	}
	return s.Validate(c)
}

var errNoName = errors.New("metadata.name is required")
