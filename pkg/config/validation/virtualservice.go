package validation

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshcp/meshcp/pkg/config"
)

// meshGateway is the reserved gateway name for the sidecars of the mesh.
const meshGateway = "mesh"

// VirtualService validates an Istio VirtualService with the rules of the
// istiod webhook: hosts, gateway references, and every http, tls and tcp
// route (matches, destinations and weights, redirects, direct responses,
// delegation, rewrites, retries, timeouts, fault injection, mirroring,
// CORS and header manipulation).
func VirtualService(c config.Config) Result {
	return validateSpec(c, "VirtualService", namespacedMeta, checkVirtualService)
}

// vsContext is what checking a route needs to know of its VirtualService.
type vsContext struct {
	hosts []string
	// delegate: the VirtualService has no hosts; it holds http routes a
	// root VirtualService delegates to.
	delegate bool
	// gatewayOnly: bound only to gateways, not to the mesh sidecars.
	gatewayOnly bool
	gateways    []string
}

// checkVirtualService checks the spec of a VirtualService (see VirtualService).
func checkVirtualService(c config.Config, vs *networking.VirtualService, r *Result) {
	ctx := &vsContext{hosts: vs.Hosts, delegate: len(vs.Hosts) == 0, gateways: vs.Gateways}
	ctx.gatewayOnly = len(vs.Gateways) > 0 && !slices.Contains(vs.Gateways, meshGateway)
	if ctx.delegate {
		checkDelegateVirtualService(vs, r)
	}
	for i, gw := range vs.Gateways {
		checkGatewayReference(r, idx("spec.gateways", i), gw)
	}
	checkVirtualServiceHosts(r, vs, ctx)
	if len(vs.Http) == 0 && len(vs.Tcp) == 0 && len(vs.Tls) == 0 {
		r.Errorf("spec", "a VirtualService needs at least one http, tcp or tls route")
	}
	for i, h := range vs.Http {
		checkHTTPRoute(r, idx("spec.http", i), h, ctx)
	}
	for i, t := range vs.Tls {
		checkTLSRoute(r, idx("spec.tls", i), t, ctx)
	}
	for i, t := range vs.Tcp {
		checkTCPRoute(r, idx("spec.tcp", i), t)
	}
	checkExportTo(r, "spec.exportTo", c.Namespace, vs.ExportTo, false)
	warnUnreachableRoutes(r, "spec.http", vs.Http, func(h *networking.HTTPRoute) ([]proto.Message, bool) {
		return matchMessages(h, h.GetMatch(), func(m *networking.HTTPMatchRequest) proto.Message {
			// The name of a match only labels it: two matches differing
			// only by name match the same requests.
			if m != nil && m.Name != "" {
				m = proto.CloneOf(m)
				m.Name = ""
			}
			return m
		})
	})
	warnUnreachableRoutes(r, "spec.tls", vs.Tls, func(t *networking.TLSRoute) ([]proto.Message, bool) {
		return matchMessages(t, t.GetMatch(), func(m *networking.TLSMatchAttributes) proto.Message { return m })
	})
	warnUnreachableRoutes(r, "spec.tcp", vs.Tcp, func(t *networking.TCPRoute) ([]proto.Message, bool) {
		return matchMessages(t, t.GetMatch(), func(m *networking.L4MatchAttributes) proto.Message { return m })
	})
}

// checkDelegateVirtualService checks a VirtualService without hosts, which
// only makes sense as the target of a root VirtualService's delegate.
func checkDelegateVirtualService(vs *networking.VirtualService, r *Result) {
	if len(vs.Gateways) > 0 {
		r.Errorf("spec.gateways", "a VirtualService without hosts is a delegate and must not set gateways (the root VirtualService does)")
	}
	if len(vs.Tls) > 0 {
		r.Errorf("spec.tls", "a VirtualService without hosts is a delegate, and delegates may only have http routes; add hosts")
	}
	if len(vs.Tcp) > 0 {
		r.Errorf("spec.tcp", "a VirtualService without hosts is a delegate, and delegates may only have http routes; add hosts")
	}
}

// checkGatewayReference checks a gateway named by a VirtualService:
// "mesh", "namespace/name", or a name in the VirtualService's namespace.
func checkGatewayReference(r *Result, p, gw string) {
	if gw == meshGateway {
		return
	}
	ns, name, qualified := strings.Cut(gw, "/")
	if !qualified {
		if strings.Contains(gw, ".") {
			parts := strings.Split(gw, ".")
			r.Warnf(p, "gateway %q uses the legacy FQDN form; prefer <namespace>/<name>: %q", gw, parts[1]+"/"+parts[0])
			if msg := fqdnError(gw); msg != "" {
				r.Errorf(p, "%s", msg)
			}
			return
		}
		checkGatewayName(r, p, gw, gw)
		return
	}
	if ns == "" || name == "" {
		r.Errorf(p, "gateway %q must be <namespace>/<name> with both parts set", gw)
		return
	}
	if msgs := k8svalidation.IsDNS1123Label(ns); len(msgs) > 0 {
		r.Errorf(p, "gateway %q: namespace %q is not a valid DNS-1123 label: %s", gw, ns, msgs[0])
	}
	checkGatewayName(r, p, gw, name)
}

