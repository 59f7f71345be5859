package validation

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	security "istio.io/api/security/v1beta1"
	typev1beta1 "istio.io/api/type/v1beta1"

	"github.com/meshcp/meshcp/pkg/config"
)

// dryRunAnnotation makes an AuthorizationPolicy log its decisions without
// enforcing them.
const dryRunAnnotation = "istio.io/dry-run"

// maxTargetRefs is the most policy target references a policy may have.
const maxTargetRefs = 16

// AuthorizationPolicy validates an Istio AuthorizationPolicy: the action
// (CUSTOM with a provider, and only CUSTOM), one of selector, targetRef and
// targetRefs, and every rule: non-empty sources and operations, values
// that are not empty, IPs and CIDRs where addresses are expected, numeric
// ports, valid path templates, and conditions on known attributes. A
// policy that can never apply (DENY or CUSTOM without rules) or that
// denies TCP traffic wholesale earns a warning.
func AuthorizationPolicy(c config.Config) Result {
	return validateSpec(c, "AuthorizationPolicy", namespacedMeta, checkAuthorizationPolicy)
}

// checkAuthorizationPolicy checks the spec of an AuthorizationPolicy (see AuthorizationPolicy).
func checkAuthorizationPolicy(c config.Config, ap *security.AuthorizationPolicy, r *Result) {
	checkDryRun(r, c, ap.Action)
	checkPolicyTargets(r, ap.Selector, ap.TargetRef, ap.TargetRefs)
	checkEnum(r, "spec.action", ap.Action, security.AuthorizationPolicy_Action_name)
	provider := ap.GetProvider()
	switch {
	case ap.Action == security.AuthorizationPolicy_CUSTOM && provider.GetName() == "":
		r.Errorf("spec.provider.name", "action CUSTOM needs provider.name, the extension provider that decides")
	case ap.Action != security.AuthorizationPolicy_CUSTOM && provider != nil:
		r.Errorf("spec.provider", "provider is only used with action CUSTOM, not %s", ap.Action)
	}
	if len(ap.Rules) == 0 && (ap.Action == security.AuthorizationPolicy_DENY || ap.Action == security.AuthorizationPolicy_CUSTOM) {
		r.Warnf("spec.rules", "a %s policy without rules never applies; add an empty rule {} to apply it to every request", ap.Action)
	}
	for i, rule := range ap.Rules {
		p := idx("spec.rules", i)
		if rule == nil {
			r.Errorf(p, "rule must not be null")
			continue
		}
		checkAuthzRule(r, p, rule)
		if ap.Action == security.AuthorizationPolicy_CUSTOM {
			checkCustomRule(r, p, rule)
		}
		if ap.Action == security.AuthorizationPolicy_DENY {
			warnHTTPOnlyDeny(r, p, rule)
		}
	}
}

// checkDryRun checks the dry-run annotation: a boolean, on ALLOW or DENY
// policies.
func checkDryRun(r *Result, c config.Config, action security.AuthorizationPolicy_Action) {
	v, ok := c.Annotations[dryRunAnnotation]
	if !ok {
		return
	}
	p := key("metadata.annotations", dryRunAnnotation)
	if _, err := strconv.ParseBool(v); err != nil {
		r.Errorf(p, "%s must be true or false, not %q", dryRunAnnotation, v)
	}
	if action != security.AuthorizationPolicy_ALLOW && action != security.AuthorizationPolicy_DENY {
		r.Errorf(p, "%s only works with action ALLOW or DENY, not %s", dryRunAnnotation, action)
	}
}

// checkPolicyTargets checks how a policy picks its workloads: at most one
// of selector, targetRef and targetRefs.
func checkPolicyTargets(r *Result, sel *typev1beta1.WorkloadSelector, ref *typev1beta1.PolicyTargetReference, refs []*typev1beta1.PolicyTargetReference) {
	set := []string{}
	if sel != nil {
		set = append(set, "selector")
	}
	if ref != nil {
		set = append(set, "targetRef")
	}
	if len(refs) > 0 {
		set = append(set, "targetRefs")
	}
	if len(set) > 1 {
		r.Errorf(fld("spec", set[1]), "%s are mutually exclusive; use only one", strings.Join(set, " and "))
	}
	checkPolicySelector(r, "spec.selector", sel)
	if ref != nil {
		r.Warnf("spec.targetRef", "targetRef is superseded by targetRefs; use targetRefs")
		checkTargetRef(r, "spec.targetRef", ref)
	}
	if len(refs) > maxTargetRefs {
		r.Errorf("spec.targetRefs", "at most %d targetRefs are allowed, not %d", maxTargetRefs, len(refs))
	}
	for i, tr := range refs {
		checkTargetRef(r, idx("spec.targetRefs", i), tr)
	}
}

