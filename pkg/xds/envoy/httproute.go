package envoy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	faultcommonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/common/fault/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	previoushostsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/registry"
)

// routeContext is where routes are generated: the port of the listener
// and the gateway ("mesh" for sidecars and gRPC clients, "ns/name" for a
// gateway), the service a mesh virtual host is for, and the one address
// a listener takes connections for, if it has one (a sidecar's per-VIP
// TCP listener; tcp and tls routes match destination subnets on it).
type routeContext struct {
	port    uint32
	gateway string
	service *registry.Service
	vip     string
}

// virtualServiceRoutes translates the http routes of a VirtualService, in
// order. A route whose matches all belong to other ports, gateways or
// source workloads is left out; routes after one that matches everything
// are unreachable and left out too.
func (b *build) virtualServiceRoutes(v *virtualService, rc routeContext) []*routev3.Route {
	var out []*routev3.Route
	object := v.cfg.Key()
	for i, h := range v.spec.Http {
		field := fmt.Sprintf("spec.http[%d]", i)
		if h.Delegate != nil {
			b.w.add(object, field+".delegate", "delegate VirtualServices are not supported; route left out")
			continue
		}
		matches := b.applicableMatches(v, h.Match, rc)
		if len(h.Match) > 0 && len(matches) == 0 {
			continue
		}
		action, ok := b.routeAction(v, h, field, rc)
		if !ok {
			continue
		}
		if len(matches) == 0 {
			matches = []*networking.HTTPMatchRequest{nil}
		}
		catchAll := false
		for j, mr := range matches {
			match, err := routeMatch(mr, b.p.Kind)
			if err != nil {
				b.w.add(object, fmt.Sprintf("%s.match[%d]", field, j), "%v; match left out", err)
				continue
			}
			for _, m := range b.pathPrefixes(match, v.elementPrefixes, object, fmt.Sprintf("%s.match[%d].uri", field, j)) {
				r := action.clone()
				r.Match = m
				r.Name = routeName(h.Name, mr)
				out = append(out, r)
				catchAll = catchAll || isCatchAll(m)
			}
		}
		if catchAll {
			break
		}
	}
	return out
}

// pathPrefixes gives a match its prefix semantics. Istio's prefixes are
// by character ("/foo" matches "/foobar"); the Gateway API's, which
// VirtualServices marked with gateway route semantics carry, are by path
// element ("/foo" matches "/foo" and "/foo/bar", not "/foobar"). Envoy
// has that as path_separated_prefix; grpc-go does not (it rejects the
// whole route configuration that uses it, as of v1.85), so gRPC clients
// get the two matches it stands for: the exact path and the prefix
// "/foo/".
func (b *build) pathPrefixes(m *routev3.RouteMatch, elementWise bool, object, field string) []*routev3.RouteMatch {
	prefix, ok := m.PathSpecifier.(*routev3.RouteMatch_Prefix)
	if !elementWise || !ok || prefix.Prefix == "/" || prefix.Prefix == "" {
		return []*routev3.RouteMatch{m}
	}
	p := strings.TrimRight(prefix.Prefix, "/")
	if p == "" {
		return []*routev3.RouteMatch{m}
	}
	if strings.ContainsAny(p, "?#") {
		b.w.add(object, field, "prefix %q holds a query or fragment character and cannot match by path element; matched by character", prefix.Prefix)
		return []*routev3.RouteMatch{m}
	}
	if b.p.Kind != ProxylessGRPC {
		m.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: p}
		return []*routev3.RouteMatch{m}
	}
	exact := proto.Clone(m).(*routev3.RouteMatch)
	exact.PathSpecifier = &routev3.RouteMatch_Path{Path: p}
	m.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: p + "/"}
	return []*routev3.RouteMatch{exact, m}
}

func routeName(name string, m *networking.HTTPMatchRequest) string {
	if m != nil && m.Name != "" {
		if name == "" {
			return m.Name
		}
		return name + "." + m.Name
	}
	return name
}

func isCatchAll(m *routev3.RouteMatch) bool {
	return m.GetPrefix() == "/" && len(m.Headers) == 0 && len(m.QueryParameters) == 0 && m.RuntimeFraction == nil
}