// checkGatewayName checks the name part of a gateway reference: Istio
// Gateway names are DNS-1123 labels.
func checkGatewayName(r *Result, p, gw, name string) {
	if msgs := k8svalidation.IsDNS1123Label(name); len(msgs) > 0 {
		r.Errorf(p, "gateway %q: name %q is not a valid DNS-1123 label: %s", gw, name, msgs[0])
	}
}

// checkVirtualServiceHosts checks the hosts: valid names (or IPs), "*"
// only when bound to gateways only, and no host overlapping another.
func checkVirtualServiceHosts(r *Result, vs *networking.VirtualService, ctx *vsContext) {
	autoSNI := ctx.gatewayOnly && len(vs.Tls) > 0
	valid := true
	for i, h := range vs.Hosts {
		p := idx("spec.hosts", i)
		switch {
		case isIP(h):
		case autoSNI && strings.HasPrefix(h, "outbound_"):
			// outbound_.<port>_._.<host>, the SNI of AUTO_PASSTHROUGH.
		case h == "*" && !ctx.gatewayOnly:
			r.Errorf(p, `the wildcard host "*" is only allowed when the VirtualService is bound to gateways and not to "mesh"`)
			valid = false
		default:
			// A short name ("reviews") is completed with the namespace and
			// cluster domain, as Istio users expect and its samples do.
			if msg := hostError(h); msg != "" {
				r.Errorf(p, "%s", msg)
				valid = false
			}
		}
	}
	if !valid {
		return
	}
	for j := range vs.Hosts {
		for i := range j {
			if hostMatches(vs.Hosts[i], vs.Hosts[j]) {
				r.Errorf(idx("spec.hosts", j), "host %q duplicates or overlaps hosts[%d] %q; each host may appear once", vs.Hosts[j], i, vs.Hosts[i])
				break
			}
		}
	}
}

// HTTP routes.

// checkHTTPRoute checks one http route of a VirtualService.
func checkHTTPRoute(r *Result, p string, h *networking.HTTPRoute, ctx *vsContext) {
	if h == nil {
		r.Errorf(p, "http route must not be null")
		return
	}
	checkHTTPRouteAction(r, p, h, ctx)
	for i, m := range h.Match {
		checkHTTPMatch(r, idx(fld(p, "match"), i), m, ctx)
	}
	checkHeaderOperations(r, fld(p, "headers"), h.Headers)
	checkAuthorityRewrites(r, p, h)
	checkCORSPolicy(r, fld(p, "corsPolicy"), h.CorsPolicy)
	checkFault(r, fld(p, "fault"), h.Fault)
	checkMirroring(r, p, h)
	checkRedirect(r, fld(p, "redirect"), h.Redirect)
	checkDirectResponse(r, fld(p, "directResponse"), h.DirectResponse)
	checkRetries(r, fld(p, "retries"), h.Retries)
	checkRewrite(r, fld(p, "rewrite"), h.Rewrite)
	checkHTTPDestinations(r, fld(p, "route"), h.Route)
	checkNonNegativeDuration(r, fld(p, "timeout"), h.Timeout)
}

// checkHTTPRouteAction checks that a route does exactly one thing: forward
// (route), redirect, respond directly, or delegate.
func checkHTTPRouteAction(r *Result, p string, h *networking.HTTPRoute, ctx *vsContext) {
	switch {
	case h.Delegate != nil:
		if ctx.delegate {
			r.Errorf(fld(p, "delegate"), "a delegate VirtualService cannot delegate again; only one level of delegation is supported")
		}
		if len(h.Route) > 0 {
			r.Errorf(fld(p, "route"), "route and delegate are mutually exclusive: the delegate VirtualService does the routing")
		}
		if h.Redirect != nil {
			r.Errorf(fld(p, "redirect"), "redirect and delegate are mutually exclusive")
		}
		if h.DirectResponse != nil {
			r.Errorf(fld(p, "directResponse"), "directResponse and delegate are mutually exclusive")
		}
		checkDelegate(r, fld(p, "delegate"), h.Delegate)
	case h.Redirect != nil:
		if len(h.Route) > 0 {
			r.Errorf(fld(p, "redirect"), "redirect and route are mutually exclusive: a rule either redirects or forwards")
		}
		if h.DirectResponse != nil {
			r.Errorf(fld(p, "directResponse"), "redirect and directResponse are mutually exclusive")
		}
		if h.Fault != nil {
			r.Errorf(fld(p, "fault"), "fault injection cannot be combined with redirect")
		}
		if h.Rewrite != nil {
			r.Errorf(fld(p, "rewrite"), "rewrite cannot be combined with redirect; use the redirect's uri and authority")
		}
	case h.DirectResponse != nil:
		if len(h.Route) > 0 {
			r.Errorf(fld(p, "directResponse"), "directResponse and route are mutually exclusive: a rule either responds or forwards")
		}
		if h.Fault != nil {
			r.Errorf(fld(p, "fault"), "fault injection cannot be combined with directResponse")
		}
		if h.Rewrite != nil {
			r.Errorf(fld(p, "rewrite"), "rewrite cannot be combined with directResponse")
		}
	case len(h.Route) == 0:
		r.Errorf(fld(p, "route"), "an http route needs route, redirect, directResponse or delegate")
	}
}

