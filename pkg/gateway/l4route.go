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

// l4Destinations resolves the backends of a TCPRoute or TLSRoute rule
// into weighted destinations. Backends that do not resolve, and those of
// weight 0, get no connections; connections have no status code to
// answer with, so the weight of the others is what counts.
func l4Destinations(ctx krt.HandlerContext, r config.Config, kind, where string, refs []gatewayv1.BackendRef, in *routeInputs, problems *refProblems) []*networking.RouteDestination {
	var dests []*networking.RouteDestination
	for k, b := range refs {
		dest := resolveBackend(ctx, r, kind, fmt.Sprintf("%s.backendRefs[%d]", where, k), b.BackendObjectReference, in, problems)
		if dest == nil || backendWeight(b.Weight) == 0 {
			continue
		}
		dests = append(dests, &networking.RouteDestination{Destination: dest, Weight: backendWeight(b.Weight)})
	}
	if len(dests) == 1 {
		dests[0].Weight = 0
	}
	return dests
}
