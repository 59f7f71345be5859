package gateway

import (
	"fmt"
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
	return krt.NewStatusManyCollection(routes, func(ctx krt.HandlerContext, r config.Config) (*RouteStatus, []routeFragment) {
		p, ok := grpcRouteParent(r)
		if !ok {
			return nil, nil
		}
		p.rivals = in.httpRivals
		return translateRoute(ctx, p, grpcRouteContent(ctx, r, r.Spec.(*gatewayv1.GRPCRouteSpec), in), in)
	}, o.collection("gateway/GRPCRoutes")...)
}

// grpcRouteParent reads a GRPCRoute for attaching.
func grpcRouteParent(r config.Config) (routeParent, bool) {
	spec, ok := r.Spec.(*gatewayv1.GRPCRouteSpec)
	if !ok {
		return routeParent{}, false
	}
	return routeParent{kind: "GRPCRoute", route: r, parentRefs: spec.ParentRefs, hostnames: hostnameStrings(spec.Hostnames)}, true
}

// grpcRouteContent translates the rules of a GRPCRoute, as
// httpRouteContent does for HTTPRoutes.
func grpcRouteContent(ctx krt.HandlerContext, r config.Config, spec *gatewayv1.GRPCRouteSpec, in *routeInputs) routeContent {
	c := routeContent{allRules: len(spec.Rules)}
	for i := range spec.Rules {
		rule := &spec.Rules[i]
		where := fmt.Sprintf("rules[%d]", i)
		label := ruleLabel(i, rule.Name)
		filters := applyFilters(ctx, r, "GRPCRoute", where, grpcFilters(rule.Filters), in, &c.problems)
		template := &networking.HTTPRoute{Headers: filters.headers, Mirrors: filters.mirrors}
		backends := make([]backendRef, len(rule.BackendRefs))
		for k, b := range rule.BackendRefs {
			backends[k] = backendRef{ref: b.BackendRef, filters: grpcFilters(b.Filters)}
		}
		unsupported := routeToBackends(ctx, r, "GRPCRoute", where, template, backends, filters.broken, in, &c.problems)
		filters.unsupported = append(filters.unsupported, unsupported...)
		if len(filters.unsupported) > 0 {
			c.dropped = append(c.dropped, label+" ("+strings.Join(filters.unsupported, "; ")+")")
			continue
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.GRPCRouteMatch{{}}
		}
		for j := range matches {
			m, prec := grpcMatch(&matches[j])
			prec.Rule, prec.Match = i, j
			c.http = append(c.http, httpEntry{Route: withMatch(template, r, label, j, m), Precedence: prec})
		}
	}
	return c
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
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if _, dup := out.Headers[name]; dup {
			continue
		}
		if out.Headers == nil {
			out.Headers = map[string]*networking.StringMatch{}
		}
		out.Headers[name] = stringMatch(h.Type != nil && *h.Type == gatewayv1.GRPCHeaderMatchRegularExpression, h.Value)
	}
	p.Headers = len(out.Headers)
	if out.Uri == nil && out.Headers == nil {
		out.Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: "/"}}
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