// applicableMatches keeps the match conditions of v that apply here: on
// this listener port, for this gateway (a short name is in v's
// namespace, as in v's own gateways), from this proxy's workload and
// namespace.
func (b *build) applicableMatches(v *virtualService, ms []*networking.HTTPMatchRequest, rc routeContext) []*networking.HTTPMatchRequest {
	var out []*networking.HTTPMatchRequest
	for _, m := range ms {
		if m.Port != 0 && m.Port != rc.port {
			continue
		}
		if len(m.Gateways) > 0 && !slices.ContainsFunc(m.Gateways, func(g string) bool { return resolveGatewayName(g, v.cfg.Namespace) == rc.gateway }) {
			continue
		}
		if !labelsInclude(b.p.Labels, m.SourceLabels) {
			continue
		}
		if m.SourceNamespace != "" && m.SourceNamespace != b.p.Namespace {
			continue
		}
		out = append(out, m)
	}
	return out
}

func labelsInclude(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// routeMatch translates one match condition; nil matches every request.
// gRPC clients ignore routes with query parameter matches (A28), so such
// a match is an error for them rather than a silently different route.
func routeMatch(m *networking.HTTPMatchRequest, f Flavour) (*routev3.RouteMatch, error) {
	out := &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}
	if m == nil {
		return out, nil
	}
	switch u := m.Uri.GetMatchType().(type) {
	case *networking.StringMatch_Exact:
		out.PathSpecifier = &routev3.RouteMatch_Path{Path: u.Exact}
	case *networking.StringMatch_Prefix:
		out.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: u.Prefix}
	case *networking.StringMatch_Regex:
		out.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: u.Regex}}
	}
	if m.IgnoreUriCase {
		out.CaseSensitive = wrapperspb.Bool(false)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Headers)) {
		out.Headers = append(out.Headers, headerMatcher(name, m.Headers[name], false))
	}
	for _, name := range slices.Sorted(maps.Keys(m.WithoutHeaders)) {
		out.Headers = append(out.Headers, headerMatcher(name, m.WithoutHeaders[name], true))
	}
	for name, sm := range map[string]*networking.StringMatch{":method": m.Method, ":scheme": m.Scheme, ":authority": m.Authority} {
		if sm != nil {
			out.Headers = append(out.Headers, headerMatcher(name, sm, false))
		}
	}
	slices.SortStableFunc(out.Headers, func(a, c *routev3.HeaderMatcher) int { return strings.Compare(a.Name, c.Name) })
	if len(m.QueryParams) > 0 {
		if f == ProxylessGRPC {
			return nil, fmt.Errorf("gRPC clients ignore routes that match query parameters")
		}
		for _, name := range slices.Sorted(maps.Keys(m.QueryParams)) {
			qp := &routev3.QueryParameterMatcher{Name: name}
			if sm := stringMatcher(m.QueryParams[name]); sm != nil {
				qp.QueryParameterMatchSpecifier = &routev3.QueryParameterMatcher_StringMatch{StringMatch: sm}
			} else {
				qp.QueryParameterMatchSpecifier = &routev3.QueryParameterMatcher_PresentMatch{PresentMatch: true}
			}
			out.QueryParameters = append(out.QueryParameters, qp)
		}
	}
	return out, nil
}

// headerMatcher matches a header by a string match; an empty match means
// the header is present.
func headerMatcher(name string, sm *networking.StringMatch, invert bool) *routev3.HeaderMatcher {
	h := &routev3.HeaderMatcher{Name: strings.ToLower(name), InvertMatch: invert}
	if m := stringMatcher(sm); m != nil {
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_StringMatch{StringMatch: m}
	} else {
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}
	}
	return h
}

func stringMatcher(sm *networking.StringMatch) *matcherv3.StringMatcher {
	switch m := sm.GetMatchType().(type) {
	case *networking.StringMatch_Exact:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: m.Exact}}
	case *networking.StringMatch_Prefix:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: m.Prefix}}
	case *networking.StringMatch_Regex:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: m.Regex}}}
	}
	return nil
}

// routeTemplate is a translated route without its match.
type routeTemplate struct{ route *routev3.Route }

func (t routeTemplate) clone() *routev3.Route {
	return cloneRoute(t.route)
}

