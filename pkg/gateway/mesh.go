package gateway

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// Mesh routing (the Gateway API's GAMMA, GEP-1426): an HTTPRoute or a
// GRPCRoute whose parentRef is a Service (group "", kind Service) routes
// the mesh's own traffic to that Service: what sidecars and proxyless gRPC
// clients send to its host name, rather than what enters at a Gateway. It
// becomes a VirtualService bound to the mesh ("mesh" gateway) for the
// Service's host "name.namespace.svc.<domain>", built from the rules as
// for a Gateway, with matches limited to the parentRef's port when it
// names one (port, or sectionName naming a port of the Service). The
// route's hostnames do not apply: the Service is the host.
//
// A route in the Service's namespace is a producer route and serves every
// namespace; a route in another namespace is a consumer route and serves
// clients of its own namespace only (its VirtualService is exported to
// "." and, being private to that namespace, wins there over the
// producer's). No ReferenceGrant is needed for either. Routes of one
// namespace for one Service merge into one VirtualService in Gateway API
// precedence order, as on a listener.

// meshGateway is the Istio gateway name of the mesh itself.
const meshGateway = "mesh"

// isService reports whether a reference names a core Service.
func (r reference) isService() bool { return r.group == "" && r.kind == "Service" }

// meshResult is the outcome of one parentRef naming a Service: the host
// and port the route serves, or why it serves nothing.
type meshResult struct {
	ref gatewayv1.ParentReference
	// namespace is the Service's; host its host name.
	namespace string
	host      string
	port      uint32 // 0: every port
	reason    gatewayv1.RouteConditionReason
	message   string
}

// attachToServices checks each parentRef of a route that names a Service:
// the Service must exist, and a port or sectionName must name one of its
// ports. Only HTTPRoutes and GRPCRoutes route mesh traffic.
func attachToServices(ctx krt.HandlerContext, r routeParent, in *routeInputs) []meshResult {
	if r.kind != "HTTPRoute" && r.kind != "GRPCRoute" {
		return nil
	}
	var out []meshResult
	for _, ref := range r.parentRefs {
		to := parentRef(ref, r.route.Namespace)
		if !to.isService() {
			continue
		}
		res := meshResult{ref: ref}
		svc := krt.FetchOne(ctx, in.services, krt.FilterKey(to.key()))
		spec, ok := serviceSpec(svc)
		if !ok {
			res.reason = gatewayv1.RouteReasonNoMatchingParent
			res.message = fmt.Sprintf("Service %s does not exist", to.key())
			out = append(out, res)
			continue
		}
		port, why := servicePort(spec, ref)
		if why != "" {
			res.reason = gatewayv1.RouteReasonNoMatchingParent
			res.message = fmt.Sprintf("Service %s %s", to.key(), why)
			out = append(out, res)
			continue
		}
		res.namespace, res.host, res.port = to.namespace, to.name+"."+to.namespace+".svc."+in.domain, port
		out = append(out, res)
	}
	return out
}

// serviceSpec reads a Service config.
func serviceSpec(c *config.Config) (*corev1.ServiceSpec, bool) {
	if c == nil {
		return nil, false
	}
	spec, ok := c.Spec.(*corev1.ServiceSpec)
	return spec, ok && spec != nil
}

// servicePort is the port a parentRef to a Service selects: the one its
// port or sectionName (a port's name) names, 0 for every port when it
// names none; or why it selects nothing.
func servicePort(spec *corev1.ServiceSpec, ref gatewayv1.ParentReference) (uint32, string) {
	if ref.Port == nil && ref.SectionName == nil {
		return 0, ""
	}
	for _, p := range spec.Ports {
		if (ref.Port == nil || int32(*ref.Port) == p.Port) && (ref.SectionName == nil || string(*ref.SectionName) == p.Name) {
			return uint32(p.Port), ""
		}
	}
	return 0, "has no port matching " + describeSection(ref)
}

// meshFragment is what a route contributes to the mesh VirtualService of
// one Service host: its http routes, limited to port when set, exported
// to its own namespace only when it is a consumer route.
func meshFragment(ref routeRef, res meshResult, content routeContent) routeFragment {
	f := routeFragment{Gateway: meshGateway, Host: res.host, Route: ref, HTTP: content.http}
	if res.port != 0 {
		f.HTTP = make([]httpEntry, len(content.http))
		for i, e := range content.http {
			hr := proto.CloneOf(e.Route)
			for _, m := range hr.Match {
				m.Port = res.port
			}
			f.HTTP[i] = httpEntry{Route: hr, Precedence: e.Precedence}
		}
	}
	if ref.Namespace != res.namespace {
		f.ExportTo = []string{"."}
	}
	return f
}
