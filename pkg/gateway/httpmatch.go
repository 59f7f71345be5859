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
	out.Headers = firstMatches(m.Headers, func(h gatewayv1.HTTPHeaderMatch) (string, bool, string) {
		return strings.ToLower(string(h.Name)), h.Type != nil && *h.Type == gatewayv1.HeaderMatchRegularExpression, h.Value
	})
	p.Headers = len(out.Headers)
	out.QueryParams = firstMatches(m.QueryParams, func(q gatewayv1.HTTPQueryParamMatch) (string, bool, string) {
		return string(q.Name), q.Type != nil && *q.Type == gatewayv1.QueryParamMatchRegularExpression, q.Value
	})
	p.Queries = len(out.QueryParams)
	if m.Method != nil {
		out.Method = &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: string(*m.Method)}}
		p.Method = true
	}
	return out, p
}

// firstMatches builds the match map of header (or query parameter)
// matches: read gives each one's name, whether it is a regular expression,
// and its value; of several with one name only the first counts. No
// matches give nil.
func firstMatches[M any](ms []M, read func(M) (name string, regex bool, value string)) map[string]*networking.StringMatch {
	var out map[string]*networking.StringMatch
	for _, m := range ms {
		name, regex, value := read(m)
		if _, dup := out[name]; dup {
			continue
		}
		if out == nil {
			out = map[string]*networking.StringMatch{}
		}
		out[name] = stringMatch(regex, value)
	}
	return out
}

// stringMatch is an exact or a regular expression match of value.
func stringMatch(regex bool, value string) *networking.StringMatch {
	if regex {
		return &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: value}}
	}
	return &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: value}}
}