// checkDelegate checks the reference to a delegate VirtualService.
func checkDelegate(r *Result, p string, d *networking.Delegate) {
	if d.Name == "" {
		r.Errorf(fld(p, "name"), "the name of the delegate VirtualService is required")
	} else {
		for _, msg := range k8svalidation.IsDNS1123Subdomain(d.Name) {
			r.Errorf(fld(p, "name"), "delegate name %q is not a valid name: %s", d.Name, msg)
		}
	}
	if d.Namespace != "" {
		for _, msg := range k8svalidation.IsDNS1123Label(d.Namespace) {
			r.Errorf(fld(p, "namespace"), "delegate namespace %q is not a valid namespace name: %s", d.Namespace, msg)
		}
	}
}

// stringMatchMode says what an empty StringMatch means where it is used.
type stringMatchMode int

const (
	// matchStrict: exactly one of exact, prefix or regex is required,
	// and a prefix must not be empty (scheme, method, authority, CORS
	// origins).
	matchStrict stringMatchMode = iota
	// matchURI: an empty prefix matches every path; an empty match is
	// accepted with a warning.
	matchURI
	// matchPresence: an empty match tests for presence (headers, query
	// parameters).
	matchPresence
)

// checkStringMatch checks an Istio StringMatch.
func checkStringMatch(r *Result, p string, sm *networking.StringMatch, mode stringMatchMode) {
	if sm == nil {
		return
	}
	switch m := sm.MatchType.(type) {
	case nil:
		switch mode {
		case matchStrict:
			r.Errorf(p, "set exactly one of exact, prefix or regex")
		case matchURI:
			r.Warnf(p, "empty uri match matches every path; set exact, prefix or regex")
		}
	case *networking.StringMatch_Prefix:
		if m.Prefix == "" && mode != matchURI {
			r.Errorf(fld(p, "prefix"), "prefix must not be empty")
		}
	case *networking.StringMatch_Regex:
		checkRegex(r, fld(p, "regex"), m.Regex)
	}
}

// pseudoHeaders are the HTTP/2 pseudo-headers a route may match on.
var pseudoHeaders = []string{":method", ":scheme", ":authority", ":path", ":status"}

// jwtClaimHeader prefixes a header match that routes on a JWT claim.
const jwtClaimHeader = "@request.auth.claims"

// checkMatchHeaderName checks the name of a header in a match: a header,
// a pseudo-header, or a JWT claim (gateways only).
func checkMatchHeaderName(r *Result, p, name string, ctx *vsContext) {
	switch {
	case strings.HasPrefix(name, jwtClaimHeader):
		rest := strings.TrimPrefix(name, jwtClaimHeader)
		if !(strings.HasPrefix(rest, ".") && len(rest) > 1) && !(strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") && len(rest) > 2) {
			r.Errorf(p, "JWT claim header %q must be @request.auth.claims.<claim> or @request.auth.claims[<claim>]", name)
		}
		if !ctx.gatewayOnly {
			r.Errorf(p, "routing on JWT claims (%q) is only supported for VirtualServices bound only to gateways", name)
		}
	case slices.Contains(pseudoHeaders, name):
	default:
		checkHeaderName(r, p, name)
	}
}

// checkHTTPMatch checks one match of an http route.
func checkHTTPMatch(r *Result, p string, m *networking.HTTPMatchRequest, ctx *vsContext) {
	if m == nil {
		r.Errorf(p, "match must not be null")
		return
	}
	checkStringMatch(r, fld(p, "uri"), m.Uri, matchURI)
	checkStringMatch(r, fld(p, "scheme"), m.Scheme, matchStrict)
	checkStringMatch(r, fld(p, "method"), m.Method, matchStrict)
	checkStringMatch(r, fld(p, "authority"), m.Authority, matchStrict)
	for _, name := range sortedKeys(m.Headers) {
		hp := key(fld(p, "headers"), name)
		checkMatchHeaderName(r, hp, name, ctx)
		if m.Headers[name] == nil {
			r.Errorf(hp, "header match must not be null; use {} to match on presence")
			continue
		}
		checkStringMatch(r, hp, m.Headers[name], matchPresence)
	}
	for _, name := range sortedKeys(m.WithoutHeaders) {
		hp := key(fld(p, "withoutHeaders"), name)
		checkMatchHeaderName(r, hp, name, ctx)
		// A regex of "*" is no RE2 regex: it means "present".
		if sm := m.WithoutHeaders[name]; sm.GetRegex() != "*" {
			checkStringMatch(r, hp, sm, matchPresence)
		}
	}
	for _, name := range sortedKeys(m.QueryParams) {
		qp := key(fld(p, "queryParams"), name)
		if name == "" {
			r.Errorf(qp, "query parameter name must not be empty")
		}
		checkStringMatch(r, qp, m.QueryParams[name], matchPresence)
	}
	if m.Port != 0 {
		checkPort(r, fld(p, "port"), m.Port)
	}
	checkLabels(r, fld(p, "sourceLabels"), m.SourceLabels)
	checkMatchGateways(r, fld(p, "gateways"), m.Gateways, ctx)
	checkSourceNamespace(r, fld(p, "sourceNamespace"), m.SourceNamespace)
}