// policyTargetKinds are the kinds a policy may target, by group.
var policyTargetKinds = map[string][]string{
	"":                          {"Service"},
	"core":                      {"Service"},
	"networking.istio.io":       {"ServiceEntry"},
	"gateway.networking.k8s.io": {"Gateway", "GatewayClass"},
}

// checkTargetRef checks a policy target reference.
func checkTargetRef(r *Result, p string, ref *typev1beta1.PolicyTargetReference) {
	if ref == nil {
		r.Errorf(p, "target reference must not be null")
		return
	}
	if ref.Name == "" {
		r.Errorf(fld(p, "name"), "target name is required")
	}
	if ref.Namespace != "" {
		r.Errorf(fld(p, "namespace"), "namespace must be empty: a policy can only target objects in its own namespace")
	}
	if !slices.Contains(policyTargetKinds[ref.Group], ref.Kind) {
		r.Errorf(fld(p, "kind"), "cannot target %q in group %q; targets are Services, ServiceEntries (networking.istio.io), Gateways and GatewayClasses (gateway.networking.k8s.io)", ref.Kind, ref.Group)
	}
}

// checkAuthzRule checks the sources, operations and conditions of a rule.
func checkAuthzRule(r *Result, p string, rule *security.Rule) {
	for i, from := range rule.From {
		fp := idx(fld(p, "from"), i)
		if from == nil || from.Source == nil {
			r.Errorf(fld(fp, "source"), "from needs a source")
			continue
		}
		checkSource(r, fld(fp, "source"), from.Source)
	}
	for i, to := range rule.To {
		tp := idx(fld(p, "to"), i)
		if to == nil || to.Operation == nil {
			r.Errorf(fld(tp, "operation"), "to needs an operation")
			continue
		}
		checkOperation(r, fld(tp, "operation"), to.Operation)
	}
	for i, cond := range rule.When {
		checkCondition(r, idx(fld(p, "when"), i), cond)
	}
}

// checkSource checks a rule source.
func checkSource(r *Result, p string, s *security.Source) {
	lists := []struct {
		name   string
		values []string
	}{
		{"principals", s.Principals}, {"notPrincipals", s.NotPrincipals},
		{"requestPrincipals", s.RequestPrincipals}, {"notRequestPrincipals", s.NotRequestPrincipals},
		{"namespaces", s.Namespaces}, {"notNamespaces", s.NotNamespaces},
		{"serviceAccounts", s.ServiceAccounts}, {"notServiceAccounts", s.NotServiceAccounts},
		{"ipBlocks", s.IpBlocks}, {"notIpBlocks", s.NotIpBlocks},
		{"remoteIpBlocks", s.RemoteIpBlocks}, {"notRemoteIpBlocks", s.NotRemoteIpBlocks},
		{"trustDomains", s.TrustDomains}, {"notTrustDomains", s.NotTrustDomains},
	}
	empty := true
	for _, l := range lists {
		empty = empty && len(l.values) == 0
		checkNonEmptyStrings(r, fld(p, l.name), l.values)
	}
	if empty {
		r.Errorf(p, "source is empty; set at least one field (or remove it to match any source)")
	}
	if len(s.ServiceAccounts)+len(s.NotServiceAccounts) > 0 && len(s.Principals)+len(s.NotPrincipals)+len(s.Namespaces)+len(s.NotNamespaces) > 0 {
		r.Errorf(fld(p, "serviceAccounts"), "serviceAccounts cannot be combined with principals or namespaces")
	}
	for _, l := range []struct {
		name   string
		values []string
	}{{"serviceAccounts", s.ServiceAccounts}, {"notServiceAccounts", s.NotServiceAccounts}} {
		if len(l.values) > maxTargetRefs {
			r.Errorf(fld(p, l.name), "at most %d service accounts are allowed, not %d", maxTargetRefs, len(l.values))
		}
		for i, sa := range l.values {
			checkServiceAccountValue(r, idx(fld(p, l.name), i), sa)
		}
	}
	for _, l := range lists {
		if !strings.HasSuffix(l.name, "pBlocks") {
			continue // only the ipBlocks lists hold addresses
		}
		for i, ip := range l.values {
			if ip != "" {
				checkIPOrCIDR(r, idx(fld(p, l.name), i), ip)
			}
		}
	}
}

