package validation

import (
	"testing"

	security "istio.io/api/security/v1beta1"
	typev1beta1 "istio.io/api/type/v1beta1"
)

const validAuthorizationPolicy = `
selector:
  matchLabels: {app: httpbin}
action: ALLOW
rules:
- from:
  - source:
      principals: [cluster.local/ns/default/sa/sleep]
      ipBlocks: [10.0.0.0/8, 192.168.1.7]
  - source:
      namespaces: [test]
      requestPrincipals: ["issuer.example.com/*"]
  to:
  - operation:
      methods: [GET, POST]
      paths: ["/info*", "/api/{*}/items/{**}"]
      ports: ["8080"]
      hosts: [httpbin.example.com]
  when:
  - key: request.auth.claims[iss]
    values: [https://accounts.google.com]
  - key: request.headers[x-version]
    notValues: [v0]
  - key: source.ip
    values: [10.1.0.0/16]
  - key: destination.port
    values: ["8080", "9090"]
  - key: request.auth.claims[groups][admin]
    values: ["true"]
- from:
  - source:
      serviceAccounts: [default/sleep, curl]
`

func TestAuthorizationPolicy(t *testing.T) {
	type ap = security.AuthorizationPolicy
	valid := func(t testing.TB) *ap { return fromYAML[ap](t, validAuthorizationPolicy) }
	src := func(s *ap) *security.Source { return s.Rules[0].From[0].Source }
	op := func(s *ap) *security.Operation { return s.Rules[0].To[0].Operation }
	cond := func(s *ap, i int) *security.Condition { return s.Rules[0].When[i] }
	runSpecCases(t, AuthorizationPolicy, valid, []specCase[ap]{
		{"unknown action", func(s *ap) { s.Action = 8 }, "spec.action", "unknown value 8", false},
		{"CUSTOM without provider", func(s *ap) { s.Action = security.AuthorizationPolicy_CUSTOM }, "spec.provider.name", "action CUSTOM needs provider.name", false},
		{"provider without CUSTOM", func(s *ap) {
			s.ActionDetail = &security.AuthorizationPolicy_Provider{Provider: &security.AuthorizationPolicy_ExtensionProvider{Name: "ext-authz"}}
		}, "spec.provider", "only used with action CUSTOM", false},
		{"CUSTOM with principals", func(s *ap) {
			s.Action = security.AuthorizationPolicy_CUSTOM
			s.ActionDetail = &security.AuthorizationPolicy_Provider{Provider: &security.AuthorizationPolicy_ExtensionProvider{Name: "ext-authz"}}
		}, "spec.rules[0].from[0].source.principals", "not supported with action CUSTOM", false},
		{"DENY without rules", func(s *ap) { s.Action, s.Rules = security.AuthorizationPolicy_DENY, nil }, "spec.rules", "never applies", true},
		{"selector and targetRefs", func(s *ap) {
			s.TargetRefs = []*typev1beta1.PolicyTargetReference{{Kind: "Gateway", Group: "gateway.networking.k8s.io", Name: "gw"}}
		}, "spec.targetRefs", "selector and targetRefs are mutually exclusive", false},
		{"targetRef to a Deployment", func(s *ap) {
			s.Selector = nil
			s.TargetRefs = []*typev1beta1.PolicyTargetReference{{Kind: "Deployment", Group: "apps", Name: "web"}}
		}, "spec.targetRefs[0].kind", `cannot target "Deployment"`, false},
		{"targetRef across namespaces", func(s *ap) {
			s.Selector = nil
			s.TargetRefs = []*typev1beta1.PolicyTargetReference{{Kind: "Service", Name: "web", Namespace: "other"}}
		}, "spec.targetRefs[0].namespace", "own namespace", false},
		{"targetRef without name", func(s *ap) {
			s.Selector = nil
			s.TargetRefs = []*typev1beta1.PolicyTargetReference{{Kind: "Service"}}
		}, "spec.targetRefs[0].name", "target name is required", false},
		{"selector wildcard", func(s *ap) { s.Selector.MatchLabels["app"] = "*" }, "spec.selector.matchLabels[app]", "wildcards are not supported", false},
		{"null rule", func(s *ap) { s.Rules[1] = nil }, "spec.rules[1]", "must not be null", false},
		{"from without source", func(s *ap) { s.Rules[0].From[1].Source = nil }, "spec.rules[0].from[1].source", "from needs a source", false},
		{"empty source", func(s *ap) { s.Rules[0].From[1].Source = &security.Source{} }, "spec.rules[0].from[1].source", "source is empty", false},
		{"empty principal", func(s *ap) { src(s).Principals = append(src(s).Principals, "") }, "spec.rules[0].from[0].source.principals[1]", "must not be empty", false},
		{"invalid IP block", func(s *ap) { src(s).IpBlocks[1] = "192.168.1.300" }, "spec.rules[0].from[0].source.ipBlocks[1]", "not a valid IP address", false},
		{"invalid remote IP block", func(s *ap) { src(s).NotRemoteIpBlocks = []string{"10.0.0.0/40"} }, "spec.rules[0].from[0].source.notRemoteIpBlocks[0]", "not a valid CIDR", false},
		{"serviceAccounts with principals", func(s *ap) { src(s).ServiceAccounts = []string{"default/sleep"} }, "spec.rules[0].from[0].source.serviceAccounts", "cannot be combined with principals or namespaces", false},
		{"wildcard service account", func(s *ap) { s.Rules[1].From[0].Source.ServiceAccounts[0] = "default/*" }, "spec.rules[1].from[0].source.serviceAccounts[0]", "must not contain a wildcard", false},
		{"to without operation", func(s *ap) { s.Rules[0].To[0].Operation = nil }, "spec.rules[0].to[0].operation", "to needs an operation", false},
		{"empty operation", func(s *ap) { s.Rules[0].To[0].Operation = &security.Operation{} }, "spec.rules[0].to[0].operation", "operation is empty", false},
		{"port not a number", func(s *ap) { op(s).Ports[0] = "http" }, "spec.rules[0].to[0].operation.ports[0]", `port "http" is not a number`, false},
		{"port out of range", func(s *ap) { op(s).NotPorts = []string{"65536"} }, "spec.rules[0].to[0].operation.notPorts[0]", "1..65535", false},
		{"invalid path template", func(s *ap) { op(s).Paths[1] = "/api/{**}/x/{*}" }, "spec.rules[0].to[0].operation.paths[1]", "{**} must be the last operator", false},
		{"path template with stray star", func(s *ap) { op(s).Paths[1] = "/api/{*}/*.txt" }, "spec.rules[0].to[0].operation.paths[1]", "may only appear as a whole", false},
		{"empty method", func(s *ap) { op(s).Methods[0] = "" }, "spec.rules[0].to[0].operation.methods[0]", "must not be empty", false},
		{"condition without key", func(s *ap) { cond(s, 0).Key = "" }, "spec.rules[0].when[0].key", "condition key is required", false},
		{"unknown condition key", func(s *ap) { cond(s, 0).Key = "request.body" }, "spec.rules[0].when[0].key", `unknown attribute "request.body"`, false},
		{"condition without values", func(s *ap) { cond(s, 1).NotValues = nil }, "spec.rules[0].when[1]", "needs values or notValues", false},
		{"header condition without name", func(s *ap) { cond(s, 1).Key = "request.headers[]" }, "spec.rules[0].when[1].key", "request.headers[<header name>]", false},
		{"claim condition without brackets", func(s *ap) { cond(s, 0).Key = "request.auth.claims.iss" }, "spec.rules[0].when[0].key", "request.auth.claims[<claim>]", false},
		{"source.ip condition value", func(s *ap) { cond(s, 2).Values[0] = "ten.one" }, "spec.rules[0].when[2].values[0]", "not a valid IP address", false},
		{"destination.port condition value", func(s *ap) { cond(s, 3).Values[1] = "9o9o" }, "spec.rules[0].when[3].values[1]", "not a number", false},
		{"empty condition value", func(s *ap) { cond(s, 0).Values = []string{""} }, "spec.rules[0].when[0].values[0]", "must not be empty", false},
		{"DENY on HTTP attributes only", func(s *ap) {
			s.Action = security.AuthorizationPolicy_DENY
			s.Rules = []*security.Rule{{To: []*security.Rule_To{{Operation: &security.Operation{Methods: []string{"DELETE"}}}}}}
		}, "spec.rules[0]", "denies all traffic to TCP ports", true},
	})
}

