package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
)

func TestGatewayClass(t *testing.T) {
	type gc = gatewayv1.GatewayClassSpec
	valid := func(t testing.TB) *gc {
		return fromYAML[gc](t, `
controllerName: istio.io/gateway-controller
parametersRef: {group: "", kind: ConfigMap, name: gw-options, namespace: istio-system}
description: The Istio gateway class
`)
	}
	validate := func(c config.Config) Result { c.Namespace = ""; return GatewayClass(c) }
	runSpecCases(t, validate, valid, []specCase[gc]{
		{"no controller", func(s *gc) { s.ControllerName = "" }, "spec.controllerName", "controllerName is required", false},
		{"controller without path", func(s *gc) { s.ControllerName = "istio.io" }, "spec.controllerName", "must be a domain followed by a path", false},
		{"controller with bad domain", func(s *gc) { s.ControllerName = "Istio_IO/gw" }, "spec.controllerName", "must be a domain followed by a path", false},
		{"parameters without kind", func(s *gc) { s.ParametersRef.Kind = "" }, "spec.parametersRef.kind", "kind is required", false},
		{"parameters without name", func(s *gc) { s.ParametersRef.Name = "" }, "spec.parametersRef.name", "name is required", false},
		{"parameters namespace", func(s *gc) { s.ParametersRef.Namespace = ptr(gatewayv1.Namespace("Istio")) }, "spec.parametersRef.namespace", "not a valid namespace name", false},
		{"long description", func(s *gc) { s.Description = ptr(strings.Repeat("d", 65)) }, "spec.description", "at most 64", false},
	})
	c := cfg(valid(t))
	requireWarning(t, GatewayClass(c), "metadata.namespace", "cluster-scoped")
}

const validKubernetesGateway = `
gatewayClassName: istio
listeners:
- name: http
  port: 80
  protocol: HTTP
  allowedRoutes:
    namespaces: {from: All}
- name: https
  hostname: "*.example.com"
  port: 443
  protocol: HTTPS
  tls:
    mode: Terminate
    certificateRefs: [{name: wildcard-cert}, {kind: Secret, group: "", name: other-cert, namespace: certs}]
  allowedRoutes:
    namespaces:
      from: Selector
      selector: {matchLabels: {expose: "true"}}
    kinds: [{kind: HTTPRoute}, {group: gateway.networking.k8s.io, kind: GRPCRoute}]
- name: tls
  hostname: db.example.com
  port: 443
  protocol: TLS
  tls: {mode: Passthrough}
  allowedRoutes:
    kinds: [{kind: TLSRoute}]
- name: tcp
  port: 5432
  protocol: TCP
- name: udp
  port: 5432
  protocol: UDP
addresses:
- {type: IPAddress, value: 192.0.2.1}
- {type: Hostname, value: gw.example.com}
infrastructure:
  labels: {team: edge}
  annotations: {example.com/lb: internal}
`

