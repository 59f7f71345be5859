package validation

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"
)

const validVirtualService = `
hosts:
- reviews.prod.svc.cluster.local
- "*.example.com"
gateways:
- mesh
- istio-system/ingress
http:
- name: v2
  match:
  - uri: {prefix: /api}
    headers:
      x-user: {exact: jason}
    queryParams:
      debug: {regex: "^(1|true)$"}
    gateways: [mesh]
  route:
  - destination: {host: reviews.prod.svc.cluster.local, subset: v2, port: {number: 9080}}
    weight: 80
    headers:
      request:
        set: {x-route: v2}
  - destination: {host: reviews.prod.svc.cluster.local, subset: v1}
    weight: 20
  timeout: 10s
  retries: {attempts: 3, perTryTimeout: 2s, retryOn: "5xx,reset,503"}
  fault:
    delay: {percentage: {value: 10}, fixedDelay: 5s}
    abort: {percentage: {value: 1}, httpStatus: 503}
  mirror: {host: mirror.prod.svc.cluster.local}
  mirrorPercentage: {value: 5}
  corsPolicy:
    allowOrigins: [{exact: "https://example.com"}]
    allowMethods: [GET, POST]
    allowHeaders: [x-custom]
    maxAge: 86400s
  rewrite: {uri: /v2/api}
- name: redirect
  match: [{uri: {exact: /old}}]
  redirect: {uri: /new, redirectCode: 301}
- name: teapot
  match: [{uri: {exact: /teapot}}]
  directResponse: {status: 418, body: {string: "I'm a teapot"}}
- name: default
  route:
  - destination: {host: reviews.prod.svc.cluster.local, subset: v1}
tls:
- match: [{sniHosts: [login.example.com], port: 443}]
  route: [{destination: {host: login.prod.svc.cluster.local}}]
tcp:
- match: [{port: 27017}]
  route: [{destination: {host: mongo.backend.svc.cluster.local, port: {number: 5555}}}]
exportTo: [".", other-ns]
`

func validVS(t testing.TB) *networking.VirtualService {
	return fromYAML[networking.VirtualService](t, validVirtualService)
}

// asDelegate turns vs into a delegate VirtualService: no hosts, gateways,
// tls or tcp routes.
func asDelegate(vs *networking.VirtualService) {
	vs.Hosts, vs.Gateways, vs.Tls, vs.Tcp = nil, nil, nil, nil
}