func TestAuthorizationPolicyDryRun(t *testing.T) {
	spec := fromYAML[security.AuthorizationPolicy](t, validAuthorizationPolicy)
	c := cfg(spec)
	c.Annotations = map[string]string{dryRunAnnotation: "true"}
	requireClean(t, AuthorizationPolicy(c))
	c.Annotations[dryRunAnnotation] = "maybe"
	requireError(t, AuthorizationPolicy(c), "metadata.annotations[istio.io/dry-run]", "must be true or false")
	spec.Action = security.AuthorizationPolicy_AUDIT
	c.Annotations[dryRunAnnotation] = "true"
	requireError(t, AuthorizationPolicy(c), "metadata.annotations[istio.io/dry-run]", "only works with action ALLOW or DENY")
}

const validPeerAuthentication = `
selector:
  matchLabels: {app: reviews}
mtls: {mode: STRICT}
portLevelMtls:
  8080: {mode: PERMISSIVE}
  9090: {mode: DISABLE}
`

func TestPeerAuthentication(t *testing.T) {
	type pa = security.PeerAuthentication
	valid := func(t testing.TB) *pa { return fromYAML[pa](t, validPeerAuthentication) }
	runSpecCases(t, PeerAuthentication, valid, []specCase[pa]{
		{"unknown mode", func(s *pa) { s.Mtls.Mode = 5 }, "spec.mtls.mode", "UNSET, DISABLE, PERMISSIVE, STRICT", false},
		{"port-level without selector", func(s *pa) { s.Selector = nil }, "spec.portLevelMtls", "needs a selector with labels", false},
		{"port-level with empty selector", func(s *pa) { s.Selector.MatchLabels = nil }, "spec.portLevelMtls", "needs a selector with labels", false},
		{"port 0", func(s *pa) { s.PortLevelMtls[0] = &security.PeerAuthentication_MutualTLS{} }, "spec.portLevelMtls[0]", "1..65535", false},
		{"port out of range", func(s *pa) { s.PortLevelMtls[70000] = &security.PeerAuthentication_MutualTLS{} }, "spec.portLevelMtls[70000]", "1..65535", false},
		{"null port-level mode", func(s *pa) { s.PortLevelMtls[8080] = nil }, "spec.portLevelMtls[8080]", "must not be null", false},
		{"unknown port-level mode", func(s *pa) { s.PortLevelMtls[8080].Mode = 9 }, "spec.portLevelMtls[8080].mode", "unknown value 9", false},
	})
}