// checkServiceAccountValue checks a "namespace/name" or "name" service
// account, where no wildcard is allowed.
func checkServiceAccountValue(r *Result, p, sa string) {
	if sa == "" {
		return
	}
	if strings.Contains(sa, "*") {
		r.Errorf(p, "service account %q must not contain a wildcard", sa)
		return
	}
	if len(sa) > 320 || strings.Count(sa, "/") > 1 || strings.HasPrefix(sa, "/") || strings.HasSuffix(sa, "/") {
		r.Errorf(p, "service account %q must be <namespace>/<name> or <name>", sa)
	}
}

// checkOperation checks a rule operation.
func checkOperation(r *Result, p string, op *security.Operation) {
	lists := []struct {
		name   string
		values []string
	}{
		{"hosts", op.Hosts}, {"notHosts", op.NotHosts}, {"ports", op.Ports}, {"notPorts", op.NotPorts},
		{"methods", op.Methods}, {"notMethods", op.NotMethods}, {"paths", op.Paths}, {"notPaths", op.NotPaths},
	}
	empty := true
	for _, l := range lists {
		empty = empty && len(l.values) == 0
		checkNonEmptyStrings(r, fld(p, l.name), l.values)
	}
	if empty {
		r.Errorf(p, "operation is empty; set at least one field (or remove it to match any operation)")
	}
	for i, port := range op.Ports {
		checkPortValue(r, idx(fld(p, "ports"), i), port)
	}
	for i, port := range op.NotPorts {
		checkPortValue(r, idx(fld(p, "notPorts"), i), port)
	}
	for i, path := range op.Paths {
		checkPathTemplate(r, idx(fld(p, "paths"), i), path)
	}
	for i, path := range op.NotPaths {
		checkPathTemplate(r, idx(fld(p, "notPaths"), i), path)
	}
}

// checkPortValue checks a port given as a string.
func checkPortValue(r *Result, p, port string) {
	if port == "" {
		return
	}
	n, err := strconv.ParseUint(port, 10, 32)
	switch {
	case err != nil:
		r.Errorf(p, "port %q is not a number", port)
	case n > 65535:
		r.Errorf(p, "port %d is out of range; ports are 1..65535", n)
	case n == 0:
		r.Warnf(p, "port 0 never matches a connection")
	}
}

// checkPathTemplate checks a path that uses the {*} and {**} template
// operators: no '*', '{' or '}' outside them, operators alone in their
// segment, and {**} last.
func checkPathTemplate(r *Result, p, path string) {
	if !strings.Contains(path, "{*}") && !strings.Contains(path, "{**}") {
		return
	}
	doubleStar := false
	for seg := range strings.SplitSeq(path, "/") {
		switch seg {
		case "{*}", "{**}":
			if doubleStar {
				r.Errorf(p, "path template %q is invalid: {**} must be the last operator", path)
				return
			}
			doubleStar = seg == "{**}"
		default:
			if strings.ContainsAny(seg, "*{}") {
				r.Errorf(p, "path template %q is invalid: '*', '{' and '}' may only appear as a whole {*} or {**} segment", path)
				return
			}
		}
	}
}

// Condition attributes, by kind of value.
var (
	// ipAttributes hold IP addresses or CIDR blocks.
	ipAttributes = []string{"source.ip", "remote.ip", "destination.ip"}
	// plainAttributes hold any non-empty string.
	plainAttributes = []string{
		"source.namespace", "source.principal", "source.serviceAccount", "source.serviceaccount",
		"request.auth.principal", "request.auth.audiences", "request.auth.presenter", "connection.sni",
	}
)

// claimPath is the bracketed claim path of request.auth.claims[a][b].
var claimPath = regexp.MustCompile(`^(\[[^\[\]]+\])+$`)