func TestKubernetesGateway(t *testing.T) {
	type gw = gatewayv1.GatewaySpec
	valid := func(t testing.TB) *gw { return fromYAML[gw](t, validKubernetesGateway) }
	l := func(s *gw, i int) *gatewayv1.Listener { return &s.Listeners[i] }
	runSpecCases(t, KubernetesGateway, valid, []specCase[gw]{
		{"no class", func(s *gw) { s.GatewayClassName = "" }, "spec.gatewayClassName", "gatewayClassName is required", false},
		{"no listeners", func(s *gw) { s.Listeners = nil }, "spec.listeners", "at least one listener", false},
		{"duplicate listener name", func(s *gw) { l(s, 3).Name = "http" }, "spec.listeners[3].name", `listener name "http" is already used by listeners[0]`, false},
		{"invalid listener name", func(s *gw) { l(s, 3).Name = "TCP_1" }, "spec.listeners[3].name", "is invalid", false},
		{"duplicate port, protocol and hostname", func(s *gw) {
			s.Listeners = append(s.Listeners, *l(s, 0).DeepCopy())
			s.Listeners[5].Name = "http-2"
		}, "spec.listeners[5]", "each combination must be unique", false},
		{"port out of range", func(s *gw) { l(s, 0).Port = 0 }, "spec.listeners[0].port", "1..65535", false},
		{"no protocol", func(s *gw) { l(s, 0).Protocol = "" }, "spec.listeners[0].protocol", "protocol is required", false},
		{"invalid protocol", func(s *gw) { l(s, 0).Protocol = "HTTP/2" }, "spec.listeners[0].protocol", "is invalid", false},
		{"non-core protocol", func(s *gw) { l(s, 0).Protocol = "QUIC" }, "spec.listeners[0].protocol", "not a Gateway API protocol", true},
		{"conflicting protocols", func(s *gw) { l(s, 3).Port = 80 }, "spec.listeners[3].protocol", "port 80 is already used with protocol HTTP", true},
		{"wildcard not first", func(s *gw) { l(s, 1).Hostname = ptr(gatewayv1.Hostname("foo.*.example.com")) }, "spec.listeners[1].hostname", "whole first label", false},
		{"uppercase hostname", func(s *gw) { l(s, 1).Hostname = ptr(gatewayv1.Hostname("Foo.example.com")) }, "spec.listeners[1].hostname", "lowercase", false},
		{"IP hostname", func(s *gw) { l(s, 1).Hostname = ptr(gatewayv1.Hostname("10.0.0.1")) }, "spec.listeners[1].hostname", "is an IP address", false},
		{"hostname on TCP", func(s *gw) { l(s, 3).Hostname = ptr(gatewayv1.Hostname("db.example.com")) }, "spec.listeners[3].hostname", "has no hostname to match", false},
		{"TLS on HTTP", func(s *gw) { l(s, 0).TLS = l(s, 1).TLS }, "spec.listeners[0].tls", "protocol HTTP does not use TLS", false},
		{"HTTPS without TLS", func(s *gw) { l(s, 1).TLS = nil }, "spec.listeners[1].tls", "needs tls with certificateRefs", false},
		{"HTTPS passthrough", func(s *gw) { l(s, 1).TLS.Mode = ptr(gatewayv1.TLSModePassthrough) }, "spec.listeners[1].tls.mode", "mode must be Terminate", false},
		{"terminate without certificates", func(s *gw) { l(s, 1).TLS.CertificateRefs = nil }, "spec.listeners[1].tls.certificateRefs", "mode Terminate needs certificateRefs", false},
		{"TLS without mode", func(s *gw) { l(s, 2).TLS.Mode = nil }, "spec.listeners[2].tls.mode", "needs tls.mode", false},
		{"unknown TLS mode", func(s *gw) { l(s, 2).TLS.Mode = ptr(gatewayv1.TLSModeType("Reencrypt")) }, "spec.listeners[2].tls.mode", "must be Terminate or Passthrough", false},
		{"passthrough with certificates", func(s *gw) { l(s, 2).TLS.CertificateRefs = l(s, 1).TLS.CertificateRefs }, "spec.listeners[2].tls.certificateRefs", "ignored", true},
		{"certificate without name", func(s *gw) { l(s, 1).TLS.CertificateRefs[0].Name = "" }, "spec.listeners[1].tls.certificateRefs[0].name", "name is required", false},
		{"route kind for protocol", func(s *gw) { l(s, 2).AllowedRoutes.Kinds[0].Kind = "HTTPRoute" }, "spec.listeners[2].allowedRoutes.kinds[0]", "cannot carry HTTPRoute routes", true},
		{"route kind of another group", func(s *gw) { l(s, 1).AllowedRoutes.Kinds[0].Group = ptr(gatewayv1.Group("example.com")) }, "spec.listeners[1].allowedRoutes.kinds[0]", `group "example.com"`, true},
		{"selector missing", func(s *gw) { l(s, 1).AllowedRoutes.Namespaces.Selector = nil }, "spec.listeners[1].allowedRoutes.namespaces.selector", "needs a selector", false},
		{"invalid selector", func(s *gw) {
			l(s, 1).AllowedRoutes.Namespaces.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		}, "spec.listeners[1].allowedRoutes.namespaces.selector", "selector is invalid", false},
		{"unknown from", func(s *gw) { l(s, 0).AllowedRoutes.Namespaces.From = ptr(gatewayv1.FromNamespaces("Everywhere")) }, "spec.listeners[0].allowedRoutes.namespaces.from", "must be All, Selector, Same or None", false},
		{"invalid IP address", func(s *gw) { s.Addresses[0].Value = "192.0.2.300" }, "spec.addresses[0].value", "not an IP address", false},
		{"duplicate address", func(s *gw) { s.Addresses[1] = s.Addresses[0] }, "spec.addresses[1].value", "already requested by addresses[0]", false},
		{"invalid infrastructure label", func(s *gw) { s.Infrastructure.Labels["team"] = "edge team" }, "spec.infrastructure.labels[team]", "label value", false},
		{"invalid infrastructure annotation", func(s *gw) { s.Infrastructure.Annotations["bad key!"] = "x" }, "spec.infrastructure.annotations[bad key!]", "optional DNS subdomain prefix", false},
	})
}