func TestVirtualService(t *testing.T) {
	type vs = networking.VirtualService
	runSpecCases(t, VirtualService, validVS, []specCase[vs]{
		{"no routes", func(s *vs) { s.Http, s.Tls, s.Tcp = nil, nil, nil }, "spec", "at least one http, tcp or tls route", false},
		{"invalid host", func(s *vs) { s.Hosts[0] = "bad_host.example.com" }, "spec.hosts[0]", "is invalid", false},
		{"wildcard host bound to mesh", func(s *vs) { s.Hosts[1] = "*" }, "spec.hosts[1]", `"*" is only allowed`, false},
		{"overlapping hosts", func(s *vs) { s.Hosts = append(s.Hosts, "api.example.com") }, "spec.hosts[2]", "overlaps hosts[1]", false},
		{"empty gateway namespace", func(s *vs) { s.Gateways[1] = "/ingress" }, "spec.gateways[1]", "both parts", false},
		{"invalid gateway name", func(s *vs) { s.Gateways[1] = "istio-system/In_gress" }, "spec.gateways[1]", "not a valid DNS-1123 label", false},
		{"legacy gateway name", func(s *vs) { s.Gateways[1] = "ingress.istio-system.svc.cluster.local" }, "spec.gateways[1]", "legacy FQDN form", true},
		{"delegate with gateways", func(s *vs) { asDelegate(s); s.Gateways = []string{"mesh"} }, "spec.gateways", "delegate", false},
		{"delegate with tcp", func(s *vs) { tcp := s.Tcp; asDelegate(s); s.Tcp = tcp }, "spec.tcp", "delegates may only have http routes", false},
		{"delegate in delegate", func(s *vs) {
			asDelegate(s)
			s.Http[3].Route, s.Http[3].Delegate = nil, &networking.Delegate{Name: "more"}
		}, "spec.http[3].delegate", "cannot delegate again", false},
		{"delegate and route", func(s *vs) { s.Http[3].Delegate = &networking.Delegate{Name: "child"} }, "spec.http[3].route", "route and delegate are mutually exclusive", false},
		{"delegate without name", func(s *vs) {
			s.Http[3].Route, s.Http[3].Delegate = nil, &networking.Delegate{Namespace: "other"}
		}, "spec.http[3].delegate.name", "is required", false},
		{"no action", func(s *vs) { s.Http[3].Route = nil }, "spec.http[3].route", "needs route, redirect, directResponse or delegate", false},
		{"redirect and route", func(s *vs) { s.Http[1].Route = s.Http[3].Route }, "spec.http[1].redirect", "redirect and route are mutually exclusive", false},
		{"redirect and direct response", func(s *vs) { s.Http[1].DirectResponse = &networking.HTTPDirectResponse{Status: 200} }, "spec.http[1].directResponse", "redirect and directResponse are mutually exclusive", false},
		{"direct response and route", func(s *vs) { s.Http[2].Route = s.Http[3].Route }, "spec.http[2].directResponse", "directResponse and route are mutually exclusive", false},
		{"redirect and rewrite", func(s *vs) { s.Http[1].Rewrite = &networking.HTTPRewrite{Uri: "/x"} }, "spec.http[1].rewrite", "cannot be combined with redirect", false},
		{"negative weight", func(s *vs) { s.Http[0].Route[1].Weight = -5 }, "spec.http[0].route[1].weight", "weight -5 is negative", false},
		{"all weights zero", func(s *vs) { s.Http[0].Route[0].Weight, s.Http[0].Route[1].Weight = 0, 0 }, "spec.http[0].route", "every destination has weight 0", false},
		{"weights not summing to 100", func(s *vs) { s.Http[0].Route[1].Weight = 30 }, "spec.http[0].route", "weights sum to 110", true},
		{"tcp weights all zero", func(s *vs) {
			s.Tcp[0].Route = append(s.Tcp[0].Route, proto.CloneOf(s.Tcp[0].Route[0]))
		}, "spec.tcp[0].route", "every destination has weight 0", false},
		{"missing destination", func(s *vs) { s.Http[0].Route[0].Destination = nil }, "spec.http[0].route[0].destination", "destination is required", false},
		{"missing destination host", func(s *vs) { s.Http[0].Route[0].Destination.Host = "" }, "spec.http[0].route[0].destination.host", "host is required", false},
		{"wildcard destination host", func(s *vs) { s.Http[0].Route[0].Destination.Host = "*.example.com" }, "spec.http[0].route[0].destination.host", "must not be a wildcard", false},
		{"invalid subset", func(s *vs) { s.Http[0].Route[0].Destination.Subset = "V_2" }, "spec.http[0].route[0].destination.subset", "not a valid DNS-1123 label", false},
		{"destination port out of range", func(s *vs) { s.Http[0].Route[0].Destination.Port.Number = 70000 }, "spec.http[0].route[0].destination.port.number", "1..65535", false},
		{"uri regex does not compile", func(s *vs) {
			s.Http[0].Match[0].Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: "(unclosed"}}
		}, "spec.http[0].match[0].uri.regex", "does not compile", false},
		{"empty uri match", func(s *vs) { s.Http[0].Match[0].Uri = &networking.StringMatch{} }, "spec.http[0].match[0].uri", "matches every path", true},
		{"empty header prefix", func(s *vs) {
			s.Http[0].Match[0].Headers["x-user"] = &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{}}
		}, "spec.http[0].match[0].headers[x-user].prefix", "must not be empty", false},
		{"empty authority match", func(s *vs) { s.Http[0].Match[0].Authority = &networking.StringMatch{} }, "spec.http[0].match[0].authority", "exactly one of exact, prefix or regex", false},
		{"null header match", func(s *vs) { s.Http[0].Match[0].Headers["x-user"] = nil }, "spec.http[0].match[0].headers[x-user]", "must not be null", false},
		{"invalid header name", func(s *vs) {
			s.Http[0].Match[0].Headers["bad header"] = &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: "x"}}
		}, "spec.http[0].match[0].headers[bad header]", "header name", false},
		{"JWT claim routing on mesh", func(s *vs) {
			s.Http[0].Match[0].Headers["@request.auth.claims.group"] = &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: "a"}}
		}, "spec.http[0].match[0].headers[@request.auth.claims.group]", "only supported for VirtualServices bound only to gateways", false},
		{"match port out of range", func(s *vs) { s.Http[0].Match[0].Port = 0x10000 }, "spec.http[0].match[0].port", "1..65535", false},
		{"invalid source label", func(s *vs) { s.Http[0].Match[0].SourceLabels = map[string]string{"app": "bad value!"} }, "spec.http[0].match[0].sourceLabels[app]", "label value", false},
		{"invalid source namespace", func(s *vs) { s.Http[0].Match[0].SourceNamespace = "Not_A_Namespace" }, "spec.http[0].match[0].sourceNamespace", "not a valid namespace name", false},
		{"match gateway not bound", func(s *vs) { s.Http[0].Match[0].Gateways = []string{"istio-system/other"} }, "spec.http[0].match[0].gateways[0]", "not among the gateways", true},
		{"negative timeout", func(s *vs) { s.Http[0].Timeout = durationpb.New(-1e9) }, "spec.http[0].timeout", "negative", false},
		{"sub-millisecond timeout", func(s *vs) { s.Http[0].Timeout = &durationpb.Duration{Nanos: 1500000} }, "spec.http[0].timeout", "whole number of milliseconds", false},
		{"negative retry attempts", func(s *vs) { s.Http[0].Retries.Attempts = -1 }, "spec.http[0].retries.attempts", "attempts -1 is negative", false},
		{"retry settings with zero attempts", func(s *vs) { s.Http[0].Retries.Attempts = 0 }, "spec.http[0].retries.attempts", "attempts is 0", false},
		{"unknown retry condition", func(s *vs) { s.Http[0].Retries.RetryOn = "5xx,bogus" }, "spec.http[0].retries.retryOn", `"bogus" is not a retry condition`, false},
		{"zero per-try timeout", func(s *vs) { s.Http[0].Retries.PerTryTimeout = durationpb.New(0) }, "spec.http[0].retries.perTryTimeout", "too short", false},
		{"empty fault", func(s *vs) { s.Http[0].Fault = &networking.HTTPFaultInjection{} }, "spec.http[0].fault", "must set delay, abort or both", false},
		{"fault percentage over 100", func(s *vs) { s.Http[0].Fault.Delay.Percentage.Value = 150 }, "spec.http[0].fault.delay.percentage", "out of range", false},
		{"delay without fixedDelay", func(s *vs) { s.Http[0].Fault.Delay.HttpDelayType = nil }, "spec.http[0].fault.delay.fixedDelay", "needs fixedDelay", false},
		{"exponential delay", func(s *vs) {
			s.Http[0].Fault.Delay.HttpDelayType = &networking.HTTPFaultInjection_Delay_ExponentialDelay{ExponentialDelay: durationpb.New(1e9)}
		}, "spec.http[0].fault.delay.exponentialDelay", "not supported", false},
		{"deprecated delay percent", func(s *vs) { s.Http[0].Fault.Delay.Percent = 10 }, "spec.http[0].fault.delay.percent", "deprecated", true},
		{"abort status out of range", func(s *vs) {
			s.Http[0].Fault.Abort.ErrorType = &networking.HTTPFaultInjection_Abort_HttpStatus{HttpStatus: 700}
		}, "spec.http[0].fault.abort.httpStatus", "200..599", false},
		{"unknown gRPC status", func(s *vs) {
			s.Http[0].Fault.Abort.ErrorType = &networking.HTTPFaultInjection_Abort_GrpcStatus{GrpcStatus: "NOPE"}
		}, "spec.http[0].fault.abort.grpcStatus", "not a gRPC status code", false},
		{"mirror percentage over 100", func(s *vs) { s.Http[0].MirrorPercentage.Value = 150 }, "spec.http[0].mirrorPercentage", "out of range", false},
		{"deprecated mirrorPercent", func(s *vs) { s.Http[0].MirrorPercent = wrapperspb.UInt32(5) }, "spec.http[0].mirrorPercent", "deprecated", true},
		{"mirror and mirrors", func(s *vs) {
			s.Http[0].Mirrors = []*networking.HTTPMirrorPolicy{{Destination: &networking.Destination{Host: "m.example.com"}}}
		}, "spec.http[0].mirrors", "mirror and mirrors are mutually exclusive", false},
		{"mirrors without destination", func(s *vs) {
			s.Http[0].Mirror, s.Http[0].Mirrors = nil, []*networking.HTTPMirrorPolicy{{}}
		}, "spec.http[0].mirrors[0].destination", "needs a destination", false},
		{"rewrite uri and regex", func(s *vs) {
			s.Http[0].Rewrite.UriRegexRewrite = &networking.RegexRewrite{Match: "^/a", Rewrite: "/b"}
		}, "spec.http[0].rewrite.uriRegexRewrite", "uri and uriRegexRewrite are mutually exclusive", false},
		{"rewrite regex does not compile", func(s *vs) {
			s.Http[0].Rewrite = &networking.HTTPRewrite{UriRegexRewrite: &networking.RegexRewrite{Match: "(", Rewrite: "/b"}}
		}, "spec.http[0].rewrite.uriRegexRewrite.match", "does not compile", false},
		{"empty rewrite", func(s *vs) { s.Http[0].Rewrite = &networking.HTTPRewrite{} }, "spec.http[0].rewrite", "must set uri, uriRegexRewrite or authority", false},
		{"authority rewritten twice", func(s *vs) {
			s.Http[0].Rewrite.Authority = "a.example.com"
			s.Http[0].Headers = &networking.Headers{Request: &networking.Headers_HeaderOperations{Set: map[string]string{":authority": "b.example.com"}}}
		}, "spec.http[0].headers.request.set[:authority]", "already rewritten by spec.http[0].rewrite.authority", false},
		{"set host response header", func(s *vs) {
			s.Http[0].Route[0].Headers.Response = &networking.Headers_HeaderOperations{Set: map[string]string{"host": "x"}}
		}, "spec.http[0].route[0].headers.response.set[host]", "cannot be changed here", false},
		{"remove pseudo-header", func(s *vs) {
			s.Http[0].Route[0].Headers.Request.Remove = []string{":path"}
		}, "spec.http[0].route[0].headers.request.remove[0]", "pseudo-header", false},
		{"unterminated header variable", func(s *vs) { s.Http[0].Route[0].Headers.Request.Set["x-route"] = "100%" }, "spec.http[0].route[0].headers.request.set[x-route]", "unterminated", false},
		{"empty CORS origin prefix", func(s *vs) {
			s.Http[0].CorsPolicy.AllowOrigins[0] = &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{}}
		}, "spec.http[0].corsPolicy.allowOrigins[0].prefix", "must not be empty", false},
		{"CORS origin regex does not compile", func(s *vs) {
			s.Http[0].CorsPolicy.AllowOrigins[0] = &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: "[a-"}}
		}, "spec.http[0].corsPolicy.allowOrigins[0].regex", "does not compile", false},
		{"unknown CORS method", func(s *vs) { s.Http[0].CorsPolicy.AllowMethods[0] = "FETCH" }, "spec.http[0].corsPolicy.allowMethods[0]", `"FETCH" is not an HTTP method`, false},
		{"CORS maxAge with fraction", func(s *vs) { s.Http[0].CorsPolicy.MaxAge = durationpb.New(1500e6) }, "spec.http[0].corsPolicy.maxAge", "whole seconds", false},
		{"deprecated allowOrigin", func(s *vs) { s.Http[0].CorsPolicy.AllowOrigin = []string{"*"} }, "spec.http[0].corsPolicy.allowOrigin", "deprecated", true},
		{"redirect code not 3xx", func(s *vs) { s.Http[1].Redirect.RedirectCode = 200 }, "spec.http[1].redirect.redirectCode", "not a 3xx code", false},
		{"redirect code unsupported by Envoy", func(s *vs) { s.Http[1].Redirect.RedirectCode = 305 }, "spec.http[1].redirect.redirectCode", "not supported by Envoy", true},
		{"redirect scheme", func(s *vs) { s.Http[1].Redirect.Scheme = "ftp" }, "spec.http[1].redirect.scheme", `must be "http" or "https"`, false},
		{"empty redirect", func(s *vs) { s.Http[1].Redirect = &networking.HTTPRedirect{} }, "spec.http[1].redirect", "must change at least one", false},
		{"redirect uri and prefixRewrite", func(s *vs) { s.Http[1].Redirect.PrefixRewrite = "/p" }, "spec.http[1].redirect.prefixRewrite", "mutually exclusive", false},
		{"direct response status", func(s *vs) { s.Http[2].DirectResponse.Status = 100 }, "spec.http[2].directResponse.status", "200..599", false},
		{"direct response too large", func(s *vs) {
			s.Http[2].DirectResponse.Body = &networking.HTTPBody{Specifier: &networking.HTTPBody_String_{String_: strings.Repeat("x", 2<<20)}}
		}, "spec.http[2].directResponse.body", "at most 1 MiB", false},
		{"SNI host outside hosts", func(s *vs) { s.Tls[0].Match[0].SniHosts[0] = "login.other.io" }, "spec.tls[0].match[0].sniHosts[0]", "not matched by any host", false},
		{"tls route without match", func(s *vs) { s.Tls[0].Match = nil }, "spec.tls[0].match", "at least one match", false},
		{"tls match without SNI hosts", func(s *vs) { s.Tls[0].Match[0].SniHosts = nil }, "spec.tls[0].match[0].sniHosts", "at least one SNI host", false},
		{"tls route without destination", func(s *vs) { s.Tls[0].Route = nil }, "spec.tls[0].route", "at least one destination", false},
		{"tcp route without destination", func(s *vs) { s.Tcp[0].Route = nil }, "spec.tcp[0].route", "at least one destination", false},
		{"tcp destination without host", func(s *vs) { s.Tcp[0].Route[0].Destination.Host = "" }, "spec.tcp[0].route[0].destination.host", "host is required", false},
		{"invalid destination subnet", func(s *vs) { s.Tcp[0].Match[0].DestinationSubnets = []string{"10.0.0.0/33"} }, "spec.tcp[0].match[0].destinationSubnets[0]", "not a valid CIDR", false},
		{"invalid exportTo", func(s *vs) { s.ExportTo[1] = "Bad_NS" }, "spec.exportTo[1]", `is not ".", "*" or a namespace name`, false},
		{"exportTo wildcard with others", func(s *vs) { s.ExportTo[1] = "*" }, "spec.exportTo[1]", `"*" must be the only exportTo entry`, false},
		{"exportTo duplicate", func(s *vs) { s.ExportTo[1] = "default" }, "spec.exportTo[1]", "duplicates exportTo[0]", false},
		{"exportTo nobody", func(s *vs) { s.ExportTo[1] = "~" }, "spec.exportTo[1]", "only allowed in ServiceEntries", false},
		{"route after a catch-all", func(s *vs) { s.Http[0], s.Http[3] = s.Http[3], s.Http[0] }, "spec.http[1]", "never used: spec.http[0] has no match", true},
		{"duplicate match", func(s *vs) { s.Http[2].Match[0] = proto.CloneOf(s.Http[1].Match[0]) }, "spec.http[2].match[0]", "identical to spec.http[1].match[0]", true},
		{"null http route", func(s *vs) { s.Http[1] = nil }, "spec.http[1]", "must not be null", false},
	})
}

func TestVirtualServiceGatewayOnly(t *testing.T) {
	spec := fromYAML[networking.VirtualService](t, `
hosts: ["*"]
gateways: [istio-system/ingress]
http:
- match:
  - headers:
      "@request.auth.claims.group": {exact: admin}
  route:
  - destination: {host: admin.prod.svc.cluster.local}
tls:
- match: [{sniHosts: [outbound_.80_._.e2e.foobar.mesh]}]
  route: [{destination: {host: e2e.foobar.mesh}}]
`)
	requireClean(t, VirtualService(cfg(spec)))
}

func TestVirtualServiceDelegate(t *testing.T) {
	spec := fromYAML[networking.VirtualService](t, `
http:
- match: [{uri: {prefix: /reviews}}]
  route: [{destination: {host: reviews.prod.svc.cluster.local}}]
`)
	requireClean(t, VirtualService(cfg(spec)))
}
