package gateway

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// allowedNamespaces resolves a listener's allowedRoutes.namespaces into
// the namespaces routes may attach from: the Gateway's own (Same, the
// default), every one (All), none (None), or those whose labels the
// selector matches (Selector). A selector of labels only is looked up in
// the label index of Namespaces; one with expressions is checked against
// each Namespace.
func allowedNamespaces(ctx krt.HandlerContext, gw config.Config, ar *gatewayv1.AllowedRoutes, namespaces krt.Collection[config.Config]) AllowedNamespaces {
	from := gatewayv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if ar != nil && ar.Namespaces != nil {
		if ar.Namespaces.From != nil {
			from = *ar.Namespaces.From
		}
		sel = ar.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return AllowedNamespaces{All: true}
	case gatewayv1.NamespacesFromSelector:
		return AllowedNamespaces{Names: selectNamespaces(ctx, sel, namespaces)}
	case gatewayv1.NamespacesFromNone:
		return AllowedNamespaces{}
	default:
		return AllowedNamespaces{Names: []string{gw.Namespace}}
	}
}

// selectNamespaces returns the names of the Namespaces sel matches,
// sorted. A missing or invalid selector (which validation rejects) selects
// nothing.
func selectNamespaces(ctx krt.HandlerContext, sel *metav1.LabelSelector, namespaces krt.Collection[config.Config]) []string {
	if sel == nil {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil
	}
	var matched []config.Config
	if len(sel.MatchExpressions) == 0 {
		matched = krt.Fetch(ctx, namespaces, krt.FilterLabel(sel.MatchLabels))
	} else {
		matched = krt.Fetch(ctx, namespaces, krt.FilterGeneric(func(o any) bool {
			return selector.Matches(labels.Set(o.(config.Config).Labels))
		}))
	}
	names := make([]string, len(matched))
	for i, ns := range matched {
		names[i] = ns.Name
	}
	slices.Sort(names)
	return names
}