// routeAction translates what an http route does: redirect, direct
// response, or route to weighted destinations with timeout, retries,
// fault injection, rewrites, header changes and mirrors. What a gRPC
// client does not implement is not sent to it (A28, A31, A44): rewrites,
// header changes, mirrors and per-try timeouts; the timeout becomes
// max_stream_duration.
func (b *build) routeAction(v *virtualService, h *networking.HTTPRoute, field string, rc routeContext) (routeTemplate, bool) {
	object := v.cfg.Key()
	grpc := b.p.Kind == ProxylessGRPC
	r := &routev3.Route{}
	if fault := faultConfig(h.Fault, &b.w, object, field+".fault"); fault != nil {
		r.TypedPerFilterConfig = map[string]*anypb.Any{faultFilterName: mustAny(fault)}
	}
	switch {
	case h.Redirect != nil:
		if grpc {
			b.w.add(object, field+".redirect", "gRPC clients cannot follow redirects: RPCs matching this route fail")
		}
		r.Action = &routev3.Route_Redirect{Redirect: redirectAction(h.Redirect)}
		return routeTemplate{r}, true
	case h.DirectResponse != nil:
		if grpc {
			b.w.add(object, field+".directResponse", "gRPC clients do not take direct responses: RPCs matching this route fail")
		}
		r.Action = &routev3.Route_DirectResponse{DirectResponse: directResponse(h.DirectResponse)}
		return routeTemplate{r}, true
	}
	if len(h.Route) == 0 {
		b.w.add(object, field+".route", "no destination; route left out")
		return routeTemplate{}, false
	}
	action := &routev3.RouteAction{}
	var hashFrom trafficPolicy
	hashSet := false
	var weighted []*routev3.WeightedCluster_ClusterWeight
	total := 0
	for _, d := range h.Route {
		if d.Weight > 0 {
			total += int(d.Weight)
		}
	}
	for i, d := range h.Route {
		if total > 0 && d.Weight <= 0 {
			continue
		}
		name, svc, dr := b.destinationCluster(v, d.Destination, rc, fmt.Sprintf("%s.route[%d].destination", field, i))
		if svc != nil && dr != nil && !hashSet {
			// The first destination's policy decides how requests hash.
			ref, _ := ParseClusterName(name)
			hashFrom, hashSet = policyFor(dr, dr.subset(d.Destination.GetSubset()), ref.Port), true
		}
		cw := &routev3.WeightedCluster_ClusterWeight{Name: name, Weight: wrapUInt32(uint32(max(d.Weight, 1)))}
		if total == 0 {
			cw.Weight = wrapUInt32(1)
		}
		if d.Headers != nil {
			if grpc {
				b.w.add(object, fmt.Sprintf("%s.route[%d].headers", field, i), "gRPC clients do not change headers; left out")
			} else {
				cw.RequestHeadersToAdd, cw.RequestHeadersToRemove = headerOperations(d.Headers.Request)
				cw.ResponseHeadersToAdd, cw.ResponseHeadersToRemove = headerOperations(d.Headers.Response)
			}
		}
		weighted = append(weighted, cw)
	}
	if len(weighted) == 1 && weighted[0].RequestHeadersToAdd == nil && weighted[0].RequestHeadersToRemove == nil &&
		weighted[0].ResponseHeadersToAdd == nil && weighted[0].ResponseHeadersToRemove == nil {
		action.ClusterSpecifier = &routev3.RouteAction_Cluster{Cluster: weighted[0].Name}
	} else {
		action.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: &routev3.WeightedCluster{Clusters: weighted}}
	}
	if hashSet {
		action.HashPolicy = hashPolicies(hashFrom.loadBalancer, b.p.Kind, &b.w, object)
	}
	b.applyTimeout(action, h.Timeout)
	action.RetryPolicy = b.retryPolicy(h.Retries, object, field+".retries")

	if !grpc {
		if rw := h.Rewrite; rw != nil {
			if rw.Uri != "" {
				action.PrefixRewrite = rw.Uri
			}
			if re := rw.UriRegexRewrite; re != nil {
				action.RegexRewrite = &matcherv3.RegexMatchAndSubstitute{Pattern: &matcherv3.RegexMatcher{Regex: re.Match}, Substitution: re.Rewrite}
			}
			if rw.Authority != "" {
				action.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: rw.Authority}
			}
		}
		action.RequestMirrorPolicies = b.mirrors(v, h, field, rc)
		if h.Headers != nil {
			r.RequestHeadersToAdd, r.RequestHeadersToRemove = headerOperations(h.Headers.Request)
			r.ResponseHeadersToAdd, r.ResponseHeadersToRemove = headerOperations(h.Headers.Response)
		}
	} else {
		for what, set := range map[string]bool{"rewrite": h.Rewrite != nil, "mirror": h.Mirror != nil || len(h.Mirrors) > 0, "headers": h.Headers != nil, "corsPolicy": h.CorsPolicy != nil} {
			if set {
				b.w.add(object, field+"."+what, "gRPC clients do not implement %s; left out", what)
			}
		}
	}
	if h.CorsPolicy != nil && !grpc {
		b.w.add(object, field+".corsPolicy", "CORS policies are not generated yet; left out")
	}
	r.Action = &routev3.Route_Route{Route: action}
	return routeTemplate{r}, true
}