// checkCondition checks a when condition: a known attribute with values.
func checkCondition(r *Result, p string, cond *security.Condition) {
	if cond == nil {
		r.Errorf(p, "condition must not be null")
		return
	}
	kp := fld(p, "key")
	if len(cond.Values) == 0 && len(cond.NotValues) == 0 {
		r.Errorf(p, "condition on %q needs values or notValues", cond.Key)
	}
	checkNonEmptyStrings(r, fld(p, "values"), cond.Values)
	checkNonEmptyStrings(r, fld(p, "notValues"), cond.NotValues)
	key := cond.Key
	switch {
	case key == "":
		r.Errorf(kp, "condition key is required")
	case slices.Contains(ipAttributes, key):
		checkConditionValues(p, cond, func(vp, v string) { checkIPOrCIDR(r, vp, v) })
	case key == "destination.port":
		checkConditionValues(p, cond, func(vp, v string) { checkPortValue(r, vp, v) })
	case slices.Contains(plainAttributes, key), strings.HasPrefix(key, "experimental.envoy.filters."):
	case strings.HasPrefix(key, "request.headers"):
		name := strings.TrimPrefix(key, "request.headers")
		if !strings.HasPrefix(name, "[") || !strings.HasSuffix(name, "]") || len(name) < 3 {
			r.Errorf(kp, "key %q must be request.headers[<header name>]", key)
		} else {
			checkHeaderName(r, kp, name[1:len(name)-1])
		}
	case strings.HasPrefix(key, "request.auth.claims"):
		if !claimPath.MatchString(strings.TrimPrefix(key, "request.auth.claims")) {
			r.Errorf(kp, "key %q must be request.auth.claims[<claim>] (nested claims as [a][b])", key)
		}
	default:
		r.Errorf(kp, "unknown attribute %q; see the Istio authorization policy conditions for the supported keys", key)
	}
}

// checkConditionValues runs check on every non-empty value and notValue.
func checkConditionValues(p string, cond *security.Condition, check func(vp, v string)) {
	for i, v := range cond.Values {
		if v != "" {
			check(idx(fld(p, "values"), i), v)
		}
	}
	for i, v := range cond.NotValues {
		if v != "" {
			check(idx(fld(p, "notValues"), i), v)
		}
	}
}

// checkCustomRule checks a rule of a CUSTOM policy, which the external
// authorizer evaluates before identities and JWTs are known.
func checkCustomRule(r *Result, p string, rule *security.Rule) {
	for i, from := range rule.From {
		s := from.GetSource()
		if s == nil {
			continue
		}
		sp := fld(idx(fld(p, "from"), i), "source")
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"principals", len(s.Principals) > 0}, {"notPrincipals", len(s.NotPrincipals) > 0},
			{"requestPrincipals", len(s.RequestPrincipals) > 0}, {"notRequestPrincipals", len(s.NotRequestPrincipals) > 0},
			{"namespaces", len(s.Namespaces) > 0}, {"notNamespaces", len(s.NotNamespaces) > 0},
			{"serviceAccounts", len(s.ServiceAccounts) > 0}, {"notServiceAccounts", len(s.NotServiceAccounts) > 0},
		} {
			if f.set {
				r.Errorf(fld(sp, f.name), "%s is not supported with action CUSTOM", f.name)
			}
		}
	}
	for i, cond := range rule.When {
		k := cond.GetKey()
		if k == "source.namespace" || k == "source.principal" || k == "source.serviceAccount" || strings.HasPrefix(k, "request.auth.") {
			r.Errorf(fld(idx(fld(p, "when"), i), "key"), "condition %q is not supported with action CUSTOM", k)
		}
	}
}

