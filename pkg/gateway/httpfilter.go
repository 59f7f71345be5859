package gateway

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// filterResult is what a rule's filters do to its Istio http route.
type filterResult struct {
	headers  *networking.Headers
	redirect *networking.HTTPRedirect
	rewrite  *networking.HTTPRewrite
	mirrors  []*networking.HTTPMirrorPolicy
	cors     *networking.CorsPolicy
	// unsupported lists filters meshcp cannot implement; the rule is
	// dropped.
	unsupported []string
	// broken says a filter refers to something that does not exist; the
	// rule answers 500, as the Gateway API requires.
	broken bool
}

// applyFilters translates the filters of a rule (of a route of kind kind;
// where names the rule in messages). GRPCRoute filters, a subset, are
// passed in the HTTPRoute form.
func applyFilters(ctx krt.HandlerContext, route config.Config, kind, where string, filters []gatewayv1.HTTPRouteFilter, in *routeInputs, problems *refProblems) filterResult {
	var r filterResult
	for i := range filters {
		f := &filters[i]
		fw := fmt.Sprintf("%s.filters[%d]", where, i)
		switch f.Type {
		case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
			if f.RequestHeaderModifier != nil {
				r.headerOps().Request = mergeHeaderOps(r.headerOps().Request, f.RequestHeaderModifier)
			}
		case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
			if f.ResponseHeaderModifier != nil {
				r.headerOps().Response = mergeHeaderOps(r.headerOps().Response, f.ResponseHeaderModifier)
			}
		case gatewayv1.HTTPRouteFilterRequestRedirect:
			if f.RequestRedirect != nil {
				r.redirect = redirect(f.RequestRedirect)
			}
		case gatewayv1.HTTPRouteFilterURLRewrite:
			if f.URLRewrite != nil {
				r.rewrite = rewrite(f.URLRewrite)
			}
		case gatewayv1.HTTPRouteFilterRequestMirror:
			if m := f.RequestMirror; m != nil {
				if dest := resolveBackend(ctx, route, kind, fw+".requestMirror.backendRef", m.BackendRef, in, problems); dest != nil {
					r.mirrors = append(r.mirrors, &networking.HTTPMirrorPolicy{Destination: dest, Percentage: mirrorPercentage(m)})
				}
			}
		case gatewayv1.HTTPRouteFilterCORS:
			if f.CORS != nil {
				r.cors = corsPolicy(f.CORS)
			}
		case gatewayv1.HTTPRouteFilterExtensionRef:
			ref := f.ExtensionRef
			name := ""
			if ref != nil {
				name = fmt.Sprintf(" %s %q", groupKind(string(ref.Group), string(ref.Kind)), ref.Name)
			}
			problems.add(gatewayv1.RouteReasonInvalidKind, "%s: extensionRef%s: meshcp has no filter extensions", fw, name)
			r.broken = true
		default:
			r.unsupported = append(r.unsupported, fmt.Sprintf("%s: filter %s is not supported", fw, f.Type))
		}
	}
	return r
}

func (r *filterResult) headerOps() *networking.Headers {
	if r.headers == nil {
		r.headers = &networking.Headers{}
	}
	return r.headers
}

// mergeHeaderOps adds a header filter's set, add and remove to ops.
func mergeHeaderOps(ops *networking.Headers_HeaderOperations, f *gatewayv1.HTTPHeaderFilter) *networking.Headers_HeaderOperations {
	if ops == nil {
		ops = &networking.Headers_HeaderOperations{}
	}
	for _, h := range f.Set {
		if ops.Set == nil {
			ops.Set = map[string]string{}
		}
		ops.Set[string(h.Name)] = h.Value
	}
	for _, h := range f.Add {
		if ops.Add == nil {
			ops.Add = map[string]string{}
		}
		ops.Add[string(h.Name)] = h.Value
	}
	ops.Remove = append(ops.Remove, f.Remove...)
	return ops
}