// destinationCluster names the cluster of a destination: its host
// resolved in the VirtualService's namespace, its port (the one given,
// the service's only port, the listener's port for the service itself),
// its subset. A destination the registry does not know still gets its
// name: the client sees a missing cluster, as with istiod.
func (b *build) destinationCluster(v *virtualService, d *networking.Destination, rc routeContext, field string) (string, *registry.Service, *destinationRule) {
	host := registry.ResolveHost(d.GetHost(), v.cfg.Namespace, b.m.domain(v.cfg))
	svc := b.m.service(host, b.p)
	port := d.GetPort().GetNumber()
	if svc == nil {
		b.w.add(v.cfg.Key(), field+".host", "no service %s is visible from namespace %s", host, b.p.Namespace)
		if port == 0 {
			port = rc.port
		}
		return ClusterName(port, d.GetSubset(), host), nil, nil
	}
	if port == 0 {
		switch {
		case len(svc.Ports) == 1:
			port = svc.Ports[0].Number
		case rc.service == svc:
			port = rc.port
		case len(svc.Ports) > 0:
			port = svc.Ports[0].Number
			b.w.add(v.cfg.Key(), field+".port", "%s has several ports and the destination names none; using %d", host, port)
		}
	}
	dr := b.m.destinationRule(svc, b.p)
	if d.GetSubset() != "" && dr.subset(d.GetSubset()) == nil {
		b.w.add(v.cfg.Key(), field+".subset", "no DestinationRule of %s defines subset %q", host, d.GetSubset())
	}
	return ClusterName(port, d.GetSubset(), host), svc, dr
}

// applyTimeout sets the route timeout: for Envoy the route timeout (0, no
// timeout, when the route sets none, as istiod does); for gRPC
// max_stream_duration, which is what gRPC implements (A31).
func (b *build) applyTimeout(a *routev3.RouteAction, timeout *durationpb.Duration) {
	if b.p.Kind == ProxylessGRPC {
		if timeout != nil && timeout.AsDuration() > 0 {
			a.MaxStreamDuration = &routev3.RouteAction_MaxStreamDuration{MaxStreamDuration: timeout, GrpcTimeoutHeaderMax: timeout}
		}
		return
	}
	if timeout == nil {
		timeout = durationpb.New(0)
	}
	a.Timeout = timeout
}

// grpcRetryOn are the retry conditions gRPC implements (A44).
var grpcRetryOn = []string{"cancelled", "deadline-exceeded", "internal", "resource-exhausted", "unavailable"}

// defaultRetryOn is Istio's default retry policy's condition.
const defaultRetryOn = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"