const validHTTPRoute = `
parentRefs:
- {name: gateway, namespace: istio-ingress, sectionName: http}
- {name: gateway, namespace: istio-ingress, sectionName: https}
- {name: reviews, kind: Service, group: "", port: 9080}
hostnames: [bookinfo.example.com, "*.bookinfo.example.com"]
rules:
- name: api
  matches:
  - path: {type: PathPrefix, value: /api}
    headers: [{name: x-version, value: v2}, {type: RegularExpression, name: x-user, value: "^(alice|bob)$"}]
    queryParams: [{name: debug, value: "1"}]
    method: GET
  - path: {type: RegularExpression, value: "/v[0-9]+/items"}
  filters:
  - type: RequestHeaderModifier
    requestHeaderModifier:
      set: [{name: x-route, value: api}]
      add: [{name: x-trace, value: "on"}]
      remove: [x-internal]
  - type: RequestMirror
    requestMirror:
      backendRef: {name: mirror, port: 8080}
      fraction: {numerator: 5, denominator: 1000}
  - type: CORS
    cors:
      allowOrigins: ["https://*.example.com"]
      allowMethods: [GET, POST]
      allowHeaders: [x-custom]
      maxAge: 60
  backendRefs:
  - {name: reviews-v2, port: 9080, weight: 90}
  - {name: reviews-v1, port: 9080, weight: 10}
  timeouts: {request: 10s, backendRequest: 2s}
  retry: {codes: [503, 504], attempts: 3, backoff: 100ms}
- name: old
  matches: [{path: {type: Exact, value: /old}}]
  filters:
  - type: RequestRedirect
    requestRedirect: {scheme: https, hostname: new.example.com, statusCode: 301, path: {type: ReplaceFullPath, replaceFullPath: /new}}
- matches: [{path: {type: PathPrefix, value: /v1}}]
  filters:
  - type: URLRewrite
    urlRewrite: {hostname: internal.example.com, path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}
  backendRefs:
  - {name: legacy, port: 80}
  sessionPersistence: {sessionName: sticky, type: Cookie, absoluteTimeout: 1h, cookieConfig: {lifetimeType: Permanent}}
`