// checkMatchGateways checks the gateways a match is restricted to: valid
// references, and among those the VirtualService is bound to.
func checkMatchGateways(r *Result, p string, gateways []string, ctx *vsContext) {
	for i, gw := range gateways {
		checkGatewayReference(r, idx(p, i), gw)
		bound := slices.Contains(ctx.gateways, gw) || (gw == meshGateway && len(ctx.gateways) == 0)
		if !bound && !ctx.delegate {
			r.Warnf(idx(p, i), "gateway %q is not among the gateways of the VirtualService; the match never applies", gw)
		}
	}
}

// checkSourceNamespace checks a sourceNamespace match.
func checkSourceNamespace(r *Result, p, ns string) {
	if ns == "" {
		return
	}
	for _, msg := range k8svalidation.IsDNS1123Label(ns) {
		r.Errorf(p, "sourceNamespace %q is not a valid namespace name: %s", ns, msg)
	}
}

// Header manipulation.

// checkHeaderOperations checks request and response header manipulation.
func checkHeaderOperations(r *Result, p string, h *networking.Headers) {
	if h == nil {
		return
	}
	if req := h.Request; req != nil {
		rp := fld(p, "request")
		for _, name := range sortedKeys(req.Set) {
			checkHeaderOpName(r, key(fld(rp, "set"), name), name, true)
			checkHeaderValue(r, key(fld(rp, "set"), name), req.Set[name])
		}
		for _, name := range sortedKeys(req.Add) {
			checkHeaderOpName(r, key(fld(rp, "add"), name), name, true)
			checkHeaderValue(r, key(fld(rp, "add"), name), req.Add[name])
		}
		for i, name := range req.Remove {
			checkHeaderOpName(r, idx(fld(rp, "remove"), i), name, false)
		}
	}
	if resp := h.Response; resp != nil {
		rp := fld(p, "response")
		for _, name := range sortedKeys(resp.Set) {
			checkHeaderOpName(r, key(fld(rp, "set"), name), name, false)
			checkHeaderValue(r, key(fld(rp, "set"), name), resp.Set[name])
		}
		for _, name := range sortedKeys(resp.Add) {
			checkHeaderOpName(r, key(fld(rp, "add"), name), name, false)
			checkHeaderValue(r, key(fld(rp, "add"), name), resp.Add[name])
		}
		for i, name := range resp.Remove {
			checkHeaderOpName(r, idx(fld(rp, "remove"), i), name, false)
		}
	}
}

// isAuthorityHeader reports the headers that carry the authority.
func isAuthorityHeader(name string) bool {
	return strings.EqualFold(name, ":authority") || strings.EqualFold(name, "host")
}

// checkHeaderOpName checks a header name a route sets, adds or removes.
// Pseudo-headers and Host cannot be changed, except that setting or adding
// the authority of a request (":authority" or "Host") rewrites it.
func checkHeaderOpName(r *Result, p, name string, authorityAllowed bool) {
	switch {
	case name == "":
		r.Errorf(p, "header name must not be empty")
	case isAuthorityHeader(name):
		if !authorityAllowed {
			r.Errorf(p, "header %q cannot be changed here; set it on request headers (or use rewrite.authority) to rewrite the authority", name)
		}
	case strings.HasPrefix(name, ":"):
		r.Errorf(p, "pseudo-header %q cannot be changed", name)
	default:
		checkHeaderName(r, p, name)
	}
}

// checkAuthorityRewrites checks the authority is rewritten in one place
// at most: rewrite.authority, or an :authority/Host request header.
func checkAuthorityRewrites(r *Result, p string, h *networking.HTTPRoute) {
	var places []string
	if h.GetRewrite().GetAuthority() != "" {
		places = append(places, fld(p, "rewrite.authority"))
	}
	req := h.GetHeaders().GetRequest()
	for _, name := range sortedKeys(req.GetSet()) {
		if isAuthorityHeader(name) {
			places = append(places, key(fld(p, "headers.request.set"), name))
		}
	}
	for _, name := range sortedKeys(req.GetAdd()) {
		if isAuthorityHeader(name) {
			places = append(places, key(fld(p, "headers.request.add"), name))
		}
	}
	if len(places) > 1 {
		r.Errorf(places[1], "the authority is already rewritten by %s; rewrite it in one place only", places[0])
	}
}

// CORS.

// corsMethods are the methods a CORS policy may allow.
var corsMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, "*",
}

// checkCORSPolicy checks a CORS policy.
func checkCORSPolicy(r *Result, p string, c *networking.CorsPolicy) {
	if c == nil {
		return
	}
	if len(c.AllowOrigin) > 0 {
		r.Warnf(fld(p, "allowOrigin"), "allowOrigin is deprecated; use allowOrigins")
	}
	for i, o := range c.AllowOrigins {
		op := idx(fld(p, "allowOrigins"), i)
		if o == nil {
			r.Errorf(op, "origin must not be null")
			continue
		}
		checkStringMatch(r, op, o, matchStrict)
	}
	for i, m := range c.AllowMethods {
		if !slices.Contains(corsMethods, m) {
			r.Errorf(idx(fld(p, "allowMethods"), i), "%q is not an HTTP method; use one of %s", m, strings.Join(corsMethods, ", "))
		}
	}
	for i, h := range c.AllowHeaders {
		if h != "*" {
			checkHeaderName(r, idx(fld(p, "allowHeaders"), i), h)
		}
	}
	for i, h := range c.ExposeHeaders {
		if h != "*" {
			checkHeaderName(r, idx(fld(p, "exposeHeaders"), i), h)
		}
	}
	if c.MaxAge != nil {
		checkNonNegativeDuration(r, fld(p, "maxAge"), c.MaxAge)
		if c.MaxAge.Nanos != 0 {
			r.Errorf(fld(p, "maxAge"), "maxAge is sent in whole seconds; %s has a fraction of a second", c.MaxAge.AsDuration())
		}
	}
	checkEnum(r, fld(p, "unmatchedPreflights"), c.UnmatchedPreflights, networking.CorsPolicy_UnmatchedPreflights_name)
}