// retryPolicy translates a route's retries. Envoy routes without retries
// get the mesh's default policy (MeshConfig defaultHttpRetryPolicy, else
// Istio's: 2 attempts on connection failures and 503s); gRPC clients get
// only the retries a route asks for, on the gRPC codes named in retryOn.
// Zero attempts turns retries off.
func (b *build) retryPolicy(r *networking.HTTPRetry, object, field string) *routev3.RetryPolicy {
	grpc := b.p.Kind == ProxylessGRPC
	if r == nil {
		if grpc {
			return nil
		}
		r = b.m.mesh().GetDefaultHttpRetryPolicy()
		if r == nil {
			r = &networking.HTTPRetry{Attempts: 2, RetryOn: defaultRetryOn}
		}
	}
	if r.Attempts <= 0 {
		return nil
	}
	p := &routev3.RetryPolicy{NumRetries: wrapUInt32(uint32(r.Attempts))}
	retryOn := r.RetryOn
	if retryOn == "" {
		retryOn = defaultRetryOn
	}
	var conds []string
	for _, c := range strings.Split(retryOn, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if code, err := strconv.Atoi(c); err == nil {
			if !grpc {
				p.RetriableStatusCodes = append(p.RetriableStatusCodes, uint32(code))
			}
			continue
		}
		if grpc && !slices.Contains(grpcRetryOn, c) {
			continue
		}
		conds = append(conds, c)
	}
	if len(p.RetriableStatusCodes) > 0 && !slices.Contains(conds, "retriable-status-codes") {
		conds = append(conds, "retriable-status-codes")
	}
	if strings.Contains(retryOn, "retriable-status-codes") && len(p.RetriableStatusCodes) == 0 && !grpc {
		p.RetriableStatusCodes = []uint32{503}
	}
	if len(conds) == 0 {
		if grpc {
			b.w.add(object, field+".retryOn", "no gRPC code among %q (gRPC retries on %s); no retries", retryOn, strings.Join(grpcRetryOn, ", "))
		}
		return nil
	}
	p.RetryOn = strings.Join(conds, ",")
	if r.Backoff != nil && r.Backoff.AsDuration() > 0 {
		p.RetryBackOff = &routev3.RetryPolicy_RetryBackOff{BaseInterval: r.Backoff}
	}
	if grpc {
		return p
	}
	p.PerTryTimeout = r.PerTryTimeout
	if r.RetryIgnorePreviousHosts == nil || r.RetryIgnorePreviousHosts.GetValue() {
		p.RetryHostPredicate = []*routev3.RetryPolicy_RetryHostPredicate{{
			Name:       "envoy.retry_host_predicates.previous_hosts",
			ConfigType: &routev3.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: mustAny(&previoushostsv3.PreviousHostsPredicate{})},
		}}
		p.HostSelectionRetryMaxAttempts = 5
	}
	return p
}

// faultConfig translates fault injection into the fault filter's per-route
// configuration; gRPC implements it too (A33). Percentages are kept to a
// ten-thousandth of a percent.
func faultConfig(f *networking.HTTPFaultInjection, w *warnings, object, field string) *faultv3.HTTPFault {
	if f == nil || (f.Delay == nil && f.Abort == nil) {
		return nil
	}
	out := &faultv3.HTTPFault{}
	if d := f.Delay; d != nil {
		if fixed := d.GetFixedDelay(); fixed != nil {
			out.Delay = &faultcommonv3.FaultDelay{
				FaultDelaySecifier: &faultcommonv3.FaultDelay_FixedDelay{FixedDelay: fixed},
				Percentage:         faultPercent(d.Percentage, d.Percent),
			}
		} else {
			w.add(object, field+".delay", "only fixed delays are supported; delay left out")
		}
	}
	if a := f.Abort; a != nil {
		abort := &faultv3.FaultAbort{Percentage: faultPercent(a.Percentage, 0)}
		switch e := a.ErrorType.(type) {
		case *networking.HTTPFaultInjection_Abort_HttpStatus:
			abort.ErrorType = &faultv3.FaultAbort_HttpStatus{HttpStatus: uint32(e.HttpStatus)}
		case *networking.HTTPFaultInjection_Abort_GrpcStatus:
			code, err := grpcCode(e.GrpcStatus)
			if err != nil {
				w.add(object, field+".abort.grpcStatus", "%v; abort left out", err)
				abort = nil
			} else {
				abort.ErrorType = &faultv3.FaultAbort_GrpcStatus{GrpcStatus: code}
			}
		default:
			w.add(object, field+".abort", "only httpStatus and grpcStatus aborts are supported; abort left out")
			abort = nil
		}
		if abort != nil {
			out.Abort = abort
		}
	}
	if out.Delay == nil && out.Abort == nil {
		return nil
	}
	return out
}