const validRequestAuthentication = `
targetRefs:
- {kind: Gateway, group: gateway.networking.k8s.io, name: ingress}
jwtRules:
- issuer: https://accounts.example.com
  jwksUri: https://accounts.example.com/.well-known/jwks.json
  audiences: [bookinfo]
  fromHeaders: [{name: x-jwt, prefix: "Bearer "}]
  fromParams: [token]
  fromCookies: [session]
  outputPayloadToHeader: x-jwt-payload
  outputClaimToHeaders: [{header: x-sub, claim: sub}]
  timeout: 5s
- issuer: testing@secure.istio.io
  jwks: '{"keys":[{"kty":"RSA","e":"AQAB","n":"xAE7eB6qugXyCAG3yhh7pkDkT65pHymX-P7KfIupjf59vsdo91bSP9C8H07pSAGQO1MV_xFj9VswgsCg4R6otmg5PV2He95lZdHtOcU5DXIg_pbhLdKXbi66GlVeK6ABZOUW3WYtnNHD-91gVuoeJT_DwtGGcp4ignkgXfkiEm4sw-4sfb4qdt5oLbyVpmW6x9cfa7vs2WTfURiCrBoUqgBo_-4WTiULmmHSGZHOjzwa8WtrtOQGsAFjIbno85jp6MnGGGZPYZbDAa_b3y5u-YpW7ypZrvD8BgtKVjgtQgZhLAGezMt0ua3DRrWnKqTZ0BJ_EyxOGuHJrLsn00fnMQ"}]}'
`

