package gateway

import (
	"regexp"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// newGRPCRoutes builds "gateway/GRPCRoutes": GRPCRoutes become http
// routes on the request path ("/package.Service/Method"), like HTTPRoutes.
func newGRPCRoutes(routes krt.Collection[config.Config], in *routeInputs, o *options) (krt.Collection[krt.ObjectWithStatus[config.Config, RouteStatus]], krt.Collection[routeFragment]) {
	return newRequestRoutes("GRPCRoute", routes, grpcRouteParent, grpcRules, in.httpRivals, in, o)
}

// grpcRouteParent reads a GRPCRoute for attaching.
func grpcRouteParent(r config.Config) (routeParent, bool) {
	spec, ok := r.Spec.(*gatewayv1.GRPCRouteSpec)
	if !ok {
		return routeParent{}, false
	}
	return routeParent{kind: "GRPCRoute", route: r, parentRefs: spec.ParentRefs, hostnames: hostnameStrings(spec.Hostnames)}, true
}

// grpcRules reads the rules of a GRPCRoute.
func grpcRules(r config.Config) []requestRule {
	spec := r.Spec.(*gatewayv1.GRPCRouteSpec)
	out := make([]requestRule, len(spec.Rules))
	for i := range spec.Rules {
		rule := &spec.Rules[i]
		rr := requestRule{name: rule.Name, filters: grpcFilters(rule.Filters)}
		for _, b := range rule.BackendRefs {
			rr.backends = append(rr.backends, backendRef{ref: b.BackendRef, filters: grpcFilters(b.Filters)})
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.GRPCRouteMatch{{}}
		}
		for j := range matches {
			m, p := grpcMatch(&matches[j])
			rr.matches = append(rr.matches, requestMatch{m, p})
		}
		out[i] = rr
	}
	return out
}

// grpcFilters passes GRPCRoute filters, a subset of HTTPRoute's, in the
// HTTPRoute form.
func grpcFilters(fs []gatewayv1.GRPCRouteFilter) []gatewayv1.HTTPRouteFilter {
	out := make([]gatewayv1.HTTPRouteFilter, len(fs))
	for i, f := range fs {
		out[i] = gatewayv1.HTTPRouteFilter{
			Type:                   gatewayv1.HTTPRouteFilterType(f.Type),
			RequestHeaderModifier:  f.RequestHeaderModifier,
			ResponseHeaderModifier: f.ResponseHeaderModifier,
			RequestMirror:          f.RequestMirror,
			ExtensionRef:           f.ExtensionRef,
		}
	}
	return out
}

// grpcMatch translates a GRPCRouteMatch into a match on the request path,
// "/<service>/<method>": exact with both, the path element "/<service>"
// (a prefix, element-wise) with the service only,
// an expression with the method only or with RegularExpression (where
// what is left out matches any one path segment).
func grpcMatch(m *gatewayv1.GRPCRouteMatch) (*networking.HTTPMatchRequest, precedence) {
	out := &networking.HTTPMatchRequest{}
	p := precedence{GRPC: true}
	if mm := m.Method; mm != nil {
		service, method := "", ""
		if mm.Service != nil {
			service = *mm.Service
		}
		if mm.Method != nil {
			method = *mm.Method
		}
		p.ServiceLen, p.MethodLen = len(service), len(method)
		regex := mm.Type != nil && *mm.Type == gatewayv1.GRPCMethodMatchRegularExpression
		p.GRPCRegex = regex
		p.GRPCMethod = service != "" || method != ""
		switch {
		case regex:
			out.Uri = stringMatch(true, "/"+orAnySegment(service)+"/"+orAnySegment(method))
		case service != "" && method != "":
			out.Uri = stringMatch(false, "/"+service+"/"+method)
		case service != "":
			out.Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: "/" + service}}
		case method != "":
			out.Uri = stringMatch(true, "/[^/]+/"+regexp.QuoteMeta(method))
		}
	}
	out.Headers = firstMatches(m.Headers, func(h gatewayv1.GRPCHeaderMatch) (string, bool, string) {
		return strings.ToLower(string(h.Name)), h.Type != nil && *h.Type == gatewayv1.GRPCHeaderMatchRegularExpression, h.Value
	})
	p.Headers = len(out.Headers)
	if out.Uri == nil && out.Headers == nil {
		out.Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: "/"}}
	}
	// Where GRPCRoutes and HTTPRoutes share a VirtualService (both on one
	// Service, for the mesh) they are ordered by HTTPRoute precedence: a
	// match reads as the path match it becomes, no path as the prefix "/".
	switch u := out.Uri.GetMatchType().(type) {
	case *networking.StringMatch_Exact:
		p.PathKind, p.PathLen = pathExact, len(u.Exact)
	case *networking.StringMatch_Prefix:
		p.PathKind, p.PathLen = pathPrefix, len(u.Prefix)
	case *networking.StringMatch_Regex:
		p.PathKind, p.PathLen = pathRegex, len(u.Regex)
	default:
		p.PathKind, p.PathLen = pathPrefix, 1
	}
	return out, p
}

// orAnySegment is expr, or an expression for any one path segment.
func orAnySegment(expr string) string {
	if expr == "" {
		return "[^/]+"
	}
	return expr
}
