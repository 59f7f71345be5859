package gateway

import (
	"fmt"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// refProblems collects the backend references of a route that did not
// resolve: the reason of the first decides ResolvedRefs, the message lists
// them all.
type refProblems struct {
	reason   gatewayv1.RouteConditionReason
	messages []string
}

func (p *refProblems) add(reason gatewayv1.RouteConditionReason, format string, args ...any) {
	if p.reason == "" {
		p.reason = reason
	}
	p.messages = append(p.messages, fmt.Sprintf(format, args...))
}

func (p *refProblems) message() string { return strings.Join(p.messages, "; ") }

// routeInputs are what the route transformations read besides the route.
type routeInputs struct {
	listeners  krt.Index[string, Gateway]
	services   krt.Collection[config.Config]
	grants     krt.Index[string, config.Config]
	domain     string
	controller gatewayv1.GatewayController
	// httpRivals and grpcRivals find the HTTPRoutes and GRPCRoutes of a
	// Gateway, for the routes of the other kind.
	httpRivals, grpcRivals *rivals
}

// resolveBackend resolves a backend reference of a route of kind kind:
// a core Service (the only kind supported), in the route's namespace or
// allowed by a ReferenceGrant, that exists, with a port. It returns the
// Istio destination, or nil after recording why there is none. where
// names the reference in messages ("rules[0].backendRefs[1]").
func resolveBackend(ctx krt.HandlerContext, route config.Config, kind, where string, ref gatewayv1.BackendObjectReference, in *routeInputs, problems *refProblems) *networking.Destination {
	to := readRef(ref.Group, ref.Kind, ref.Namespace, ref.Name, "", "Service", route.Namespace)
	if to.group != "" || to.kind != "Service" {
		problems.add(gatewayv1.RouteReasonInvalidKind, "%s: %s is not supported; backends must be core Services", where, groupKind(to.group, to.kind))
		return nil
	}
	ns, name := to.namespace, to.name
	from := reference{group: gatewayv1.GroupName, kind: kind, namespace: route.Namespace}
	if !referenceAllowed(ctx, in.grants, from, to) {
		problems.add(gatewayv1.RouteReasonRefNotPermitted, "%s: Service %s/%s is in another namespace and no ReferenceGrant there allows %ss of %s to use it", where, ns, name, kind, route.Namespace)
		return nil
	}
	if krt.FetchOne(ctx, in.services, krt.FilterKey(to.key())) == nil {
		problems.add(gatewayv1.RouteReasonBackendNotFound, "%s: Service %s/%s does not exist", where, ns, name)
		return nil
	}
	if ref.Port == nil {
		problems.add(gatewayv1.RouteReasonBackendNotFound, "%s: Service %s/%s needs a port", where, ns, name)
		return nil
	}
	return &networking.Destination{
		Host: name + "." + ns + ".svc." + in.domain,
		Port: &networking.PortSelector{Number: uint32(*ref.Port)},
	}
}

// backendWeight is a backendRef's weight: 1 when unset.
func backendWeight(w *int32) int32 {
	if w == nil {
		return 1
	}
	return *w
}

// weightedBackends is what a rule's backendRefs resolve to.
type weightedBackends struct {
	// valid and invalid are the total weights of the backends that
	// resolved and of those that did not.
	valid, invalid int64
}

// brokenShare returns the percentage of traffic that was meant for
// backends that did not resolve, which the Gateway API answers with 500.
func (w weightedBackends) brokenShare() float64 {
	total := w.valid + w.invalid
	if total == 0 {
		return 0
	}
	return float64(w.invalid) * 100 / float64(total)
}