// Fault injection.

// checkFault checks fault injection: a delay, an abort or both.
func checkFault(r *Result, p string, f *networking.HTTPFaultInjection) {
	if f == nil {
		return
	}
	if f.Delay == nil && f.Abort == nil {
		r.Errorf(p, "fault injection must set delay, abort or both")
	}
	if d := f.Delay; d != nil {
		dp := fld(p, "delay")
		if d.Percent != 0 {
			r.Warnf(fld(dp, "percent"), "percent is deprecated; use percentage")
			if d.Percent < 0 || d.Percent > 100 {
				r.Errorf(fld(dp, "percent"), "percent %d is out of range; it must be 0..100", d.Percent)
			}
		}
		checkPercentage(r, fld(dp, "percentage"), d.Percentage)
		switch t := d.HttpDelayType.(type) {
		case nil:
			r.Errorf(fld(dp, "fixedDelay"), "a delay needs fixedDelay")
		case *networking.HTTPFaultInjection_Delay_FixedDelay:
			if t.FixedDelay == nil {
				r.Errorf(fld(dp, "fixedDelay"), "fixedDelay is required")
			}
			checkPositiveDuration(r, fld(dp, "fixedDelay"), t.FixedDelay)
		case *networking.HTTPFaultInjection_Delay_ExponentialDelay:
			r.Errorf(fld(dp, "exponentialDelay"), "exponentialDelay is not supported; use fixedDelay")
		}
	}
	if a := f.Abort; a != nil {
		ap := fld(p, "abort")
		checkPercentage(r, fld(ap, "percentage"), a.Percentage)
		switch t := a.ErrorType.(type) {
		case nil:
			r.Warnf(ap, "abort sets neither httpStatus nor grpcStatus; it has no effect")
		case *networking.HTTPFaultInjection_Abort_HttpStatus:
			checkHTTPStatus(r, fld(ap, "httpStatus"), int64(t.HttpStatus))
		case *networking.HTTPFaultInjection_Abort_GrpcStatus:
			if !isGRPCStatus(t.GrpcStatus) {
				r.Errorf(fld(ap, "grpcStatus"), "%q is not a gRPC status code; use a name such as UNAVAILABLE or NOT_FOUND", t.GrpcStatus)
			}
		case *networking.HTTPFaultInjection_Abort_Http2Error:
			r.Errorf(fld(ap, "http2Error"), "http2Error aborts are not supported; use httpStatus or grpcStatus")
		}
	}
}

// grpcStatuses are the gRPC status codes, by name; their numbers are
// their positions.
var grpcStatuses = []string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// isGRPCStatus reports a gRPC status code given by name or number.
func isGRPCStatus(s string) bool {
	if n, err := strconv.Atoi(s); err == nil {
		return n >= 0 && n < len(grpcStatuses)
	}
	return slices.Contains(grpcStatuses, s)
}

// checkHTTPStatus checks a status code Envoy can send: 200..599.
func checkHTTPStatus(r *Result, p string, status int64) {
	if status < 200 || status > 599 {
		r.Errorf(p, "HTTP status %d is out of range; it must be 200..599", status)
	}
}

// checkPercentage checks an Istio Percent: 0, or 0.0001..100.
func checkPercentage(r *Result, p string, pc *networking.Percent) {
	if pc == nil {
		return
	}
	v := pc.Value
	if math.IsNaN(v) || v < 0 || v > 100 || (v > 0 && v < 0.0001) {
		r.Errorf(p, "percentage %v is out of range; it must be 0 or between 0.0001 and 100", v)
	}
}

// Mirroring.

// checkMirroring checks mirror, mirrors and the mirror percentages.
func checkMirroring(r *Result, p string, h *networking.HTTPRoute) {
	if h.Mirror != nil && len(h.Mirrors) > 0 {
		r.Errorf(fld(p, "mirrors"), "mirror and mirrors are mutually exclusive; list every mirror under mirrors")
	}
	if h.MirrorPercent != nil {
		r.Warnf(fld(p, "mirrorPercent"), "mirrorPercent is deprecated; use mirrorPercentage")
		if v := h.MirrorPercent.GetValue(); v > 100 {
			r.Errorf(fld(p, "mirrorPercent"), "mirrorPercent %d is out of range; it must be 0..100", v)
		}
	}
	if h.MirrorPercentage != nil {
		if v := h.MirrorPercentage.Value; math.IsNaN(v) || v < 0 || v > 100 {
			r.Errorf(fld(p, "mirrorPercentage"), "mirrorPercentage %v is out of range; it must be 0..100", v)
		}
	}
	if h.Mirror != nil {
		checkDestination(r, fld(p, "mirror"), h.Mirror)
	}
	for i, m := range h.Mirrors {
		mp := idx(fld(p, "mirrors"), i)
		if m == nil {
			r.Errorf(mp, "mirror must not be null")
			continue
		}
		if m.Destination == nil {
			r.Errorf(fld(mp, "destination"), "a mirror needs a destination")
		} else {
			checkDestination(r, fld(mp, "destination"), m.Destination)
		}
		if m.Percentage != nil {
			if v := m.Percentage.Value; math.IsNaN(v) || v < 0 || v > 100 {
				r.Errorf(fld(mp, "percentage"), "percentage %v is out of range; it must be 0..100", v)
			}
		}
	}
}

