package gateway

import (
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// routeParent is what a route is, for attaching to listeners.
type routeParent struct {
	kind       string // "HTTPRoute"...
	route      config.Config
	parentRefs []gatewayv1.ParentReference
	// hostnames are the route's hostnames; TCPRoutes have none and take
	// the listener's.
	hostnames []string
	// rivals are the routes of the other kind an HTTPRoute or GRPCRoute
	// must not share a listener and hostname with (see rivals); nil for
	// the other kinds.
	rivals *rivals
}

// listenerAttachment is a listener a route attached to, with the hosts
// the route serves there; or, for a parentRef naming a Service, the mesh
// host it serves.
type listenerAttachment struct {
	listener Gateway
	hosts    []string
	mesh     *meshResult
}

// parentResult is the outcome of one parentRef that names a Gateway of
// ours: the listeners the route attached to, or why it attached to none.
type parentResult struct {
	ref      gatewayv1.ParentReference
	attached []listenerAttachment
	reason   gatewayv1.RouteConditionReason
	message  string
}

// attachRoute checks each parentRef of a route against the listeners of
// the Gateway it names, and, for HTTPRoutes and GRPCRoutes, against the
// Service it names (mesh routing, see attachToServices). References to
// other kinds and to Gateways that are not ours (another class, or none
// that exists) are left out: their status belongs to someone else. For
// Gateways of ours the route attaches to every listener that
//
//   - matches the parentRef's sectionName and port, if given (else the
//     reason is NoMatchingParent),
//   - allows the route's kind and namespace (NotAllowedByListeners),
//   - and has a hostname that intersects the route's
//     (NoMatchingListenerHostname).
//
// When no listener takes the route, the reason is that of the check the
// closest listener failed.
func attachRoute(ctx krt.HandlerContext, r routeParent, in *routeInputs) []parentResult {
	var out []parentResult
	for _, ref := range r.parentRefs {
		gw := parentRef(ref, r.route.Namespace)
		if !gw.isGateway() {
			continue
		}
		listeners := in.listeners.Fetch(ctx, gw.key())
		if len(listeners) == 0 {
			continue
		}
		out = append(out, attachToGateway(r, ref, listeners, r.rivals.rivalsOn(ctx, r, gw.key())))
	}
	for _, m := range attachToServices(ctx, r, in) {
		pr := parentResult{ref: m.ref, reason: m.reason, message: m.message}
		if m.reason == "" {
			pr.attached = []listenerAttachment{{mesh: &m}}
		}
		out = append(out, pr)
	}
	return out
}

// attachToGateway attaches a route to the listeners of one Gateway, where
// no older rival took them first.
func attachToGateway(r routeParent, ref gatewayv1.ParentReference, listeners []Gateway, older []routeParent) parentResult {
	res := parentResult{ref: ref}
	matched, allowed := 0, 0
	var conflicts []string
	for _, l := range listeners {
		info := l.ParentInfo
		if ref.SectionName != nil && *ref.SectionName != info.SectionName {
			continue
		}
		if ref.Port != nil && *ref.Port != info.Port {
			continue
		}
		matched++
		if !slices.Contains(info.Kinds, r.kind) || !info.Namespaces.Allows(r.route.Namespace) {
			continue
		}
		allowed++
		hosts, ok := routeHostnames(info.Hostname, r.hostnames)
		if !ok {
			continue
		}
		if why, beaten := beatenBy(older, l, hosts); beaten {
			conflicts = append(conflicts, why)
			continue
		}
		res.attached = append(res.attached, listenerAttachment{listener: l, hosts: hosts})
	}
	switch {
	case len(res.attached) > 0:
	case matched == 0:
		res.reason = gatewayv1.RouteReasonNoMatchingParent
		res.message = "no listener of Gateway " + describeParent(r.route, ref) + " matches " + describeSection(ref)
	case len(conflicts) > 0:
		res.reason = RouteReasonHostnameConflict
		res.message = joinConflicts(conflicts)
	case allowed == 0:
		res.reason = gatewayv1.RouteReasonNotAllowedByListeners
		res.message = fmt.Sprintf("no listener of Gateway %s allows %ss from namespace %s", describeParent(r.route, ref), r.kind, r.route.Namespace)
	default:
		res.reason = gatewayv1.RouteReasonNoMatchingListenerHostname
		res.message = fmt.Sprintf("no listener of Gateway %s has a hostname that intersects %v", describeParent(r.route, ref), r.hostnames)
	}
	return res
}

// describeParent names the Gateway a parentRef points to: "namespace/name".
func describeParent(route config.Config, ref gatewayv1.ParentReference) string {
	return parentRef(ref, route.Namespace).key()
}

// describeSection says which listeners a parentRef selects.
func describeSection(ref gatewayv1.ParentReference) string {
	switch {
	case ref.SectionName != nil && ref.Port != nil:
		return fmt.Sprintf("sectionName %q and port %d", *ref.SectionName, *ref.Port)
	case ref.SectionName != nil:
		return fmt.Sprintf("sectionName %q", *ref.SectionName)
	case ref.Port != nil:
		return fmt.Sprintf("port %d", *ref.Port)
	}
	return "the parentRef"
}