// grpcCode reads a gRPC status code by name ("UNAVAILABLE") or number.
func grpcCode(s string) (uint32, error) {
	var c codes.Code
	if err := c.UnmarshalJSON([]byte(strconv.Quote(strings.ToUpper(s)))); err == nil {
		return uint32(c), nil
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil && n <= 16 {
		return uint32(n), nil
	}
	return 0, fmt.Errorf("%q is not a gRPC status code", s)
}

// faultPercent is a fault's share of requests; unset means all of them.
func faultPercent(p *networking.Percent, deprecatedPercent int32) *typev3.FractionalPercent {
	switch {
	case p != nil:
		return &typev3.FractionalPercent{Numerator: uint32(p.Value * 10000), Denominator: typev3.FractionalPercent_MILLION}
	case deprecatedPercent > 0:
		return &typev3.FractionalPercent{Numerator: uint32(deprecatedPercent), Denominator: typev3.FractionalPercent_HUNDRED}
	}
	return &typev3.FractionalPercent{Numerator: 100, Denominator: typev3.FractionalPercent_HUNDRED}
}

// mirrors are the mirror policies of a route: mirror with
// mirrorPercentage, and each of mirrors.
func (b *build) mirrors(v *virtualService, h *networking.HTTPRoute, field string, rc routeContext) []*routev3.RouteAction_RequestMirrorPolicy {
	var out []*routev3.RouteAction_RequestMirrorPolicy
	add := func(d *networking.Destination, pct *networking.Percent, f string) {
		name, _, _ := b.destinationCluster(v, d, rc, f)
		m := &routev3.RouteAction_RequestMirrorPolicy{Cluster: name}
		if pct != nil {
			m.RuntimeFraction = &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{Numerator: uint32(pct.Value * 10000), Denominator: typev3.FractionalPercent_MILLION}}
		}
		out = append(out, m)
	}
	if h.Mirror != nil {
		pct := h.MirrorPercentage
		if pct == nil && h.MirrorPercent != nil {
			pct = &networking.Percent{Value: float64(h.MirrorPercent.GetValue())}
		}
		add(h.Mirror, pct, field+".mirror")
	}
	for i, m := range h.Mirrors {
		add(m.Destination, m.Percentage, fmt.Sprintf("%s.mirrors[%d].destination", field, i))
	}
	return out
}

// headerOperations translates set (overwrite), add (append) and remove.
func headerOperations(ops *networking.Headers_HeaderOperations) ([]*corev3.HeaderValueOption, []string) {
	if ops == nil {
		return nil, nil
	}
	var add []*corev3.HeaderValueOption
	for _, k := range slices.Sorted(maps.Keys(ops.Set)) {
		add = append(add, &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: k, Value: ops.Set[k]}, AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD})
	}
	for _, k := range slices.Sorted(maps.Keys(ops.Add)) {
		add = append(add, &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: k, Value: ops.Add[k]}, AppendAction: corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD})
	}
	return add, slices.Clone(ops.Remove)
}

func redirectAction(r *networking.HTTPRedirect) *routev3.RedirectAction {
	out := &routev3.RedirectAction{HostRedirect: r.Authority}
	switch {
	case r.Uri != "":
		out.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: r.Uri}
	case r.PrefixRewrite != "":
		out.PathRewriteSpecifier = &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: r.PrefixRewrite}
	}
	if p := r.GetPort(); p > 0 {
		out.PortRedirect = p
	}
	switch r.Scheme {
	case "":
	case "https":
		out.SchemeRewriteSpecifier = &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true}
	default:
		out.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: r.Scheme}
	}
	switch r.RedirectCode {
	case 302:
		out.ResponseCode = routev3.RedirectAction_FOUND
	case 303:
		out.ResponseCode = routev3.RedirectAction_SEE_OTHER
	case 307:
		out.ResponseCode = routev3.RedirectAction_TEMPORARY_REDIRECT
	case 308:
		out.ResponseCode = routev3.RedirectAction_PERMANENT_REDIRECT
	default:
		out.ResponseCode = routev3.RedirectAction_MOVED_PERMANENTLY
	}
	return out
}

func directResponse(d *networking.HTTPDirectResponse) *routev3.DirectResponseAction {
	out := &routev3.DirectResponseAction{Status: d.Status}
	switch {
	case d.Body.GetString_() != "":
		out.Body = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: d.Body.GetString_()}}
	case len(d.Body.GetBytes()) > 0:
		out.Body = &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: d.Body.GetBytes()}}
	}
	return out
}

// defaultRoute sends everything to the service's cluster for the port:
// what a virtual host gets when no VirtualService applies.
func (b *build) defaultRoute(svc *registry.Service, port uint32) *routev3.Route {
	action := &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: ClusterName(port, "", svc.Hostname)}}
	if dr := b.m.destinationRule(svc, b.p); dr != nil {
		action.HashPolicy = hashPolicies(policyFor(dr, nil, port).loadBalancer, b.p.Kind, &b.w, dr.cfg.Key())
	}
	b.applyTimeout(action, nil)
	action.RetryPolicy = b.retryPolicy(nil, "", "")
	return &routev3.Route{
		Name:   "default",
		Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &routev3.Route_Route{Route: action},
	}
}
