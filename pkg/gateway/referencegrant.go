package gateway

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// reference is one end of a cross-namespace reference, as a
// ReferenceGrant names it: a group and kind in a namespace, and for the
// target, a name.
type reference struct {
	group, kind, namespace, name string
}

// readRef reads a Gateway API reference into the object it names: the
// group and kind given (defaultGroup and defaultKind when not), the
// namespace given (the referrer's, from, when not), and the name.
func readRef(group *gatewayv1.Group, kind *gatewayv1.Kind, ns *gatewayv1.Namespace, name gatewayv1.ObjectName, defaultGroup, defaultKind, from string) reference {
	r := reference{group: defaultGroup, kind: defaultKind, namespace: from, name: string(name)}
	if group != nil {
		r.group = string(*group)
	}
	if kind != nil {
		r.kind = string(*kind)
	}
	if ns != nil && *ns != "" {
		r.namespace = string(*ns)
	}
	return r
}

// key is the krt key of the object a reference names.
func (r reference) key() string { return r.namespace + "/" + r.name }

// parentRef reads a parentRef of a route in namespace ns.
func parentRef(ref gatewayv1.ParentReference, ns string) reference {
	return readRef(ref.Group, ref.Kind, ref.Namespace, ref.Name, gatewayv1.GroupName, "Gateway", ns)
}

// isGateway reports whether a reference names a Gateway API Gateway.
func (r reference) isGateway() bool { return r.group == gatewayv1.GroupName && r.kind == "Gateway" }

// referenceAllowed reports whether a reference from one namespace to an
// object in another is allowed by a ReferenceGrant in the target's
// namespace: one whose from list has the referrer's group, kind and
// namespace and whose to list has the target's group and kind, with the
// target's name or no name. References within a namespace need no grant.
// The grants are fetched by namespace, so only a change of a grant in the
// target's namespace recomputes the referrer.
func referenceAllowed(ctx krt.HandlerContext, grants krt.Index[string, config.Config], from, to reference) bool {
	if from.namespace == to.namespace {
		return true
	}
	for _, g := range grants.Fetch(ctx, to.namespace) {
		spec, ok := g.Spec.(*gatewayv1.ReferenceGrantSpec)
		if !ok {
			continue
		}
		if grantsFrom(spec, from) && grantsTo(spec, to) {
			return true
		}
	}
	return false
}

func grantsFrom(spec *gatewayv1.ReferenceGrantSpec, from reference) bool {
	for _, f := range spec.From {
		if string(f.Group) == from.group && string(f.Kind) == from.kind && string(f.Namespace) == from.namespace {
			return true
		}
	}
	return false
}

func grantsTo(spec *gatewayv1.ReferenceGrantSpec, to reference) bool {
	for _, t := range spec.To {
		if string(t.Group) == to.group && string(t.Kind) == to.kind && (t.Name == nil || *t.Name == "" || string(*t.Name) == to.name) {
			return true
		}
	}
	return false
}