// warnHTTPOnlyDeny warns of a DENY rule that uses only HTTP attributes:
// on TCP ports those cannot be evaluated, so the rule denies every
// connection.
func warnHTTPOnlyDeny(r *Result, p string, rule *security.Rule) {
	var hasFrom, tcpFrom, hasTo, tcpTo bool
	for _, from := range rule.From {
		if s := from.GetSource(); s != nil {
			hasFrom = true
			tcpFrom = tcpFrom || len(s.Principals)+len(s.NotPrincipals)+len(s.Namespaces)+len(s.NotNamespaces)+
				len(s.IpBlocks)+len(s.NotIpBlocks)+len(s.RemoteIpBlocks)+len(s.NotRemoteIpBlocks)+
				len(s.ServiceAccounts)+len(s.NotServiceAccounts) > 0
		}
	}
	for _, to := range rule.To {
		if op := to.GetOperation(); op != nil {
			hasTo = true
			tcpTo = tcpTo || len(op.Ports)+len(op.NotPorts) > 0
		}
	}
	if (hasFrom && !hasTo && !tcpFrom) || (hasTo && !tcpTo) {
		r.Warnf(p, "this DENY rule uses only HTTP attributes, so it denies all traffic to TCP ports in its scope; name the ports explicitly")
	}
}

// PeerAuthentication validates an Istio PeerAuthentication: known mTLS
// modes, and port-level modes only with a workload selector, on ports
// 1..65535.
func PeerAuthentication(c config.Config) Result {
	return validateSpec(c, "PeerAuthentication", namespacedMeta, checkPeerAuthentication)
}

// checkPeerAuthentication checks the spec of a PeerAuthentication (see PeerAuthentication).
func checkPeerAuthentication(_ config.Config, pa *security.PeerAuthentication, r *Result) {
	checkPolicySelector(r, "spec.selector", pa.Selector)
	if pa.Mtls != nil {
		checkEnum(r, "spec.mtls.mode", pa.Mtls.Mode, security.PeerAuthentication_MutualTLS_Mode_name)
	}
	if len(pa.PortLevelMtls) > 0 && len(pa.Selector.GetMatchLabels()) == 0 {
		r.Errorf("spec.portLevelMtls", "portLevelMtls needs a selector with labels; mesh- and namespace-wide policies cannot set per-port modes")
	}
	for _, port := range sortedKeys(pa.PortLevelMtls) {
		p := key("spec.portLevelMtls", strconv.FormatUint(uint64(port), 10))
		checkPort(r, p, port)
		if m := pa.PortLevelMtls[port]; m == nil {
			r.Errorf(p, "port-level mTLS must not be null")
		} else {
			checkEnum(r, fld(p, "mode"), m.Mode, security.PeerAuthentication_MutualTLS_Mode_name)
		}
	}
}

// RequestAuthentication validates an Istio RequestAuthentication: one of
// selector, targetRef and targetRefs, and every JWT rule: an issuer (or
// JWKS URI), a JWKS given either as an http(s) URI or as inline JSON that
// parses, non-empty audiences and token locations, valid header names for
// token locations and outputs, and a positive fetch timeout.
func RequestAuthentication(c config.Config) Result {
	return validateSpec(c, "RequestAuthentication", namespacedMeta, checkRequestAuthentication)
}

// maxJWTRules is the most JWT rules one RequestAuthentication may have.
const maxJWTRules = 4096

// checkRequestAuthentication checks the spec of a RequestAuthentication (see RequestAuthentication).
func checkRequestAuthentication(_ config.Config, ra *security.RequestAuthentication, r *Result) {
	checkPolicyTargets(r, ra.Selector, ra.TargetRef, ra.TargetRefs)
	if len(ra.JwtRules) > maxJWTRules {
		r.Errorf("spec.jwtRules", "at most %d jwtRules are allowed, not %d", maxJWTRules, len(ra.JwtRules))
	}
	for i, rule := range ra.JwtRules {
		p := idx("spec.jwtRules", i)
		if rule == nil {
			r.Errorf(p, "JWT rule must not be null")
			continue
		}
		checkJWTRule(r, p, rule)
	}
}

// claimHeaderName is the form of a header a claim is copied to.
var claimHeaderName = regexp.MustCompile(`^[-_A-Za-z0-9]+$`)