// Redirects, direct responses, retries, rewrites.

// envoyRedirectCodes are the redirect codes Envoy can send.
var envoyRedirectCodes = []uint32{301, 302, 303, 307, 308}

// checkRedirect checks an http redirect.
func checkRedirect(r *Result, p string, rd *networking.HTTPRedirect) {
	if rd == nil {
		return
	}
	if rd.Uri == "" && rd.Authority == "" && rd.RedirectPort == nil && rd.Scheme == "" && rd.PrefixRewrite == "" {
		r.Errorf(p, "a redirect must change at least one of uri, prefixRewrite, authority, scheme or port")
	}
	if rd.Uri != "" && rd.PrefixRewrite != "" {
		r.Errorf(fld(p, "prefixRewrite"), "uri and prefixRewrite are mutually exclusive")
	}
	if rd.RedirectCode != 0 {
		switch {
		case rd.RedirectCode < 300 || rd.RedirectCode > 399:
			r.Errorf(fld(p, "redirectCode"), "redirect code %d is not a 3xx code", rd.RedirectCode)
		case !slices.Contains(envoyRedirectCodes, rd.RedirectCode):
			r.Warnf(fld(p, "redirectCode"), "redirect code %d is not supported by Envoy; use 301, 302, 303, 307 or 308", rd.RedirectCode)
		}
	}
	if rd.Scheme != "" && rd.Scheme != "http" && rd.Scheme != "https" {
		r.Errorf(fld(p, "scheme"), `redirect scheme %q must be "http" or "https"`, rd.Scheme)
	}
	switch port := rd.RedirectPort.(type) {
	case *networking.HTTPRedirect_Port:
		checkPort(r, fld(p, "port"), port.Port)
	case *networking.HTTPRedirect_DerivePort:
		checkEnum(r, fld(p, "derivePort"), port.DerivePort, networking.HTTPRedirect_RedirectPortSelection_name)
	}
}

// Direct response bodies are held in the configuration of every proxy.
const (
	directResponseWarnSize = 100 * 1024
	directResponseMaxSize  = 1024 * 1024
)

// checkDirectResponse checks a direct response.
func checkDirectResponse(r *Result, p string, d *networking.HTTPDirectResponse) {
	if d == nil {
		return
	}
	checkHTTPStatus(r, fld(p, "status"), int64(d.Status))
	size := 0
	switch b := d.GetBody().GetSpecifier().(type) {
	case *networking.HTTPBody_String_:
		size = len(b.String_)
	case *networking.HTTPBody_Bytes:
		size = len(b.Bytes)
	}
	switch {
	case size > directResponseMaxSize:
		r.Errorf(fld(p, "body"), "body is %d bytes; direct responses may be at most 1 MiB", size)
	case size > directResponseWarnSize:
		r.Warnf(fld(p, "body"), "body is %d bytes; large direct responses are sent to every proxy and slow configuration down", size)
	}
}

// retryOnPolicies are the x-envoy-retry-on and x-envoy-retry-grpc-on
// conditions.
var retryOnPolicies = []string{
	"5xx", "gateway-error", "reset", "reset-before-request", "connect-failure", "retriable-4xx",
	"refused-stream", "retriable-status-codes", "retriable-headers", "envoy-ratelimited",
	"http3-post-connect-failure",
	"cancelled", "deadline-exceeded", "internal", "resource-exhausted", "unavailable",
}

// checkRetries checks a retry policy.
func checkRetries(r *Result, p string, rt *networking.HTTPRetry) {
	if rt == nil {
		return
	}
	if rt.Attempts < 0 {
		r.Errorf(fld(p, "attempts"), "attempts %d is negative; use 0 to disable retries", rt.Attempts)
	}
	if rt.Attempts == 0 && (rt.PerTryTimeout != nil || rt.RetryOn != "" || rt.RetryRemoteLocalities != nil) {
		r.Errorf(fld(p, "attempts"), "attempts is 0 (retries disabled) but other retry settings are set; set attempts or remove them")
	}
	checkPositiveDuration(r, fld(p, "perTryTimeout"), rt.PerTryTimeout)
	checkPositiveDuration(r, fld(p, "backoff"), rt.Backoff)
	if rt.RetryOn != "" {
		for policy := range strings.SplitSeq(rt.RetryOn, ",") {
			policy = strings.TrimSpace(policy)
			if n, err := strconv.Atoi(policy); err == nil && http.StatusText(n) != "" {
				continue
			}
			if !slices.Contains(retryOnPolicies, policy) {
				r.Errorf(fld(p, "retryOn"), "%q is not a retry condition; use an HTTP status code or one of %s", policy, strings.Join(retryOnPolicies, ", "))
			}
		}
	}
}