// redirect translates a RequestRedirect. Without a port, a new scheme
// takes that scheme's default port; without either, the port the request
// came in on stays. A prefix replacement of "" means "/".
func redirect(f *gatewayv1.HTTPRequestRedirectFilter) *networking.HTTPRedirect {
	rd := &networking.HTTPRedirect{RedirectCode: 302}
	if f.StatusCode != nil {
		rd.RedirectCode = uint32(*f.StatusCode)
	}
	if f.Scheme != nil {
		rd.Scheme = *f.Scheme
	}
	if f.Hostname != nil {
		rd.Authority = string(*f.Hostname)
	}
	switch {
	case f.Port != nil:
		rd.RedirectPort = &networking.HTTPRedirect_Port{Port: uint32(*f.Port)}
	case f.Scheme != nil:
		rd.RedirectPort = &networking.HTTPRedirect_DerivePort{DerivePort: networking.HTTPRedirect_FROM_PROTOCOL_DEFAULT}
	}
	if p := f.Path; p != nil {
		switch {
		case p.Type == gatewayv1.FullPathHTTPPathModifier && p.ReplaceFullPath != nil:
			rd.Uri = *p.ReplaceFullPath
		case p.Type == gatewayv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil:
			rd.PrefixRewrite = orSlash(*p.ReplacePrefixMatch)
		}
	}
	return rd
}

// rewrite translates a URLRewrite: a full path replacement becomes a
// regular expression rewrite of the whole path, a prefix replacement
// Istio's uri rewrite ("" meaning "/").
func rewrite(f *gatewayv1.HTTPURLRewriteFilter) *networking.HTTPRewrite {
	rw := &networking.HTTPRewrite{}
	if f.Hostname != nil {
		rw.Authority = string(*f.Hostname)
	}
	if p := f.Path; p != nil {
		switch {
		case p.Type == gatewayv1.FullPathHTTPPathModifier && p.ReplaceFullPath != nil:
			rw.UriRegexRewrite = &networking.RegexRewrite{Match: "/.*", Rewrite: *p.ReplaceFullPath}
		case p.Type == gatewayv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil:
			rw.Uri = orSlash(*p.ReplacePrefixMatch)
		}
	}
	return rw
}

func orSlash(s string) string {
	if s == "" {
		return "/"
	}
	return s
}

// mirrorPercentage is the share of requests a mirror filter copies: its
// percent, or its fraction, or all (nil).
func mirrorPercentage(m *gatewayv1.HTTPRequestMirrorFilter) *networking.Percent {
	switch {
	case m.Percent != nil:
		return &networking.Percent{Value: float64(*m.Percent)}
	case m.Fraction != nil:
		den := int32(100)
		if m.Fraction.Denominator != nil {
			den = *m.Fraction.Denominator
		}
		if den <= 0 {
			return nil
		}
		return &networking.Percent{Value: float64(m.Fraction.Numerator) * 100 / float64(den)}
	}
	return nil
}

// corsPolicy translates a CORS filter. Origins are matched exactly, "*"
// and wildcard hosts ("https://*.example.com") by regular expression.
func corsPolicy(f *gatewayv1.HTTPCORSFilter) *networking.CorsPolicy {
	p := &networking.CorsPolicy{}
	for _, o := range f.AllowOrigins {
		origin := string(o)
		if !strings.Contains(origin, "*") {
			p.AllowOrigins = append(p.AllowOrigins, &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: origin}})
			continue
		}
		re := strings.ReplaceAll(regexp.QuoteMeta(origin), `\*`, ".+")
		p.AllowOrigins = append(p.AllowOrigins, &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: re}})
	}
	for _, m := range f.AllowMethods {
		p.AllowMethods = append(p.AllowMethods, string(m))
	}
	for _, h := range f.AllowHeaders {
		p.AllowHeaders = append(p.AllowHeaders, string(h))
	}
	for _, h := range f.ExposeHeaders {
		p.ExposeHeaders = append(p.ExposeHeaders, string(h))
	}
	if f.MaxAge > 0 {
		p.MaxAge = durationpb.New(time.Duration(f.MaxAge) * time.Second)
	}
	if f.AllowCredentials != nil {
		p.AllowCredentials = wrapperspb.Bool(*f.AllowCredentials)
	}
	return p
}