// checkJWTRule checks one JWT rule.
func checkJWTRule(r *Result, p string, rule *security.JWTRule) {
	switch {
	case rule.Issuer == "" && rule.JwksUri == "":
		r.Errorf(fld(p, "issuer"), "issuer is required (or at least jwksUri)")
	case rule.Issuer == "":
		r.Warnf(fld(p, "issuer"), "issuer is empty, so tokens of any issuer signed with these keys are accepted")
	}
	if rule.JwksUri != "" && rule.Jwks != "" {
		r.Errorf(fld(p, "jwks"), "jwks and jwksUri are mutually exclusive")
	}
	if rule.JwksUri != "" {
		checkJWKSURI(r, fld(p, "jwksUri"), rule.JwksUri)
	}
	if rule.Jwks != "" {
		checkJWKS(r, fld(p, "jwks"), rule.Jwks)
	}
	checkNonEmptyStrings(r, fld(p, "audiences"), rule.Audiences)
	for i, h := range rule.FromHeaders {
		hp := idx(fld(p, "fromHeaders"), i)
		if h == nil {
			r.Errorf(hp, "header location must not be null")
			continue
		}
		checkHeaderName(r, fld(hp, "name"), h.Name)
	}
	checkNonEmptyStrings(r, fld(p, "fromParams"), rule.FromParams)
	checkNonEmptyStrings(r, fld(p, "fromCookies"), rule.FromCookies)
	if rule.OutputPayloadToHeader != "" {
		checkHeaderName(r, fld(p, "outputPayloadToHeader"), rule.OutputPayloadToHeader)
	}
	for i, ch := range rule.OutputClaimToHeaders {
		cp := idx(fld(p, "outputClaimToHeaders"), i)
		if ch == nil {
			r.Errorf(cp, "claim to header must not be null")
			continue
		}
		if !claimHeaderName.MatchString(ch.Header) {
			r.Errorf(fld(cp, "header"), "header %q is invalid: it must be letters, digits, '-' and '_'", ch.Header)
		}
		if ch.Claim == "" {
			r.Errorf(fld(cp, "claim"), "claim is required")
		}
	}
	checkPositiveDuration(r, fld(p, "timeout"), rule.Timeout)
	checkNonEmptyStrings(r, fld(p, "spaceDelimitedClaims"), rule.SpaceDelimitedClaims)
	checkEnum(r, fld(p, "presence"), rule.Presence, security.JWTRule_JWTRequirement_name)
}

// maxJWKSURILength is the longest JWKS URI accepted.
const maxJWKSURILength = 2048

// checkJWKSURI checks a JWKS URI: an absolute http or https URL.
func checkJWKSURI(r *Result, p, uri string) {
	if len(uri) > maxJWKSURILength {
		r.Errorf(p, "jwksUri is %d characters long; at most %d are allowed", len(uri), maxJWKSURILength)
		return
	}
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		r.Errorf(p, "jwksUri %q is not a valid URL: %v", uri, err)
	case u.Scheme != "http" && u.Scheme != "https":
		r.Errorf(p, "jwksUri %q must start with http:// or https://", uri)
	case u.Hostname() == "":
		r.Errorf(p, "jwksUri %q has no host", uri)
	case u.Port() != "":
		if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
			r.Errorf(p, "jwksUri %q has an invalid port %q", uri, u.Port())
		}
	}
}

// checkJWKS checks an inline JSON Web Key Set: {"keys": [...]}, each key
// an object with a "kty", or a single such key.
func checkJWKS(r *Result, p, jwks string) {
	var set map[string]json.RawMessage
	if err := json.Unmarshal([]byte(jwks), &set); err != nil {
		r.Errorf(p, "jwks is not a JSON object: %v", err)
		return
	}
	if _, single := set["kty"]; single {
		checkJWK(r, p, jwks)
		return
	}
	raw, ok := set["keys"]
	if !ok {
		r.Errorf(p, `jwks must be a JSON Web Key Set: {"keys": [...]}`)
		return
	}
	var keys []json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		r.Errorf(p, `jwks "keys" must be a list of keys: %v`, err)
		return
	}
	for i, k := range keys {
		checkJWK(r, p+".keys["+strconv.Itoa(i)+"]", string(k))
	}
}

// checkJWK checks one JSON Web Key has a key type.
func checkJWK(r *Result, p, jwk string) {
	var k struct {
		Kty *string `json:"kty"`
	}
	if err := json.Unmarshal([]byte(jwk), &k); err != nil {
		r.Errorf(p, "key is not a JSON object: %v", err)
		return
	}
	if k.Kty == nil || *k.Kty == "" {
		r.Errorf(p, `key has no "kty" (key type, such as "RSA" or "EC")`)
	}
}
