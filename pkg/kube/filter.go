package kube

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Filter narrows what an informer lists and watches. The API server applies
// it, so objects outside the filter are never sent, decoded or stored: a
// selective cache costs memory and bandwidth for what it holds, not for the
// whole cluster. The zero Filter selects every object of the kind.
//
// Filter is a comparable value: collections of one kind with equal filters
// (after the selectors are normalised) share one informer.
type Filter struct {
	// Namespace limits the informer to one namespace; empty means all. It
	// must be empty for cluster-scoped kinds.
	Namespace string
	// LabelSelector is a label selector in the syntax of
	// metav1.ListOptions.LabelSelector, such as "app=web,tier!=db".
	LabelSelector string
	// FieldSelector is a field selector in the syntax of
	// metav1.ListOptions.FieldSelector, such as "spec.nodeName=node-1". The
	// API server supports only a few fields per kind (metadata.name and
	// metadata.namespace everywhere) and rejects the others when the
	// informer lists, not here.
	FieldSelector string
}

// normalize checks the selectors and returns the filter with each one in
// its canonical form, so that "b=2,a=1" and "a=1,b=2" share an informer.
// namespaced tells whether the kind is namespaced; what names it in errors.
func (f Filter) normalize(what string, namespaced bool) (Filter, error) {
	if f.Namespace != "" && !namespaced {
		return Filter{}, fmt.Errorf("%s is cluster-scoped: it cannot be filtered by namespace %q", what, f.Namespace)
	}
	if strings.TrimSpace(f.LabelSelector) != "" {
		sel, err := labels.Parse(f.LabelSelector)
		if err != nil {
			return Filter{}, fmt.Errorf("label selector for %s in %q: %w", what, f.Namespace, err)
		}
		f.LabelSelector = sel.String()
	} else {
		f.LabelSelector = ""
	}
	if strings.TrimSpace(f.FieldSelector) != "" {
		sel, err := fields.ParseSelector(f.FieldSelector)
		if err != nil {
			return Filter{}, fmt.Errorf("field selector for %s in %q: %w", what, f.Namespace, err)
		}
		f.FieldSelector = sel.String()
	} else {
		f.FieldSelector = ""
	}
	return f, nil
}

// applyTo sets the selectors on the options of a list or watch request. The
// namespace is not an option: it is part of the request path.
func (f Filter) applyTo(opts *metav1.ListOptions) {
	opts.LabelSelector = f.LabelSelector
	opts.FieldSelector = f.FieldSelector
}

// String describes the filter for names and logs, such as
// "ns=default,labels=app=web"; the zero filter is "all".
func (f Filter) String() string {
	var parts []string
	if f.Namespace != "" {
		parts = append(parts, "ns="+f.Namespace)
	}
	if f.LabelSelector != "" {
		parts = append(parts, "labels="+f.LabelSelector)
	}
	if f.FieldSelector != "" {
		parts = append(parts, "fields="+f.FieldSelector)
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, ",")
}