// checkRewrite checks a rewrite: uri or uriRegexRewrite, and/or authority.
func checkRewrite(r *Result, p string, rw *networking.HTTPRewrite) {
	if rw == nil {
		return
	}
	if rw.Uri != "" && rw.UriRegexRewrite != nil {
		r.Errorf(fld(p, "uriRegexRewrite"), "uri and uriRegexRewrite are mutually exclusive")
	}
	if rw.Uri == "" && rw.UriRegexRewrite == nil && rw.Authority == "" {
		r.Errorf(p, "a rewrite must set uri, uriRegexRewrite or authority")
	}
	if re := rw.UriRegexRewrite; re != nil {
		rp := fld(p, "uriRegexRewrite")
		checkRegex(r, fld(rp, "match"), re.Match)
		if re.Rewrite == "" {
			r.Errorf(fld(rp, "rewrite"), "uriRegexRewrite needs both match and rewrite")
		}
	}
}

// Destinations.

// checkDestination checks a destination: a host (not "*"), an optional
// subset and port.
func checkDestination(r *Result, p string, d *networking.Destination) {
	switch {
	case d.Host == "":
		r.Errorf(fld(p, "host"), "destination host is required")
	case d.Host == "*" || strings.Contains(d.Host, "*"):
		r.Errorf(fld(p, "host"), "destination host %q must not be a wildcard; name one service", d.Host)
	default:
		if msg := hostError(d.Host); msg != "" && !isIP(d.Host) {
			r.Errorf(fld(p, "host"), "%s", msg)
		}
	}
	if d.Subset != "" {
		checkSubsetName(r, fld(p, "subset"), d.Subset)
	}
	if d.Port != nil {
		checkPort(r, fld(p, "port.number"), d.Port.Number)
	}
}

// checkSubsetName checks a subset name, a DNS-1123 label.
func checkSubsetName(r *Result, p, name string) {
	if name == "" {
		r.Errorf(p, "subset name is required")
		return
	}
	for _, msg := range k8svalidation.IsDNS1123Label(name) {
		r.Errorf(p, "subset name %q is not a valid DNS-1123 label: %s", name, msg)
	}
}

// weighted is a destination with a weight, of an http or tcp/tls route.
type weighted interface {
	GetDestination() *networking.Destination
	GetWeight() int32
}

// checkWeights checks the weights of a route's destinations: none
// negative, and, with several destinations, not all zero. Weights are
// relative (each destination gets weight/sum of the traffic), so a sum
// other than 100 only earns a warning.
func checkWeights[W weighted](r *Result, p string, dests []W) {
	var total int64
	for i, d := range dests {
		if w := d.GetWeight(); w < 0 {
			r.Errorf(idx(p, i)+".weight", "weight %d is negative; weights must be 0 or more", w)
		} else {
			total += int64(w)
		}
	}
	if len(dests) < 2 {
		return
	}
	switch {
	case total == 0:
		r.Errorf(p, "every destination has weight 0, so no traffic can be sent; give at least one a positive weight")
	case total > math.MaxUint32:
		r.Errorf(p, "weights sum to %d; the sum may be at most %d", total, uint32(math.MaxUint32))
	case total != 100:
		r.Warnf(p, "weights sum to %d; weights are relative, so each destination gets weight/%d of the traffic (they usually sum to 100)", total, total)
	}
}

// checkHTTPDestinations checks the weighted destinations of an http route.
func checkHTTPDestinations(r *Result, p string, dests []*networking.HTTPRouteDestination) {
	for i, d := range dests {
		dp := idx(p, i)
		if d == nil {
			r.Errorf(dp, "destination must not be null")
			continue
		}
		if d.Destination == nil {
			r.Errorf(fld(dp, "destination"), "destination is required")
		} else {
			checkDestination(r, fld(dp, "destination"), d.Destination)
		}
		checkHeaderOperations(r, fld(dp, "headers"), d.Headers)
	}
	checkWeights(r, p, nonNil(dests))
}

// checkRouteDestinations checks the weighted destinations of a tcp or tls
// route.
func checkRouteDestinations(r *Result, p string, dests []*networking.RouteDestination) {
	for i, d := range dests {
		dp := idx(p, i)
		if d == nil {
			r.Errorf(dp, "destination must not be null")
			continue
		}
		if d.Destination == nil {
			r.Errorf(fld(dp, "destination"), "destination is required")
		} else {
			checkDestination(r, fld(dp, "destination"), d.Destination)
		}
	}
	checkWeights(r, p, nonNil(dests))
}

// nonNil returns list with nil elements replaced by empty ones, keeping
// positions (and so paths) intact.
func nonNil[T any, P interface{ *T }](list []P) []P {
	out := make([]P, len(list))
	for i, e := range list {
		if e == nil {
			e = new(T)
		}
		out[i] = e
	}
	return out
}

// TLS and TCP routes.

