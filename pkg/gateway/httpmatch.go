package gateway

import (
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// httpMatch translates one HTTPRouteMatch into an Istio match and its
// precedence. A path defaults to the prefix "/". Prefixes lose a trailing
// slash: under the Gateway API's element-wise prefix semantics (see
// RouteSemanticsAnnotation) "/foo/" and "/foo" match the same paths.
// Header names are case-insensitive, so they are lowercased; of several
// header (or query parameter) matches with one name only the first
// counts, as the Gateway API requires.
func httpMatch(m *gatewayv1.HTTPRouteMatch) (*networking.HTTPMatchRequest, precedence) {
	out := &networking.HTTPMatchRequest{}
	var p precedence
	typ, value := gatewayv1.PathMatchPathPrefix, "/"
	if m.Path != nil {
		if m.Path.Type != nil {
			typ = *m.Path.Type
		}
		if m.Path.Value != nil {
			value = *m.Path.Value
		}
	}
	switch typ {
	case gatewayv1.PathMatchExact:
		out.Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: value}}
		p.PathKind = pathExact
	case gatewayv1.PathMatchRegularExpression:
		out.Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: value}}
		p.PathKind = pathRegex
	default:
		if value != "/" {
			value = strings.TrimRight(value, "/")
		}
		out.Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: value}}
		p.PathKind = pathPrefix
	}
	p.PathLen = len(value)
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if _, dup := out.Headers[name]; dup {
			continue
		}
		if out.Headers == nil {
			out.Headers = map[string]*networking.StringMatch{}
		}
		out.Headers[name] = stringMatch(h.Type != nil && *h.Type == gatewayv1.HeaderMatchRegularExpression, h.Value)
	}
	p.Headers = len(out.Headers)
	for _, q := range m.QueryParams {
		name := string(q.Name)
		if _, dup := out.QueryParams[name]; dup {
			continue
		}
		if out.QueryParams == nil {
			out.QueryParams = map[string]*networking.StringMatch{}
		}
		out.QueryParams[name] = stringMatch(q.Type != nil && *q.Type == gatewayv1.QueryParamMatchRegularExpression, q.Value)
	}
	p.Queries = len(out.QueryParams)
	if m.Method != nil {
		out.Method = &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: string(*m.Method)}}
		p.Method = true
	}
	return out, p
}

// stringMatch is an exact or a regular expression match of value.
func stringMatch(regex bool, value string) *networking.StringMatch {
	if regex {
		return &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: value}}
	}
	return &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: value}}
}