func TestRequestAuthentication(t *testing.T) {
	type ra = security.RequestAuthentication
	valid := func(t testing.TB) *ra { return fromYAML[ra](t, validRequestAuthentication) }
	rule := func(s *ra, i int) *security.JWTRule { return s.JwtRules[i] }
	runSpecCases(t, RequestAuthentication, valid, []specCase[ra]{
		{"no issuer", func(s *ra) { rule(s, 1).Issuer = "" }, "spec.jwtRules[1].issuer", "issuer is required", false},
		{"issuer only from jwksUri", func(s *ra) { rule(s, 0).Issuer = "" }, "spec.jwtRules[0].issuer", "tokens of any issuer", true},
		{"jwks and jwksUri", func(s *ra) { rule(s, 0).Jwks = rule(s, 1).Jwks }, "spec.jwtRules[0].jwks", "mutually exclusive", false},
		{"jwksUri scheme", func(s *ra) { rule(s, 0).JwksUri = "ftp://accounts.example.com/jwks" }, "spec.jwtRules[0].jwksUri", "must start with http:// or https://", false},
		{"jwksUri not a URL", func(s *ra) { rule(s, 0).JwksUri = "https://exa mple.com/%zz" }, "spec.jwtRules[0].jwksUri", "not a valid URL", false},
		{"jwksUri without host", func(s *ra) { rule(s, 0).JwksUri = "https:///jwks" }, "spec.jwtRules[0].jwksUri", "has no host", false},
		{"jwks not JSON", func(s *ra) { rule(s, 1).Jwks = "{keys:" }, "spec.jwtRules[1].jwks", "not a JSON object", false},
		{"jwks without keys", func(s *ra) { rule(s, 1).Jwks = `{"foo": 1}` }, "spec.jwtRules[1].jwks", "JSON Web Key Set", false},
		{"jwks key without type", func(s *ra) { rule(s, 1).Jwks = `{"keys": [{"n": "x"}]}` }, "spec.jwtRules[1].jwks.keys[0]", `no "kty"`, false},
		{"empty audience", func(s *ra) { rule(s, 0).Audiences = []string{""} }, "spec.jwtRules[0].audiences[0]", "must not be empty", false},
		{"header location name", func(s *ra) { rule(s, 0).FromHeaders[0].Name = "x jwt" }, "spec.jwtRules[0].fromHeaders[0].name", "header name", false},
		{"empty header location", func(s *ra) { rule(s, 0).FromHeaders[0].Name = "" }, "spec.jwtRules[0].fromHeaders[0].name", "must not be empty", false},
		{"empty query location", func(s *ra) { rule(s, 0).FromParams[0] = "" }, "spec.jwtRules[0].fromParams[0]", "must not be empty", false},
		{"payload header", func(s *ra) { rule(s, 0).OutputPayloadToHeader = "x payload" }, "spec.jwtRules[0].outputPayloadToHeader", "header name", false},
		{"claim header", func(s *ra) { rule(s, 0).OutputClaimToHeaders[0].Header = "x:sub" }, "spec.jwtRules[0].outputClaimToHeaders[0].header", "letters, digits", false},
		{"claim missing", func(s *ra) { rule(s, 0).OutputClaimToHeaders[0].Claim = "" }, "spec.jwtRules[0].outputClaimToHeaders[0].claim", "claim is required", false},
		{"null rule", func(s *ra) { s.JwtRules[1] = nil }, "spec.jwtRules[1]", "must not be null", false},
		{"selector and targetRefs", func(s *ra) {
			s.Selector = &typev1beta1.WorkloadSelector{MatchLabels: map[string]string{"app": "x"}}
		}, "spec.targetRefs", "selector and targetRefs are mutually exclusive", false},
		{"deprecated targetRef", func(s *ra) { s.TargetRef, s.TargetRefs = s.TargetRefs[0], nil }, "spec.targetRef", "superseded by targetRefs", true},
	})
}