// checkTLSRoute checks a tls route: SNI matches within the hosts, and
// destinations.
func checkTLSRoute(r *Result, p string, t *networking.TLSRoute, ctx *vsContext) {
	if t == nil {
		r.Errorf(p, "tls route must not be null")
		return
	}
	if len(t.Match) == 0 {
		r.Errorf(fld(p, "match"), "a tls route needs at least one match with sniHosts")
	}
	for i, m := range t.Match {
		checkTLSMatch(r, idx(fld(p, "match"), i), m, ctx)
	}
	if len(t.Route) == 0 {
		r.Errorf(fld(p, "route"), "a tls route needs at least one destination")
	}
	checkRouteDestinations(r, fld(p, "route"), t.Route)
}

// checkTLSMatch checks one match of a tls route.
func checkTLSMatch(r *Result, p string, m *networking.TLSMatchAttributes, ctx *vsContext) {
	if m == nil {
		r.Errorf(p, "match must not be null")
		return
	}
	if len(m.SniHosts) == 0 {
		r.Errorf(fld(p, "sniHosts"), "a tls match needs at least one SNI host")
	}
	for i, sni := range m.SniHosts {
		checkSNIHost(r, idx(fld(p, "sniHosts"), i), sni, ctx)
	}
	checkL4Match(r, p, m.DestinationSubnets, m.Port, m.SourceLabels, m.Gateways, m.SourceNamespace)
}

// checkSNIHost checks an SNI host is a valid name within the hosts of the
// VirtualService.
func checkSNIHost(r *Result, p, sni string, ctx *vsContext) {
	if isIP(sni) {
		r.Warnf(p, "SNI host %q is an IP address; SNI carries names and most clients never send an IP", sni)
		return
	}
	if ctx.gatewayOnly && strings.HasPrefix(sni, "outbound_") {
		return
	}
	if msg := hostError(sni); msg != "" {
		r.Errorf(p, "%s", msg)
		return
	}
	for _, h := range ctx.hosts {
		if hostSubsetOf(sni, h) {
			return
		}
	}
	r.Errorf(p, "SNI host %q is not matched by any host of the VirtualService (%s); SNI hosts must be among the hosts", sni, strings.Join(ctx.hosts, ", "))
}

// checkTCPRoute checks a tcp route.
func checkTCPRoute(r *Result, p string, t *networking.TCPRoute) {
	if t == nil {
		r.Errorf(p, "tcp route must not be null")
		return
	}
	for i, m := range t.Match {
		mp := idx(fld(p, "match"), i)
		if m == nil {
			r.Errorf(mp, "match must not be null")
			continue
		}
		checkL4Match(r, mp, m.DestinationSubnets, m.Port, m.SourceLabels, m.Gateways, m.SourceNamespace)
	}
	if len(t.Route) == 0 {
		r.Errorf(fld(p, "route"), "a tcp route needs at least one destination")
	}
	checkRouteDestinations(r, fld(p, "route"), t.Route)
}

// checkL4Match checks the connection attributes tls and tcp matches share.
func checkL4Match(r *Result, p string, subnets []string, port uint32, sourceLabels map[string]string, gateways []string, sourceNamespace string) {
	for i, s := range subnets {
		checkIPOrCIDR(r, idx(fld(p, "destinationSubnets"), i), s)
	}
	if port != 0 {
		checkPort(r, fld(p, "port"), port)
	}
	checkLabels(r, fld(p, "sourceLabels"), sourceLabels)
	for i, gw := range gateways {
		checkGatewayReference(r, idx(fld(p, "gateways"), i), gw)
	}
	checkSourceNamespace(r, fld(p, "sourceNamespace"), sourceNamespace)
}

// Unreachable routes.

// matchMessages returns the matches of a route as messages to compare,
// and false for a null route.
func matchMessages[M any](route proto.Message, matches []M, msg func(M) proto.Message) ([]proto.Message, bool) {
	if isNilMessage(route) {
		return nil, false
	}
	out := make([]proto.Message, len(matches))
	for i, m := range matches {
		out[i] = msg(m)
	}
	return out, true
}

// warnUnreachableRoutes warns of routes that can never be used: those
// after a route without matches (which catches everything), and matches
// identical to an earlier one.
func warnUnreachableRoutes[R any](r *Result, p string, routes []R, matches func(R) ([]proto.Message, bool)) {
	catchAll := -1
	var seen []proto.Message
	var seenAt []string
	for i, route := range routes {
		rp := idx(p, i)
		if catchAll >= 0 {
			r.Warnf(rp, "route is never used: %s has no match and catches all traffic first", idx(p, catchAll))
			continue
		}
		ms, ok := matches(route)
		if !ok {
			continue // a null route, reported already
		}
		if len(ms) == 0 {
			catchAll = i
			continue
		}
		for j, m := range ms {
			if m == nil || isNilMessage(m) {
				continue
			}
			if k := slices.IndexFunc(seen, func(s proto.Message) bool { return proto.Equal(s, m) }); k >= 0 {
				r.Warnf(idx(fld(rp, "match"), j), "match is never used: it is identical to %s", seenAt[k])
				continue
			}
			seen = append(seen, m)
			seenAt = append(seenAt, idx(fld(rp, "match"), j))
		}
	}
}

// isNilMessage reports a typed nil message.
func isNilMessage(m proto.Message) bool {
	return !m.ProtoReflect().IsValid()
}