func TestHTTPRoute(t *testing.T) {
	type hr = gatewayv1.HTTPRouteSpec
	valid := func(t testing.TB) *hr { return fromYAML[hr](t, validHTTPRoute) }
	rule := func(s *hr, i int) *gatewayv1.HTTPRouteRule { return &s.Rules[i] }
	match := func(s *hr) *gatewayv1.HTTPRouteMatch { return &s.Rules[0].Matches[0] }
	runSpecCases(t, HTTPRoute, valid, []specCase[hr]{
		{"parent without name", func(s *hr) { s.ParentRefs[2].Name = "" }, "spec.parentRefs[2].name", "name is required", false},
		{"same parent without section", func(s *hr) { s.ParentRefs[1].SectionName = nil }, "spec.parentRefs[1]", "each must then set sectionName or port", false},
		{"duplicate parent", func(s *hr) { s.ParentRefs[1].SectionName = ptr(gatewayv1.SectionName("http")) }, "spec.parentRefs[1]", "duplicates parentRefs[0]", false},
		{"parent port out of range", func(s *hr) { s.ParentRefs[2].Port = ptr(gatewayv1.PortNumber(0)) }, "spec.parentRefs[2].port", "1..65535", false},
		{"parent kind", func(s *hr) { s.ParentRefs[2].Kind = ptr(gatewayv1.Kind("my-kind!")) }, "spec.parentRefs[2].kind", "must start with a letter", false},
		{"parent namespace", func(s *hr) { s.ParentRefs[0].Namespace = ptr(gatewayv1.Namespace("Istio")) }, "spec.parentRefs[0].namespace", "not a valid namespace name", false},
		{"invalid hostname", func(s *hr) { s.Hostnames[0] = "bookinfo.*.com" }, "spec.hostnames[0]", "whole first label", false},
		{"IP hostname", func(s *hr) { s.Hostnames[0] = "192.0.2.1" }, "spec.hostnames[0]", "is an IP address", false},
		{"duplicate rule name", func(s *hr) { rule(s, 1).Name = ptr(gatewayv1.SectionName("api")) }, "spec.rules[1].name", `rule name "api" is already used by rules[0]`, false},
		{"path without slash", func(s *hr) { match(s).Path.Value = ptr("api") }, "spec.rules[0].matches[0].path.value", `must be an absolute path starting with "/"`, false},
		{"path with dot segment", func(s *hr) { match(s).Path.Value = ptr("/api/../admin") }, "spec.rules[0].matches[0].path.value", `must not contain "/../"`, false},
		{"path with encoded slash", func(s *hr) { match(s).Path.Value = ptr("/api%2Fadmin") }, "spec.rules[0].matches[0].path.value", `must not contain "%2F"`, false},
		{"path with bad character", func(s *hr) { match(s).Path.Value = ptr("/api items") }, "spec.rules[0].matches[0].path.value", "percent-encode", false},
		{"path regex does not compile", func(s *hr) { rule(s, 0).Matches[1].Path.Value = ptr("/v[0-9") }, "spec.rules[0].matches[1].path.value", "does not compile", false},
		{"unknown path type", func(s *hr) { match(s).Path.Type = ptr(gatewayv1.PathMatchType("Glob")) }, "spec.rules[0].matches[0].path.type", "must be Exact, PathPrefix or RegularExpression", false},
		{"header name", func(s *hr) { match(s).Headers[0].Name = "x version" }, "spec.rules[0].matches[0].headers[0].name", "header name", false},
		{"header regex", func(s *hr) { match(s).Headers[1].Value = "(alice" }, "spec.rules[0].matches[0].headers[1].value", "does not compile", false},
		{"duplicate header match", func(s *hr) { match(s).Headers[1].Name = "X-Version" }, "spec.rules[0].matches[0].headers[1].name", "only the first match of a header is used", true},
		{"query param name", func(s *hr) { match(s).QueryParams[0].Name = "de bug" }, "spec.rules[0].matches[0].queryParams[0].name", "header name", false},
		{"method", func(s *hr) { match(s).Method = ptr(gatewayv1.HTTPMethod("FETCH")) }, "spec.rules[0].matches[0].method", `method "FETCH" must be one of`, false},
		{"repeated header modifier", func(s *hr) { rule(s, 0).Filters = append(rule(s, 0).Filters, rule(s, 0).Filters[0]) }, "spec.rules[0].filters[3].type", "each RequestHeaderModifier filter may appear only once", false},
		{"redirect and rewrite", func(s *hr) { rule(s, 1).Filters = append(rule(s, 1).Filters, rule(s, 2).Filters[0]) }, "spec.rules[1].filters[1].type", "RequestRedirect and URLRewrite filters are mutually exclusive", false},
		{"redirect with backends", func(s *hr) { rule(s, 1).BackendRefs = rule(s, 2).BackendRefs }, "spec.rules[1].backendRefs", "must not have backendRefs", false},
		{"filter field of another type", func(s *hr) { rule(s, 0).Filters[0].Type = gatewayv1.HTTPRouteFilterResponseHeaderModifier }, "spec.rules[0].filters[0].requestHeaderModifier", "only allowed in a RequestHeaderModifier filter", false},
		{"filter without its field", func(s *hr) { rule(s, 0).Filters[0].RequestHeaderModifier = nil }, "spec.rules[0].filters[0].requestHeaderModifier", "needs requestHeaderModifier", false},
		{"unknown filter type", func(s *hr) {
			rule(s, 0).Filters[0] = gatewayv1.HTTPRouteFilter{Type: "Compress"}
		}, "spec.rules[0].filters[0].type", `unknown filter type "Compress"`, false},
		{"set header twice", func(s *hr) {
			m := rule(s, 0).Filters[0].RequestHeaderModifier
			m.Set = append(m.Set, gatewayv1.HTTPHeader{Name: "X-Route", Value: "b"})
		}, "spec.rules[0].filters[0].requestHeaderModifier.set[1].name", "already in set[0]", false},
		{"mirror fraction", func(s *hr) { rule(s, 0).Filters[1].RequestMirror.Fraction.Numerator = 2000 }, "spec.rules[0].filters[1].requestMirror.fraction.numerator", "larger than denominator", false},
		{"mirror percent and fraction", func(s *hr) { rule(s, 0).Filters[1].RequestMirror.Percent = ptr(int32(5)) }, "spec.rules[0].filters[1].requestMirror.fraction", "mutually exclusive", false},
		{"mirror to a Service without port", func(s *hr) { rule(s, 0).Filters[1].RequestMirror.BackendRef.Port = nil }, "spec.rules[0].filters[1].requestMirror.backendRef.port", "needs a port", false},
		{"CORS wildcard with others", func(s *hr) {
			c := rule(s, 0).Filters[2].CORS
			c.AllowOrigins = append(c.AllowOrigins, "*")
		}, "spec.rules[0].filters[2].cors.allowOrigins", `"*" must be the only entry`, false},
		{"CORS origin form", func(s *hr) { rule(s, 0).Filters[2].CORS.AllowOrigins[0] = "example.com" }, "spec.rules[0].filters[2].cors.allowOrigins[0]", "scheme://host", false},
		{"redirect status", func(s *hr) { rule(s, 1).Filters[0].RequestRedirect.StatusCode = ptr(304) }, "spec.rules[1].filters[0].requestRedirect.statusCode", "must be 301, 302, 303, 307 or 308", false},
		{"redirect scheme", func(s *hr) { rule(s, 1).Filters[0].RequestRedirect.Scheme = ptr("ftp") }, "spec.rules[1].filters[0].requestRedirect.scheme", `must be "http" or "https"`, false},
		{"redirect wildcard hostname", func(s *hr) {
			rule(s, 1).Filters[0].RequestRedirect.Hostname = ptr(gatewayv1.PreciseHostname("*.example.com"))
		}, "spec.rules[1].filters[0].requestRedirect.hostname", "must not contain a wildcard", false},
		{"full path without value", func(s *hr) { rule(s, 1).Filters[0].RequestRedirect.Path.ReplaceFullPath = nil }, "spec.rules[1].filters[0].requestRedirect.path.replaceFullPath", "needs replaceFullPath", false},
		{"prefix rewrite on exact match", func(s *hr) {
			rule(s, 2).Matches[0].Path.Type = ptr(gatewayv1.PathMatchExact)
		}, "spec.rules[2].filters[0].urlRewrite.path.type", "exactly one match, of type PathPrefix", false},
		{"backend without port", func(s *hr) { rule(s, 0).BackendRefs[0].Port = nil }, "spec.rules[0].backendRefs[0].port", "a reference to a Service needs a port", false},
		{"negative weight", func(s *hr) { rule(s, 0).BackendRefs[0].Weight = ptr(int32(-1)) }, "spec.rules[0].backendRefs[0].weight", "0..1000000", false},
		{"all weights zero", func(s *hr) {
			rule(s, 0).BackendRefs[0].Weight, rule(s, 0).BackendRefs[1].Weight = ptr(int32(0)), ptr(int32(0))
		}, "spec.rules[0].backendRefs", "every backend has weight 0", true},
		{"backend request longer than request", func(s *hr) { rule(s, 0).Timeouts.BackendRequest = ptr(gatewayv1.Duration("1m")) }, "spec.rules[0].timeouts.backendRequest", "longer than the request timeout", false},
		{"invalid duration", func(s *hr) { rule(s, 0).Timeouts.Request = ptr(gatewayv1.Duration("1.5s")) }, "spec.rules[0].timeouts.request", "duration \"1.5s\" is invalid", false},
		{"retry code", func(s *hr) { rule(s, 0).Retry.Codes[0] = 302 }, "spec.rules[0].retry.codes[0]", "400..599", false},
		{"retry attempts", func(s *hr) { rule(s, 0).Retry.Attempts = ptr(-2) }, "spec.rules[0].retry.attempts", "negative", false},
		{"retry backoff", func(s *hr) { rule(s, 0).Retry.Backoff = ptr(gatewayv1.Duration("100")) }, "spec.rules[0].retry.backoff", "is invalid", false},
		{"permanent cookie without timeout", func(s *hr) { rule(s, 2).SessionPersistence.AbsoluteTimeout = nil }, "spec.rules[2].sessionPersistence.absoluteTimeout", "Permanent cookie needs absoluteTimeout", false},
		{"cookie config with header type", func(s *hr) {
			rule(s, 2).SessionPersistence.Type = ptr(gatewayv1.HeaderBasedSessionPersistence)
		}, "spec.rules[2].sessionPersistence.cookieConfig", "needs type Cookie", false},
		{"too many matches", func(s *hr) {
			s.Rules = make([]gatewayv1.HTTPRouteRule, 16)
			for i := range s.Rules {
				s.Rules[i].Matches = make([]gatewayv1.HTTPRouteMatch, 9)
			}
		}, "spec.rules", "at most 128 are allowed", false},
	})
}

