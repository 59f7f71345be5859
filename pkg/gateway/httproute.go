package gateway

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	networking "istio.io/api/networking/v1alpha3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// newHTTPRoutes builds "gateway/HTTPRoutes": the fragments of every
// HTTPRoute on the listeners it attaches to, and its status.
func newHTTPRoutes(routes krt.Collection[config.Config], in *routeInputs, o *options) (krt.Collection[krt.ObjectWithStatus[config.Config, RouteStatus]], krt.Collection[routeFragment]) {
	return newRequestRoutes("HTTPRoute", routes, httpRouteParent, httpRules, in.grpcRivals, in, o)
}

// newRequestRoutes builds the collection of a route kind whose rules
// become Istio http routes (HTTPRoute, GRPCRoute), named
// "gateway/<Kind>s". Its rivals are the routes of the other such kind.
func newRequestRoutes(kind string, routes krt.Collection[config.Config], parent func(config.Config) (routeParent, bool), rules func(config.Config) []requestRule,
	rivals *rivals, in *routeInputs, o *options,
) (krt.Collection[krt.ObjectWithStatus[config.Config, RouteStatus]], krt.Collection[routeFragment]) {
	return krt.NewStatusManyCollection(routes, func(ctx krt.HandlerContext, r config.Config) (*RouteStatus, []routeFragment) {
		p, ok := parent(r)
		if !ok {
			return nil, nil
		}
		p.rivals = rivals
		return translateRoute(ctx, p, requestRouteContent(ctx, r, p.kind, rules(r), in), in)
	}, o.collection("gateway/"+kind+"s")...)
}

// httpRouteParent reads an HTTPRoute for attaching.
func httpRouteParent(r config.Config) (routeParent, bool) {
	spec, ok := r.Spec.(*gatewayv1.HTTPRouteSpec)
	if !ok {
		return routeParent{}, false
	}
	return routeParent{kind: "HTTPRoute", route: r, parentRefs: spec.ParentRefs, hostnames: hostnameStrings(spec.Hostnames)}, true
}

// requestRule is a rule of an HTTPRoute or a GRPCRoute, in the form both
// translate from.
type requestRule struct {
	name     *gatewayv1.SectionName
	filters  []gatewayv1.HTTPRouteFilter
	backends []backendRef
	timeouts *gatewayv1.HTTPRouteTimeouts
	retry    *gatewayv1.HTTPRouteRetry
	// matches are the rule's matches translated, the default one for a
	// rule without any.
	matches []requestMatch
}

// requestMatch is a translated match and its precedence.
type requestMatch struct {
	match      *networking.HTTPMatchRequest
	precedence precedence
}

// httpRules reads the rules of an HTTPRoute.
func httpRules(r config.Config) []requestRule {
	spec := r.Spec.(*gatewayv1.HTTPRouteSpec)
	out := make([]requestRule, len(spec.Rules))
	for i := range spec.Rules {
		rule := &spec.Rules[i]
		rr := requestRule{name: rule.Name, filters: rule.Filters, timeouts: rule.Timeouts, retry: rule.Retry}
		for _, b := range rule.BackendRefs {
			rr.backends = append(rr.backends, backendRef{ref: b.BackendRef, filters: b.Filters})
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.HTTPRouteMatch{{}}
		}
		for j := range matches {
			m, p := httpMatch(&matches[j])
			rr.matches = append(rr.matches, requestMatch{m, p})
		}
		out[i] = rr
	}
	return out
}

// requestRouteContent translates the rules of an HTTPRoute or GRPCRoute:
// each match of each rule becomes one Istio http route (so that matches
// of one rule can take different places in the precedence order),
// carrying the rule's filters, backends and timeouts.
func requestRouteContent(ctx krt.HandlerContext, r config.Config, kind string, rules []requestRule, in *routeInputs) routeContent {
	c := routeContent{allRules: len(rules)}
	for i, rule := range rules {
		where := fmt.Sprintf("rules[%d]", i)
		label := ruleLabel(i, rule.name)
		filters := applyFilters(ctx, r, kind, where, rule.filters, in, &c.problems)
		template := &networking.HTTPRoute{
			Headers:    filters.headers,
			Redirect:   filters.redirect,
			Rewrite:    filters.rewrite,
			Mirrors:    filters.mirrors,
			CorsPolicy: filters.cors,
		}
		if filters.redirect == nil {
			unsupported := routeToBackends(ctx, r, kind, where, template, rule.backends, filters.broken, in, &c.problems)
			filters.unsupported = append(filters.unsupported, unsupported...)
			if err := applyTimeouts(template, rule.timeouts, rule.retry); err != "" {
				filters.unsupported = append(filters.unsupported, where+": "+err)
			}
		}
		if len(filters.unsupported) > 0 {
			c.dropped = append(c.dropped, label+" ("+strings.Join(filters.unsupported, "; ")+")")
			continue
		}
		for j, m := range rule.matches {
			prec := m.precedence
			prec.Rule, prec.Match = i, j
			c.http = append(c.http, httpEntry{Route: withMatch(template, r, label, j, m.match), Precedence: prec})
		}
	}
	return c
}

// withMatch returns a copy of template for one match, named
// "namespace.name.rule.match".
func withMatch(template *networking.HTTPRoute, r config.Config, rule string, match int, m *networking.HTTPMatchRequest) *networking.HTTPRoute {
	hr := proto.CloneOf(template)
	hr.Name = fmt.Sprintf("%s.%s.%s.%d", r.Namespace, r.Name, rule, match)
	hr.Match = []*networking.HTTPMatchRequest{m}
	return hr
}

