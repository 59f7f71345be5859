package gateway

import (
	"fmt"

	networking "istio.io/api/networking/v1alpha3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// newTCPRoutes builds "gateway/TCPRoutes": each TCPRoute forwards the
// connections of the listeners it attaches to (TCP, or TLS terminated at
// the gateway) to its backends.
func newTCPRoutes(routes krt.Collection[config.Config], in *routeInputs, o *options) (krt.Collection[krt.ObjectWithStatus[config.Config, RouteStatus]], krt.Collection[routeFragment]) {
	return krt.NewStatusManyCollection(routes, func(ctx krt.HandlerContext, r config.Config) (*RouteStatus, []routeFragment) {
		spec, ok := r.Spec.(*gatewayv1.TCPRouteSpec)
		if !ok {
			return nil, nil
		}
		p := routeParent{kind: "TCPRoute", route: r, parentRefs: spec.ParentRefs}
		c := routeContent{allRules: len(spec.Rules)}
		for i, rule := range spec.Rules {
			if dests := l4Destinations(ctx, r, "TCPRoute", fmt.Sprintf("rules[%d]", i), rule.BackendRefs, in, &c.problems); len(dests) > 0 {
				c.tcp = append(c.tcp, &networking.TCPRoute{Route: dests})
			}
		}
		return translateRoute(ctx, p, c, in)
	}, o.collection("gateway/TCPRoutes")...)
}

// newTLSRoutes builds "gateway/TLSRoutes": on a Passthrough listener a
// TLSRoute forwards the TLS connections whose SNI is one of its hostnames,
// untouched; on a Terminate listener, the decrypted streams.
func newTLSRoutes(routes krt.Collection[config.Config], in *routeInputs, o *options) (krt.Collection[krt.ObjectWithStatus[config.Config, RouteStatus]], krt.Collection[routeFragment]) {
	return krt.NewStatusManyCollection(routes, func(ctx krt.HandlerContext, r config.Config) (*RouteStatus, []routeFragment) {
		spec, ok := r.Spec.(*gatewayv1.TLSRouteSpec)
		if !ok {
			return nil, nil
		}
		p := routeParent{kind: "TLSRoute", route: r, parentRefs: spec.ParentRefs, hostnames: hostnameStrings(spec.Hostnames)}
		c := routeContent{allRules: len(spec.Rules)}
		var routes [][]*networking.RouteDestination
		for i, rule := range spec.Rules {
			if dests := l4Destinations(ctx, r, "TLSRoute", fmt.Sprintf("rules[%d]", i), rule.BackendRefs, in, &c.problems); len(dests) > 0 {
				routes = append(routes, dests)
			}
		}
		// The listener decides the form: SNI routes when TLS passes
		// through, TCP routes when the gateway terminates it.
		c.l4For = func(l ParentInfo, host string) (tcp []*networking.TCPRoute, tls []*networking.TLSRoute) {
			for _, dests := range routes {
				if l.TLSMode == gatewayv1.TLSModeTerminate {
					tcp = append(tcp, &networking.TCPRoute{Route: dests})
					continue
				}
				tls = append(tls, &networking.TLSRoute{
					Match: []*networking.TLSMatchAttributes{{SniHosts: []string{host}}},
					Route: dests,
				})
			}
			return tcp, tls
		}
		return translateRoute(ctx, p, c, in)
	}, o.collection("gateway/TLSRoutes")...)
}

// RejectedBackendHost is the destination host that stands for the
// backends of a TCPRoute or TLSRoute that do not resolve. The Gateway API
// requires connections meant for them to be rejected, in proportion to
// their weight; the host is in the reserved ".invalid" domain, so it is
// never a real service, and the xDS generators send it to a cluster that
// refuses every connection.
const RejectedBackendHost = "rejected-backend.meshcp.invalid"

// l4Destinations resolves the backends of a TCPRoute or TLSRoute rule
// into weighted destinations. Backends that do not resolve keep their
// weight as one RejectedBackendHost destination, as does a rule with no
// backends at all, so that connections meant for them are refused rather
// than sent to the others; backends of weight 0 get no connections.
func l4Destinations(ctx krt.HandlerContext, r config.Config, kind, where string, refs []gatewayv1.BackendRef, in *routeInputs, problems *refProblems) []*networking.RouteDestination {
	var dests []*networking.RouteDestination
	var rejected int32
	for k, b := range refs {
		weight := backendWeight(b.Weight)
		dest := resolveBackend(ctx, r, kind, fmt.Sprintf("%s.backendRefs[%d]", where, k), b.BackendObjectReference, in, problems)
		switch {
		case weight == 0:
		case dest == nil:
			rejected += weight
		default:
			dests = append(dests, &networking.RouteDestination{Destination: dest, Weight: weight})
		}
	}
	if rejected > 0 || len(refs) == 0 {
		dests = append(dests, &networking.RouteDestination{Destination: &networking.Destination{Host: RejectedBackendHost}, Weight: rejected})
	}
	if len(dests) == 1 {
		dests[0].Weight = 0
	}
	return dests
}