func TestHTTPRouteDefaultMatchAllowsPrefixRewrite(t *testing.T) {
	spec := fromYAML[gatewayv1.HTTPRouteSpec](t, `
parentRefs: [{name: gateway}]
rules:
- filters:
  - type: URLRewrite
    urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /app}}
  backendRefs: [{name: app, port: 80}]
`)
	requireClean(t, HTTPRoute(cfg(spec)))
}

const validGRPCRoute = `
parentRefs: [{name: gateway}]
hostnames: [grpc.example.com]
rules:
- matches:
  - method: {service: helloworld.Greeter, method: SayHello}
    headers: [{name: x-env, value: canary}]
  - method: {type: RegularExpression, service: "foo\\..*"}
  filters:
  - type: ResponseHeaderModifier
    responseHeaderModifier: {remove: [x-internal]}
  backendRefs:
  - {name: greeter, port: 50051}
`

func TestGRPCRoute(t *testing.T) {
	type gr = gatewayv1.GRPCRouteSpec
	valid := func(t testing.TB) *gr { return fromYAML[gr](t, validGRPCRoute) }
	method := func(s *gr, i int) *gatewayv1.GRPCMethodMatch { return s.Rules[0].Matches[i].Method }
	runSpecCases(t, GRPCRoute, valid, []specCase[gr]{
		{"empty method match", func(s *gr) { method(s, 0).Service, method(s, 0).Method = nil, nil }, "spec.rules[0].matches[0].method", "needs service, method or both", false},
		{"invalid service", func(s *gr) { method(s, 0).Service = ptr("hello/Greeter") }, "spec.rules[0].matches[0].method.service", "not a valid gRPC service name", false},
		{"invalid method", func(s *gr) { method(s, 0).Method = ptr("Say.Hello") }, "spec.rules[0].matches[0].method.method", "not a valid gRPC method name", false},
		{"regex does not compile", func(s *gr) { method(s, 1).Service = ptr("foo(") }, "spec.rules[0].matches[1].method.service", "does not compile", false},
		{"unknown method match type", func(s *gr) { method(s, 1).Type = ptr(gatewayv1.GRPCMethodMatchType("Prefix")) }, "spec.rules[0].matches[1].method.type", "must be Exact or RegularExpression", false},
		{"header match type", func(s *gr) {
			s.Rules[0].Matches[0].Headers[0].Type = ptr(gatewayv1.GRPCHeaderMatchType("Prefix"))
		}, "spec.rules[0].matches[0].headers[0].type", "must be Exact or RegularExpression", false},
		{"repeated header modifier", func(s *gr) { s.Rules[0].Filters = append(s.Rules[0].Filters, s.Rules[0].Filters[0]) }, "spec.rules[0].filters[1].type", "may appear only once", false},
		{"HTTP-only filter", func(s *gr) { s.Rules[0].Filters[0].Type = "RequestRedirect" }, "spec.rules[0].filters[0].type", `unknown filter type "RequestRedirect"`, false},
		{"backend weight", func(s *gr) { s.Rules[0].BackendRefs[0].Weight = ptr(int32(2000000)) }, "spec.rules[0].backendRefs[0].weight", "0..1000000", false},
		{"hostname", func(s *gr) { s.Hostnames[0] = "grpc_example.com" }, "spec.hostnames[0]", "is invalid", false},
	})
}