// ruleLabel names a rule in messages and route names: its name, or
// "rule<index>".
func ruleLabel(i int, name *gatewayv1.SectionName) string {
	if name != nil && *name != "" {
		return string(*name)
	}
	return fmt.Sprintf("rule%d", i)
}

// backendRef is a backendRef of an HTTPRoute or GRPCRoute rule with the
// filters that apply to it alone.
type backendRef struct {
	ref     gatewayv1.BackendRef
	filters []gatewayv1.HTTPRouteFilter
}

// routeToBackends fills in where an http route sends its requests: the
// weighted destinations that resolved. Requests meant for backends that
// did not resolve get a 500, as the Gateway API requires: all of them
// (a direct response) when none resolved or the rule is broken, their
// share of the weight (an abort fault) when some did. Backends of weight
// 0 get nothing. It returns the backend filters it cannot implement.
func routeToBackends(ctx krt.HandlerContext, r config.Config, kind, where string, hr *networking.HTTPRoute, backends []backendRef,
	broken bool, in *routeInputs, problems *refProblems,
) (unsupported []string) {
	var w weightedBackends
	var dests []*networking.HTTPRouteDestination
	for k, b := range backends {
		bw := fmt.Sprintf("%s.backendRefs[%d]", where, k)
		weight := backendWeight(b.ref.Weight)
		dest := resolveBackend(ctx, r, kind, bw, b.ref.BackendObjectReference, in, problems)
		if dest == nil {
			w.invalid += int64(weight)
			continue
		}
		d := &networking.HTTPRouteDestination{Destination: dest, Weight: weight}
		for f := range b.filters {
			switch bf := &b.filters[f]; bf.Type {
			case gatewayv1.HTTPRouteFilterRequestHeaderModifier, gatewayv1.HTTPRouteFilterResponseHeaderModifier:
				if d.Headers == nil {
					d.Headers = &networking.Headers{}
				}
				if bf.RequestHeaderModifier != nil {
					d.Headers.Request = mergeHeaderOps(d.Headers.Request, bf.RequestHeaderModifier)
				}
				if bf.ResponseHeaderModifier != nil {
					d.Headers.Response = mergeHeaderOps(d.Headers.Response, bf.ResponseHeaderModifier)
				}
			default:
				unsupported = append(unsupported, fmt.Sprintf("%s.filters[%d]: filter %s is not supported on a backendRef", bw, f, bf.Type))
			}
		}
		if weight == 0 {
			continue
		}
		w.valid += int64(weight)
		dests = append(dests, d)
	}
	if broken || len(dests) == 0 {
		hr.DirectResponse = &networking.HTTPDirectResponse{Status: 500}
		hr.Rewrite, hr.Mirrors = nil, nil
		return unsupported
	}
	if len(dests) == 1 {
		dests[0].Weight = 0 // the only destination takes everything
	}
	hr.Route = dests
	if share := w.brokenShare(); share > 0 {
		hr.Fault = &networking.HTTPFaultInjection{Abort: &networking.HTTPFaultInjection_Abort{
			ErrorType:  &networking.HTTPFaultInjection_Abort_HttpStatus{HttpStatus: 500},
			Percentage: &networking.Percent{Value: share},
		}}
	}
	return unsupported
}

// applyTimeouts translates a rule's timeouts and retries. The request
// timeout bounds the whole exchange ("0s": none); a backend request
// timeout bounds each try when the rule retries, and the exchange when it
// sets no request timeout. It returns a problem with a duration, which
// validation should have caught.
func applyTimeouts(hr *networking.HTTPRoute, t *gatewayv1.HTTPRouteTimeouts, retry *gatewayv1.HTTPRouteRetry) string {
	var request, backend *durationpb.Duration
	if t != nil {
		var err error
		if request, err = gatewayDuration(t.Request); err != nil {
			return "timeouts.request: " + err.Error()
		}
		if backend, err = gatewayDuration(t.BackendRequest); err != nil {
			return "timeouts.backendRequest: " + err.Error()
		}
	}
	switch {
	case request != nil:
		hr.Timeout = request
	case backend != nil:
		hr.Timeout = backend
	}
	if retry == nil {
		return ""
	}
	if retry.Attempts != nil && *retry.Attempts == 0 {
		hr.Retries = &networking.HTTPRetry{} // retries off
		return ""
	}
	// Connection errors are retried whenever a rule retries; status codes
	// (numbers in retryOn) when it names them.
	hr.Retries = &networking.HTTPRetry{Attempts: defaultRetryAttempts, RetryOn: "connect-failure,refused-stream,unavailable,cancelled"}
	if retry.Attempts != nil {
		hr.Retries.Attempts = int32(*retry.Attempts)
	}
	for _, c := range retry.Codes {
		hr.Retries.RetryOn += fmt.Sprintf(",%d", int(c))
	}
	backoff, err := gatewayDuration(retry.Backoff)
	if err != nil {
		return "retry.backoff: " + err.Error()
	}
	hr.Retries.Backoff = backoff
	if backend != nil {
		hr.Retries.PerTryTimeout = backend
	}
	return ""
}

// defaultRetryAttempts is how many retries a rule that retries without
// saying how often gets, as in Istio.
const defaultRetryAttempts = 2

// gatewayDuration reads a Gateway API duration (GEP-2257: "1h", "30s",
// "500ms", "1m30s"), nil for none.
func gatewayDuration(d *gatewayv1.Duration) (*durationpb.Duration, error) {
	if d == nil {
		return nil, nil
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil {
		return nil, fmt.Errorf("duration %q: %w", *d, err)
	}
	return durationpb.New(v), nil
}

// hostnameStrings converts route hostnames.
func hostnameStrings(hs []gatewayv1.Hostname) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = string(h)
	}
	return out
}