func TestTCPRoute(t *testing.T) {
	type tr = gatewayv1.TCPRouteSpec
	valid := func(t testing.TB) *tr {
		return fromYAML[tr](t, `
parentRefs: [{name: gateway, sectionName: tcp}]
rules:
- backendRefs: [{name: db, port: 5432, weight: 1}, {name: db-replica, port: 5432, weight: 3}]
`)
	}
	runSpecCases(t, TCPRoute, valid, []specCase[tr]{
		{"no rules", func(s *tr) { s.Rules = nil }, "spec.rules", "needs a rule with backendRefs", false},
		{"no backends", func(s *tr) { s.Rules[0].BackendRefs = nil }, "spec.rules[0].backendRefs", "at least one backendRef", false},
		{"two rules", func(s *tr) { s.Rules = append(s.Rules, s.Rules[0]) }, "spec.rules", "exactly one rule", true},
		{"backend without name", func(s *tr) { s.Rules[0].BackendRefs[1].Name = "" }, "spec.rules[0].backendRefs[1].name", "name is required", false},
		{"backend namespace", func(s *tr) { s.Rules[0].BackendRefs[1].Namespace = ptr(gatewayv1.Namespace("a.b")) }, "spec.rules[0].backendRefs[1].namespace", "not a valid namespace name", false},
		{"parent section", func(s *tr) { s.ParentRefs[0].SectionName = ptr(gatewayv1.SectionName("TCP")) }, "spec.parentRefs[0].sectionName", "is invalid", false},
	})
}

func TestTLSRoute(t *testing.T) {
	type tr = gatewayv1.TLSRouteSpec
	valid := func(t testing.TB) *tr {
		return fromYAML[tr](t, `
parentRefs: [{name: gateway, sectionName: tls}]
hostnames: [db.example.com, "*.db.example.com"]
rules:
- backendRefs: [{name: db, port: 5432}]
`)
	}
	runSpecCases(t, TLSRoute, valid, []specCase[tr]{
		{"no hostnames", func(s *tr) { s.Hostnames = nil }, "spec.hostnames", "matches every SNI name", true},
		{"IP hostname", func(s *tr) { s.Hostnames[0] = "10.0.0.1" }, "spec.hostnames[0]", "is an IP address", false},
		{"partial wildcard", func(s *tr) { s.Hostnames[1] = "*db.example.com" }, "spec.hostnames[1]", "whole first label", false},
		{"no rules", func(s *tr) { s.Rules = nil }, "spec.rules", "needs a rule with backendRefs", false},
		{"no backends", func(s *tr) { s.Rules[0].BackendRefs = nil }, "spec.rules[0].backendRefs", "at least one backendRef", false},
	})
}

func TestReferenceGrant(t *testing.T) {
	type rg = gatewayv1.ReferenceGrantSpec
	valid := func(t testing.TB) *rg {
		return fromYAML[rg](t, `
from:
- {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: apps}
- {group: gateway.networking.k8s.io, kind: Gateway, namespace: istio-ingress}
to:
- {group: "", kind: Service}
- {group: "", kind: Secret, name: wildcard-cert}
`)
	}
	runSpecCases(t, ReferenceGrant, valid, []specCase[rg]{
		{"no from", func(s *rg) { s.From = nil }, "spec.from", `needs at least one "from" entry`, false},
		{"no to", func(s *rg) { s.To = nil }, "spec.to", `needs at least one "to" entry`, false},
		{"from without kind", func(s *rg) { s.From[0].Kind = "" }, "spec.from[0].kind", "kind is required", false},
		{"from without namespace", func(s *rg) { s.From[1].Namespace = "" }, "spec.from[1].namespace", "namespace is required", false},
		{"from group", func(s *rg) { s.From[0].Group = "Gateway.Networking" }, "spec.from[0].group", "not a valid API group", false},
		{"to without kind", func(s *rg) { s.To[0].Kind = "" }, "spec.to[0].kind", "kind is required", false},
		{"to with empty name", func(s *rg) { s.To[1].Name = ptr(gatewayv1.ObjectName("")) }, "spec.to[1].name", "name is required", false},
	})
}

func TestParseGatewayDuration(t *testing.T) {
	for in, want := range map[string]string{"1h": "1h0m0s", "1m30s": "1m30s", "500ms": "500ms", "0s": "0s", "1h2m3s4ms": "1h2m3.004s"} {
		d, err := parseGatewayDuration(in)
		if err != nil || d.String() != want {
			t.Errorf("parseGatewayDuration(%q) = %v, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"", "1", "1.5s", "-1s", "100000s", "1h1h1h1h1h", "1d", "1us"} {
		if _, err := parseGatewayDuration(in); err == nil {
			t.Errorf("parseGatewayDuration(%q) succeeded; want an error", in)
		}
	}
}
