package validation

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
)

// The Gateway API checks here are those of the CRD schemas (patterns,
// enums, limits, CEL rules), which objects read from files never went
// through, and the rules the schemas cannot express.

// Forms of Gateway API names and values, from the CRD schemas.
var (
	gwHostname       = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	gwGroup          = regexp.MustCompile(`^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	gwKind           = regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`)
	gwSectionName    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	gwController     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$`)
	gwProtocol       = regexp.MustCompile(`^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$`)
	gwDuration       = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)
	gwPathChars      = regexp.MustCompile(`^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$`)
	gwCORSOrigin     = regexp.MustCompile(`(^\*$)|(^(http(s)?):\/\/(((\*\.)?([a-zA-Z0-9\-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$)`)
	gwPrefixedType   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$`)
	grpcServiceName  = regexp.MustCompile(`^(?i)\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$`)
	grpcMethodName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*$`)
	gwAnnotationKeyV = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$`)
)

// Limits of the Gateway API schemas.
const (
	maxListeners       = 64
	maxParentRefs      = 32
	maxRouteHostnames  = 16
	maxTLSHostnames    = 1024
	maxRouteRules      = 16
	maxRuleMatches     = 64
	maxTotalMatches    = 128
	maxRuleFilters     = 16
	maxRuleBackends    = 16
	maxHeaderMatches   = 16
	maxHeaderModifiers = 16
	maxBackendWeight   = 1000000
	maxPathLength      = 1024
	maxRefs            = 16
	maxCertificateRefs = 64
	maxRouteKinds      = 8
	maxGatewayAddrs    = 16
)

// GatewayClass validates a Gateway API GatewayClass: a controllerName of
// the form "domain/path", and a well-formed parametersRef.
func GatewayClass(c config.Config) Result {
	return validateSpec(c, "GatewayClass", clusterMeta, checkGatewayClass)
}

// checkGatewayClass checks the spec of a GatewayClass (see GatewayClass).
func checkGatewayClass(_ config.Config, gc *gatewayv1.GatewayClassSpec, r *Result) {
	name := string(gc.ControllerName)
	switch {
	case name == "":
		r.Errorf("spec.controllerName", "controllerName is required, such as istio.io/gateway-controller")
	case len(name) > 253:
		r.Errorf("spec.controllerName", "controllerName is %d characters long; at most 253 are allowed", len(name))
	case !gwController.MatchString(name):
		r.Errorf("spec.controllerName", "controllerName %q must be a domain followed by a path, such as example.com/gateway-controller", name)
	}
	if ref := gc.ParametersRef; ref != nil {
		checkGroup(r, "spec.parametersRef.group", string(ref.Group))
		checkKind(r, "spec.parametersRef.kind", string(ref.Kind))
		checkObjectName(r, "spec.parametersRef.name", ref.Name)
		checkNamespaceRef(r, "spec.parametersRef.namespace", ref.Namespace)
	}
	if d := gc.Description; d != nil && len(*d) > 64 {
		r.Errorf("spec.description", "description is %d characters long; at most 64 are allowed", len(*d))
	}
}

// Shared checks of names and references.

// checkGroup checks an API group ("" for the core group).
func checkGroup(r *Result, p, group string) {
	if len(group) > 253 || !gwGroup.MatchString(group) {
		r.Errorf(p, "group %q is not a valid API group (a DNS subdomain, or empty for the core group)", group)
	}
}

// checkKind checks a kind name.
func checkKind(r *Result, p, kind string) {
	switch {
	case kind == "":
		r.Errorf(p, "kind is required")
	case len(kind) > 63 || !gwKind.MatchString(kind):
		r.Errorf(p, "kind %q is invalid: it must start with a letter and contain only letters, digits and '-'", kind)
	}
}

// checkObjectName checks the name of a referenced object.
func checkObjectName[S ~string](r *Result, p string, name S) {
	switch {
	case name == "":
		r.Errorf(p, "name is required")
	case len(name) > 253:
		r.Errorf(p, "name is %d characters long; at most 253 are allowed", len(name))
	}
}

// checkNamespaceRef checks an optional namespace of a reference.
func checkNamespaceRef(r *Result, p string, ns *gatewayv1.Namespace) {
	if ns == nil {
		return
	}
	for _, msg := range k8svalidation.IsDNS1123Label(string(*ns)) {
		r.Errorf(p, "namespace %q is not a valid namespace name: %s", *ns, msg)
	}
}

// checkSectionName checks a listener or rule name.
func checkSectionName(r *Result, p, name string) {
	if name == "" || len(name) > 253 || !gwSectionName.MatchString(name) {
		r.Errorf(p, "name %q is invalid: it must be lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", name)
	}
}

// gatewayHostnameError says why h is not a Gateway API hostname (lowercase,
// no IP, a wildcard only as the whole first label), or returns "".
func gatewayHostnameError(h string, allowWildcard bool) string {
	switch {
	case h == "":
		return "hostname must not be empty"
	case len(h) > 253:
		return fmt.Sprintf("hostname %q is longer than 253 characters", h)
	case isIP(h):
		return fmt.Sprintf("hostname %q is an IP address; hostnames must be DNS names", h)
	case strings.Contains(h, "*") && !allowWildcard:
		return fmt.Sprintf("hostname %q must not contain a wildcard", h)
	case strings.Contains(h, "*") && (!strings.HasPrefix(h, "*.") || strings.Contains(h[1:], "*")):
		return fmt.Sprintf("hostname %q is invalid: a wildcard must be the whole first label, as in *.example.com", h)
	case !gwHostname.MatchString(h):
		return fmt.Sprintf("hostname %q is invalid: it must be lowercase letters, digits, '-' and '.', each label starting and ending with a letter or digit", h)
	}
	return ""
}

// checkHostnames checks the hostnames of a route.
func checkHostnames(r *Result, p string, hostnames []gatewayv1.Hostname, limit int) {
	if len(hostnames) > limit {
		r.Errorf(p, "at most %d hostnames are allowed, not %d", limit, len(hostnames))
	}
	for i, h := range hostnames {
		if msg := gatewayHostnameError(string(h), true); msg != "" {
			r.Errorf(idx(p, i), "%s", msg)
		}
	}
}

// parseGatewayDuration parses a Gateway API duration (GEP-2257): one to
// four <number><unit> parts, units h, m, s and ms, numbers up to 5 digits.
func parseGatewayDuration(s string) (time.Duration, error) {
	if !gwDuration.MatchString(s) {
		return 0, fmt.Errorf("duration %q is invalid: write 1 to 4 parts of up to 5 digits followed by h, m, s or ms, such as 1m30s or 500ms", s)
	}
	return time.ParseDuration(s)
}

// checkGatewayDuration checks an optional Gateway API duration and returns
// it (0 when absent or invalid).
func checkGatewayDuration(r *Result, p string, d *gatewayv1.Duration) time.Duration {
	if d == nil {
		return 0
	}
	v, err := parseGatewayDuration(string(*d))
	if err != nil {
		r.Errorf(p, "%v", err)
		return 0
	}
	return v
}

// Parent and backend references.

// parentKey identifies the parent a route attaches to, defaults applied.
type parentKey struct{ group, kind, namespace, name string }

// checkParentRefs checks the parents of a route: well-formed references,
// and several references to one parent only when each names a different
// section or port.
func checkParentRefs(r *Result, p string, refs []gatewayv1.ParentReference, routeNamespace string) {
	if len(refs) > maxParentRefs {
		r.Errorf(p, "at most %d parentRefs are allowed, not %d", maxParentRefs, len(refs))
	}
	byParent := map[parentKey][]int{}
	var order []parentKey
	for i, ref := range refs {
		rp := idx(p, i)
		checkParentRef(r, rp, ref)
		k := parentKey{group: gatewayv1.GroupName, kind: "Gateway", namespace: routeNamespace, name: string(ref.Name)}
		if ref.Group != nil {
			k.group = string(*ref.Group)
		}
		if ref.Kind != nil {
			k.kind = string(*ref.Kind)
		}
		if ref.Namespace != nil {
			k.namespace = string(*ref.Namespace)
		}
		if _, seen := byParent[k]; !seen {
			order = append(order, k)
		}
		byParent[k] = append(byParent[k], i)
	}
	for _, k := range order {
		checkSameParentRefs(r, p, refs, byParent[k])
	}
}

// checkParentRef checks one parent reference.
func checkParentRef(r *Result, p string, ref gatewayv1.ParentReference) {
	checkObjectName(r, fld(p, "name"), ref.Name)
	if ref.Group != nil {
		checkGroup(r, fld(p, "group"), string(*ref.Group))
	}
	if ref.Kind != nil {
		checkKind(r, fld(p, "kind"), string(*ref.Kind))
	}
	checkNamespaceRef(r, fld(p, "namespace"), ref.Namespace)
	if ref.SectionName != nil {
		checkSectionName(r, fld(p, "sectionName"), string(*ref.SectionName))
	}
	if ref.Port != nil {
		checkPort(r, fld(p, "port"), *ref.Port)
	}
}

// checkSameParentRefs checks the references (at positions at) to one
// parent: when there are several, each must name a section or port, and
// no two the same.
func checkSameParentRefs(r *Result, p string, refs []gatewayv1.ParentReference, at []int) {
	if len(at) < 2 {
		return
	}
	seen := map[string]int{}
	for _, i := range at {
		ref := refs[i]
		if ref.SectionName == nil && ref.Port == nil {
			r.Errorf(idx(p, i), "parentRefs[%d] and others name the same parent %q; each must then set sectionName or port", i, ref.Name)
			continue
		}
		section, port := "", ""
		if ref.SectionName != nil {
			section = string(*ref.SectionName)
		}
		if ref.Port != nil {
			port = strconv.Itoa(int(*ref.Port))
		}
		k := section + "/" + port
		if j, dup := seen[k]; dup {
			r.Errorf(idx(p, i), "parentRefs[%d] duplicates parentRefs[%d]: same parent, sectionName and port", i, j)
			continue
		}
		seen[k] = i
	}
}

// checkBackendObjectRef checks a reference to a backend; a Service needs
// a port.
func checkBackendObjectRef(r *Result, p string, ref gatewayv1.BackendObjectReference) {
	checkObjectName(r, fld(p, "name"), ref.Name)
	group, kind := "", "Service"
	if ref.Group != nil {
		group = string(*ref.Group)
		checkGroup(r, fld(p, "group"), group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
		checkKind(r, fld(p, "kind"), kind)
	}
	checkNamespaceRef(r, fld(p, "namespace"), ref.Namespace)
	if ref.Port != nil {
		checkPort(r, fld(p, "port"), *ref.Port)
	} else if group == "" && kind == "Service" {
		r.Errorf(fld(p, "port"), "a reference to a Service needs a port")
	}
}

// checkBackendRef checks a weighted backend reference.
func checkBackendRef(r *Result, p string, ref gatewayv1.BackendRef) {
	checkBackendObjectRef(r, p, ref.BackendObjectReference)
	if w := ref.Weight; w != nil && (*w < 0 || *w > maxBackendWeight) {
		r.Errorf(fld(p, "weight"), "weight %d is out of range; it must be 0..%d", *w, maxBackendWeight)
	}
}

// warnZeroWeights warns when every one of several backends has weight 0:
// then every request fails.
func warnZeroWeights(r *Result, p string, weights []*int32) {
	if len(weights) == 0 {
		return
	}
	for _, w := range weights {
		if w == nil || *w != 0 {
			return
		}
	}
	r.Warnf(p, "every backend has weight 0, so every request is answered with an error")
}

// checkRouteRuleNames checks rule names are valid and unique.
func checkRouteRuleNames(r *Result, p string, names []*gatewayv1.SectionName) {
	seen := map[gatewayv1.SectionName]int{}
	for i, n := range names {
		if n == nil {
			continue
		}
		np := fld(idx(p, i), "name")
		checkSectionName(r, np, string(*n))
		if j, dup := seen[*n]; dup {
			r.Errorf(np, "rule name %q is already used by rules[%d]; rule names must be unique", *n, j)
		} else {
			seen[*n] = i
		}
	}
}

// ruleNames returns the names of rules, for checkRouteRuleNames.
func ruleNames[R any](rules []R, name func(R) *gatewayv1.SectionName) []*gatewayv1.SectionName {
	out := make([]*gatewayv1.SectionName, len(rules))
	for i, rule := range rules {
		out[i] = name(rule)
	}
	return out
}

// checkDefaultGateways checks useDefaultGateways.
func checkDefaultGateways(r *Result, p string, scope gatewayv1.GatewayDefaultScope) {
	switch scope {
	case "", gatewayv1.GatewayDefaultScopeAll, gatewayv1.GatewayDefaultScopeNone:
	default:
		r.Errorf(p, "useDefaultGateways %q must be All or None", scope)
	}
}

// HTTPRoute.

// HTTPRoute validates a Gateway API HTTPRoute: parent references (unique,
// a section or port whenever a parent repeats), hostnames, and every rule:
// matches (paths by type, header and query names, regexes that compile),
// filters (fields that fit their type, each core filter at most once,
// RequestRedirect with neither URLRewrite nor backendRefs), backend
// references and weights, timeouts (backendRequest within request),
// retries and session persistence.
func HTTPRoute(c config.Config) Result {
	return validateSpec(c, "HTTPRoute", namespacedMeta, checkHTTPRouteSpec)
}

// checkHTTPRouteSpec checks the spec of an HTTPRoute (see HTTPRoute).
func checkHTTPRouteSpec(c config.Config, spec *gatewayv1.HTTPRouteSpec, r *Result) {
	checkParentRefs(r, "spec.parentRefs", spec.ParentRefs, c.Namespace)
	checkDefaultGateways(r, "spec.useDefaultGateways", spec.UseDefaultGateways)
	checkHostnames(r, "spec.hostnames", spec.Hostnames, maxRouteHostnames)
	if len(spec.Rules) > maxRouteRules {
		r.Errorf("spec.rules", "at most %d rules are allowed, not %d", maxRouteRules, len(spec.Rules))
	}
	checkRouteRuleNames(r, "spec.rules", ruleNames(spec.Rules, func(rule gatewayv1.HTTPRouteRule) *gatewayv1.SectionName { return rule.Name }))
	total := 0
	for i := range spec.Rules {
		total += len(spec.Rules[i].Matches)
		checkHTTPRouteRule(r, idx("spec.rules", i), &spec.Rules[i])
	}
	if total > maxTotalMatches {
		r.Errorf("spec.rules", "the rules have %d matches in all; at most %d are allowed", total, maxTotalMatches)
	}
}

// checkHTTPRouteRule checks one rule of an HTTPRoute.
func checkHTTPRouteRule(r *Result, p string, rule *gatewayv1.HTTPRouteRule) {
	if len(rule.Matches) > maxRuleMatches {
		r.Errorf(fld(p, "matches"), "at most %d matches are allowed, not %d", maxRuleMatches, len(rule.Matches))
	}
	for i := range rule.Matches {
		checkHTTPRouteMatch(r, idx(fld(p, "matches"), i), &rule.Matches[i])
	}
	checkHTTPFilters(r, fld(p, "filters"), rule.Filters, rule.Matches)
	if len(rule.BackendRefs) > 0 && slices.ContainsFunc(rule.Filters, func(f gatewayv1.HTTPRouteFilter) bool {
		return f.Type == gatewayv1.HTTPRouteFilterRequestRedirect
	}) {
		r.Errorf(fld(p, "backendRefs"), "a rule with a RequestRedirect filter answers itself and must not have backendRefs")
	}
	if len(rule.BackendRefs) > maxRuleBackends {
		r.Errorf(fld(p, "backendRefs"), "at most %d backendRefs are allowed, not %d", maxRuleBackends, len(rule.BackendRefs))
	}
	weights := make([]*int32, len(rule.BackendRefs))
	for i, b := range rule.BackendRefs {
		bp := idx(fld(p, "backendRefs"), i)
		checkBackendRef(r, bp, b.BackendRef)
		checkHTTPFilters(r, fld(bp, "filters"), b.Filters, rule.Matches)
		weights[i] = b.Weight
	}
	warnZeroWeights(r, fld(p, "backendRefs"), weights)
	checkHTTPTimeouts(r, fld(p, "timeouts"), rule.Timeouts)
	checkHTTPRetry(r, fld(p, "retry"), rule.Retry)
	checkSessionPersistence(r, fld(p, "sessionPersistence"), rule.SessionPersistence)
}

// checkHTTPRouteMatch checks one match of an HTTPRoute rule.
func checkHTTPRouteMatch(r *Result, p string, m *gatewayv1.HTTPRouteMatch) {
	if m.Path != nil {
		checkHTTPPathMatch(r, fld(p, "path"), m.Path)
	}
	if len(m.Headers) > maxHeaderMatches {
		r.Errorf(fld(p, "headers"), "at most %d header matches are allowed, not %d", maxHeaderMatches, len(m.Headers))
	}
	seen := map[string]int{}
	for i, h := range m.Headers {
		hp := idx(fld(p, "headers"), i)
		checkHeaderName(r, fld(hp, "name"), string(h.Name))
		checkValueMatch(r, hp, h.Type, h.Value)
		lower := strings.ToLower(string(h.Name))
		if j, dup := seen[lower]; dup {
			r.Warnf(fld(hp, "name"), "header %q is already matched by headers[%d]; only the first match of a header is used", h.Name, j)
		} else {
			seen[lower] = i
		}
	}
	if len(m.QueryParams) > maxHeaderMatches {
		r.Errorf(fld(p, "queryParams"), "at most %d query parameter matches are allowed, not %d", maxHeaderMatches, len(m.QueryParams))
	}
	seenParams := map[string]int{}
	for i, q := range m.QueryParams {
		qp := idx(fld(p, "queryParams"), i)
		checkHeaderName(r, fld(qp, "name"), string(q.Name))
		checkValueMatch(r, qp, q.Type, q.Value)
		if j, dup := seenParams[string(q.Name)]; dup {
			r.Warnf(fld(qp, "name"), "query parameter %q is already matched by queryParams[%d]; only the first match is used", q.Name, j)
		} else {
			seenParams[string(q.Name)] = i
		}
	}
	if m.Method != nil {
		checkHTTPMethod(r, fld(p, "method"), string(*m.Method), false)
	}
}

// httpMethods are the methods an HTTPRoute can match on.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}

// checkHTTPMethod checks an HTTP method ("*" only where allowed).
func checkHTTPMethod(r *Result, p, method string, wildcard bool) {
	if !slices.Contains(httpMethods, method) && !(wildcard && method == "*") {
		r.Errorf(p, "method %q must be one of %s", method, strings.Join(httpMethods, ", "))
	}
}

// checkValueMatch checks an Exact or RegularExpression match of a header
// or query parameter value.
func checkValueMatch[T ~string](r *Result, p string, typ *T, value string) {
	t := "Exact"
	if typ != nil {
		t = string(*typ)
	}
	switch t {
	case "Exact":
	case "RegularExpression":
		checkRegex(r, fld(p, "value"), value)
	default:
		r.Errorf(fld(p, "type"), "match type %q must be Exact or RegularExpression", t)
	}
	if len(value) > 4096 {
		r.Errorf(fld(p, "value"), "value is %d characters long; at most 4096 are allowed", len(value))
	}
}

// checkHTTPPathMatch checks a path match: Exact and PathPrefix values are
// clean absolute paths, RegularExpression values compile.
func checkHTTPPathMatch(r *Result, p string, m *gatewayv1.HTTPPathMatch) {
	typ, value := gatewayv1.PathMatchPathPrefix, "/"
	if m.Type != nil {
		typ = *m.Type
	}
	if m.Value != nil {
		value = *m.Value
	}
	if len(value) > maxPathLength {
		r.Errorf(fld(p, "value"), "path is %d characters long; at most %d are allowed", len(value), maxPathLength)
		return
	}
	switch typ {
	case gatewayv1.PathMatchExact, gatewayv1.PathMatchPathPrefix:
		checkHTTPPathValue(r, fld(p, "value"), value, string(typ))
	case gatewayv1.PathMatchRegularExpression:
		checkRegex(r, fld(p, "value"), value)
	default:
		r.Errorf(fld(p, "type"), "path match type %q must be Exact, PathPrefix or RegularExpression", typ)
	}
}

// checkHTTPPathValue checks an Exact or PathPrefix path.
func checkHTTPPathValue(r *Result, p, value, typ string) {
	if !strings.HasPrefix(value, "/") {
		r.Errorf(p, "%s path %q must be an absolute path starting with \"/\"", typ, value)
		return
	}
	for _, bad := range []string{"//", "/./", "/../", "%2f", "%2F", "#"} {
		if strings.Contains(value, bad) {
			r.Errorf(p, "%s path %q must not contain %q", typ, value, bad)
			return
		}
	}
	if strings.HasSuffix(value, "/..") || strings.HasSuffix(value, "/.") {
		r.Errorf(p, "%s path %q must not end with \"/.\" or \"/..\"", typ, value)
		return
	}
	if !gwPathChars.MatchString(value) {
		r.Errorf(p, "%s path %q has characters a path cannot hold; percent-encode them", typ, value)
	}
}

// HTTPRoute filters.

// uniqueHTTPFilters are the filter types a rule may have at most once.
var uniqueHTTPFilters = []gatewayv1.HTTPRouteFilterType{
	gatewayv1.HTTPRouteFilterRequestHeaderModifier, gatewayv1.HTTPRouteFilterResponseHeaderModifier,
	gatewayv1.HTTPRouteFilterRequestRedirect, gatewayv1.HTTPRouteFilterURLRewrite, gatewayv1.HTTPRouteFilterCORS,
}

// checkHTTPFilters checks the filters of a rule or backend reference.
func checkHTTPFilters(r *Result, p string, filters []gatewayv1.HTTPRouteFilter, matches []gatewayv1.HTTPRouteMatch) {
	if len(filters) > maxRuleFilters {
		r.Errorf(p, "at most %d filters are allowed, not %d", maxRuleFilters, len(filters))
	}
	first := map[gatewayv1.HTTPRouteFilterType]int{}
	for i := range filters {
		f := &filters[i]
		fp := idx(p, i)
		if j, dup := first[f.Type]; dup && slices.Contains(uniqueHTTPFilters, f.Type) {
			r.Errorf(fld(fp, "type"), "%s is already applied by filters[%d]; each %s filter may appear only once", f.Type, j, f.Type)
		} else if !dup {
			first[f.Type] = i
		}
		checkHTTPFilter(r, fp, f, matches)
	}
	_, redirect := first[gatewayv1.HTTPRouteFilterRequestRedirect]
	if j, rewrite := first[gatewayv1.HTTPRouteFilterURLRewrite]; redirect && rewrite {
		r.Errorf(fld(idx(p, j), "type"), "RequestRedirect and URLRewrite filters are mutually exclusive")
	}
}

// httpFilterFields pairs each filter type with whether its field is set.
func httpFilterFields(f *gatewayv1.HTTPRouteFilter) []struct {
	typ   gatewayv1.HTTPRouteFilterType
	field string
	set   bool
} {
	return []struct {
		typ   gatewayv1.HTTPRouteFilterType
		field string
		set   bool
	}{
		{gatewayv1.HTTPRouteFilterRequestHeaderModifier, "requestHeaderModifier", f.RequestHeaderModifier != nil},
		{gatewayv1.HTTPRouteFilterResponseHeaderModifier, "responseHeaderModifier", f.ResponseHeaderModifier != nil},
		{gatewayv1.HTTPRouteFilterRequestMirror, "requestMirror", f.RequestMirror != nil},
		{gatewayv1.HTTPRouteFilterRequestRedirect, "requestRedirect", f.RequestRedirect != nil},
		{gatewayv1.HTTPRouteFilterURLRewrite, "urlRewrite", f.URLRewrite != nil},
		{gatewayv1.HTTPRouteFilterCORS, "cors", f.CORS != nil},
		{gatewayv1.HTTPRouteFilterExternalAuth, "externalAuth", f.ExternalAuth != nil},
		{gatewayv1.HTTPRouteFilterExtensionRef, "extensionRef", f.ExtensionRef != nil},
	}
}

// checkHTTPFilter checks one filter: a known type, exactly the field of
// that type set, and that field well formed.
func checkHTTPFilter(r *Result, p string, f *gatewayv1.HTTPRouteFilter, matches []gatewayv1.HTTPRouteMatch) {
	known := false
	for _, ff := range httpFilterFields(f) {
		switch {
		case ff.typ == f.Type:
			known = true
			if !ff.set {
				r.Errorf(fld(p, ff.field), "a %s filter needs %s", f.Type, ff.field)
			}
		case ff.set:
			r.Errorf(fld(p, ff.field), "%s is only allowed in a %s filter, not in a %q filter", ff.field, ff.typ, f.Type)
		}
	}
	if !known {
		r.Errorf(fld(p, "type"), "unknown filter type %q; use RequestHeaderModifier, ResponseHeaderModifier, RequestMirror, RequestRedirect, URLRewrite, CORS, ExternalAuth or ExtensionRef", f.Type)
	}
	checkHeaderFilter(r, fld(p, "requestHeaderModifier"), f.RequestHeaderModifier)
	checkHeaderFilter(r, fld(p, "responseHeaderModifier"), f.ResponseHeaderModifier)
	checkMirrorFilter(r, fld(p, "requestMirror"), f.RequestMirror)
	checkRedirectFilter(r, fld(p, "requestRedirect"), f.RequestRedirect, matches)
	checkURLRewriteFilter(r, fld(p, "urlRewrite"), f.URLRewrite, matches)
	checkCORSFilter(r, fld(p, "cors"), f.CORS)
	checkExternalAuthFilter(r, fld(p, "externalAuth"), f.ExternalAuth)
	checkExtensionRef(r, fld(p, "extensionRef"), f.ExtensionRef)
}

// checkHeaderFilter checks a header modifier: valid names, no header set
// or added twice, none removed twice.
func checkHeaderFilter(r *Result, p string, h *gatewayv1.HTTPHeaderFilter) {
	if h == nil {
		return
	}
	for _, list := range []struct {
		name    string
		headers []gatewayv1.HTTPHeader
	}{{"set", h.Set}, {"add", h.Add}} {
		lp := fld(p, list.name)
		if len(list.headers) > maxHeaderModifiers {
			r.Errorf(lp, "at most %d headers are allowed, not %d", maxHeaderModifiers, len(list.headers))
		}
		seen := map[string]int{}
		for i, hd := range list.headers {
			hp := idx(lp, i)
			checkHeaderName(r, fld(hp, "name"), string(hd.Name))
			if j, dup := seen[strings.ToLower(string(hd.Name))]; dup {
				r.Errorf(fld(hp, "name"), "header %q is already in %s[%d]; list each header once", hd.Name, list.name, j)
			} else {
				seen[strings.ToLower(string(hd.Name))] = i
			}
			if len(hd.Value) > 4096 {
				r.Errorf(fld(hp, "value"), "value is %d characters long; at most 4096 are allowed", len(hd.Value))
			}
		}
	}
	if len(h.Remove) > maxHeaderModifiers {
		r.Errorf(fld(p, "remove"), "at most %d headers are allowed, not %d", maxHeaderModifiers, len(h.Remove))
	}
	seen := map[string]int{}
	for i, name := range h.Remove {
		rp := idx(fld(p, "remove"), i)
		checkHeaderName(r, rp, name)
		if j, dup := seen[strings.ToLower(name)]; dup {
			r.Errorf(rp, "header %q is already in remove[%d]", name, j)
		} else {
			seen[strings.ToLower(name)] = i
		}
	}
}

// checkMirrorFilter checks a request mirror: a backend, and a percent or a
// fraction, not both.
func checkMirrorFilter(r *Result, p string, m *gatewayv1.HTTPRequestMirrorFilter) {
	if m == nil {
		return
	}
	checkBackendObjectRef(r, fld(p, "backendRef"), m.BackendRef)
	if m.Percent != nil && m.Fraction != nil {
		r.Errorf(fld(p, "fraction"), "percent and fraction are mutually exclusive")
	}
	if m.Percent != nil && (*m.Percent < 0 || *m.Percent > 100) {
		r.Errorf(fld(p, "percent"), "percent %d is out of range; it must be 0..100", *m.Percent)
	}
	if f := m.Fraction; f != nil {
		denominator := int32(100)
		if f.Denominator != nil {
			denominator = *f.Denominator
		}
		switch {
		case f.Numerator < 0:
			r.Errorf(fld(p, "fraction.numerator"), "numerator %d is negative", f.Numerator)
		case denominator < 1:
			r.Errorf(fld(p, "fraction.denominator"), "denominator %d must be at least 1", denominator)
		case f.Numerator > denominator:
			r.Errorf(fld(p, "fraction.numerator"), "numerator %d is larger than denominator %d", f.Numerator, denominator)
		}
	}
}

// redirectStatusCodes are the status codes of a RequestRedirect.
var redirectStatusCodes = []int{301, 302, 303, 307, 308}

// checkRedirectFilter checks a RequestRedirect filter.
func checkRedirectFilter(r *Result, p string, rd *gatewayv1.HTTPRequestRedirectFilter, matches []gatewayv1.HTTPRouteMatch) {
	if rd == nil {
		return
	}
	if rd.Scheme != nil && *rd.Scheme != "http" && *rd.Scheme != "https" {
		r.Errorf(fld(p, "scheme"), `scheme %q must be "http" or "https"`, *rd.Scheme)
	}
	if rd.Hostname != nil {
		if msg := gatewayHostnameError(string(*rd.Hostname), false); msg != "" {
			r.Errorf(fld(p, "hostname"), "%s", msg)
		}
	}
	checkPathModifier(r, fld(p, "path"), rd.Path, matches)
	if rd.Port != nil {
		checkPort(r, fld(p, "port"), *rd.Port)
	}
	if rd.StatusCode != nil && !slices.Contains(redirectStatusCodes, *rd.StatusCode) {
		r.Errorf(fld(p, "statusCode"), "status code %d must be 301, 302, 303, 307 or 308", *rd.StatusCode)
	}
}

// checkURLRewriteFilter checks a URLRewrite filter.
func checkURLRewriteFilter(r *Result, p string, rw *gatewayv1.HTTPURLRewriteFilter, matches []gatewayv1.HTTPRouteMatch) {
	if rw == nil {
		return
	}
	if rw.Hostname != nil {
		if msg := gatewayHostnameError(string(*rw.Hostname), false); msg != "" {
			r.Errorf(fld(p, "hostname"), "%s", msg)
		}
	}
	checkPathModifier(r, fld(p, "path"), rw.Path, matches)
}

// checkPathModifier checks a path modifier: the field of its type, and
// ReplacePrefixMatch only on a rule with exactly one PathPrefix match.
func checkPathModifier(r *Result, p string, m *gatewayv1.HTTPPathModifier, matches []gatewayv1.HTTPRouteMatch) {
	if m == nil {
		return
	}
	switch m.Type {
	case gatewayv1.FullPathHTTPPathModifier:
		if m.ReplaceFullPath == nil {
			r.Errorf(fld(p, "replaceFullPath"), "type ReplaceFullPath needs replaceFullPath")
		}
		if m.ReplacePrefixMatch != nil {
			r.Errorf(fld(p, "replacePrefixMatch"), "replacePrefixMatch needs type ReplacePrefixMatch")
		}
	case gatewayv1.PrefixMatchHTTPPathModifier:
		if m.ReplacePrefixMatch == nil {
			r.Errorf(fld(p, "replacePrefixMatch"), "type ReplacePrefixMatch needs replacePrefixMatch")
		}
		if m.ReplaceFullPath != nil {
			r.Errorf(fld(p, "replaceFullPath"), "replaceFullPath needs type ReplaceFullPath")
		}
		if !singlePrefixMatch(matches) {
			r.Errorf(fld(p, "type"), "ReplacePrefixMatch needs the rule to have exactly one match, of type PathPrefix")
		}
	default:
		r.Errorf(fld(p, "type"), "path modifier type %q must be ReplaceFullPath or ReplacePrefixMatch", m.Type)
	}
	for _, v := range []*string{m.ReplaceFullPath, m.ReplacePrefixMatch} {
		if v != nil && len(*v) > maxPathLength {
			r.Errorf(p, "path is %d characters long; at most %d are allowed", len(*v), maxPathLength)
		}
	}
}

// singlePrefixMatch reports a rule with exactly one match, on a path
// prefix (no matches at all is the default match: the prefix "/").
func singlePrefixMatch(matches []gatewayv1.HTTPRouteMatch) bool {
	switch len(matches) {
	case 0:
		return true
	case 1:
		path := matches[0].Path
		return path == nil || path.Type == nil || *path.Type == gatewayv1.PathMatchPathPrefix
	}
	return false
}

// checkCORSFilter checks a CORS filter: origins, methods and headers,
// with "*" only alone.
func checkCORSFilter(r *Result, p string, c *gatewayv1.HTTPCORSFilter) {
	if c == nil {
		return
	}
	checkWildcardAlone(r, fld(p, "allowOrigins"), c.AllowOrigins, 64)
	for i, o := range c.AllowOrigins {
		if !gwCORSOrigin.MatchString(string(o)) {
			r.Errorf(idx(fld(p, "allowOrigins"), i), "origin %q must be \"*\" or scheme://host[:port], such as https://*.example.com", o)
		}
	}
	checkWildcardAlone(r, fld(p, "allowMethods"), c.AllowMethods, 9)
	for i, m := range c.AllowMethods {
		checkHTTPMethod(r, idx(fld(p, "allowMethods"), i), string(m), true)
	}
	checkWildcardAlone(r, fld(p, "allowHeaders"), c.AllowHeaders, 64)
	for i, h := range c.AllowHeaders {
		checkHeaderName(r, idx(fld(p, "allowHeaders"), i), string(h))
	}
	checkWildcardAlone(r, fld(p, "exposeHeaders"), c.ExposeHeaders, 64)
	for i, h := range c.ExposeHeaders {
		checkHeaderName(r, idx(fld(p, "exposeHeaders"), i), string(h))
	}
	if c.MaxAge < 0 {
		r.Errorf(fld(p, "maxAge"), "maxAge %d is negative; it is a number of seconds, at least 1", c.MaxAge)
	}
}

// checkWildcardAlone checks a list holds at most limit entries and "*"
// only alone.
func checkWildcardAlone[S ~string](r *Result, p string, list []S, limit int) {
	if len(list) > limit {
		r.Errorf(p, "at most %d entries are allowed, not %d", limit, len(list))
	}
	if len(list) > 1 && slices.Contains(list, "*") {
		r.Errorf(p, `"*" must be the only entry when present`)
	}
}

// checkExternalAuthFilter checks an ExternalAuth filter: the protocol with
// its settings, and the backend.
func checkExternalAuthFilter(r *Result, p string, a *gatewayv1.HTTPExternalAuthFilter) {
	if a == nil {
		return
	}
	switch a.ExternalAuthProtocol {
	case gatewayv1.HTTPRouteExternalAuthGRPCProtocol:
		if a.GRPCAuthConfig == nil {
			r.Errorf(fld(p, "grpc"), "protocol GRPC needs grpc settings")
		}
		if a.HTTPAuthConfig != nil {
			r.Errorf(fld(p, "http"), "http settings need protocol HTTP")
		}
	case gatewayv1.HTTPRouteExternalAuthHTTPProtocol:
		if a.HTTPAuthConfig == nil {
			r.Errorf(fld(p, "http"), "protocol HTTP needs http settings")
		}
		if a.GRPCAuthConfig != nil {
			r.Errorf(fld(p, "grpc"), "grpc settings need protocol GRPC")
		}
	default:
		r.Errorf(fld(p, "protocol"), "protocol %q must be GRPC or HTTP", a.ExternalAuthProtocol)
	}
	checkBackendObjectRef(r, fld(p, "backendRef"), a.BackendRef)
	if h := a.HTTPAuthConfig; h != nil && h.Path != "" && !gwPathChars.MatchString(h.Path) {
		r.Errorf(fld(p, "http.path"), "path %q has characters a path cannot hold; percent-encode them", h.Path)
	}
}

// checkExtensionRef checks a filter's reference to an extension.
func checkExtensionRef(r *Result, p string, ref *gatewayv1.LocalObjectReference) {
	if ref == nil {
		return
	}
	checkGroup(r, fld(p, "group"), string(ref.Group))
	checkKind(r, fld(p, "kind"), string(ref.Kind))
	checkObjectName(r, fld(p, "name"), ref.Name)
}

// checkHTTPTimeouts checks rule timeouts: valid durations, and a backend
// request timeout within the request timeout (unless that is 0, none).
func checkHTTPTimeouts(r *Result, p string, t *gatewayv1.HTTPRouteTimeouts) {
	if t == nil {
		return
	}
	request := checkGatewayDuration(r, fld(p, "request"), t.Request)
	backend := checkGatewayDuration(r, fld(p, "backendRequest"), t.BackendRequest)
	if t.Request != nil && t.BackendRequest != nil && request != 0 && backend > request {
		r.Errorf(fld(p, "backendRequest"), "backendRequest timeout %s is longer than the request timeout %s; it must be at most the request timeout", *t.BackendRequest, *t.Request)
	}
}

// checkHTTPRetry checks a retry policy.
func checkHTTPRetry(r *Result, p string, rt *gatewayv1.HTTPRouteRetry) {
	if rt == nil {
		return
	}
	for i, code := range rt.Codes {
		if code < 400 || code > 599 {
			r.Errorf(idx(fld(p, "codes"), i), "retry status code %d is out of range; it must be 400..599", code)
		}
	}
	if a := rt.Attempts; a != nil {
		switch {
		case *a < 0:
			r.Errorf(fld(p, "attempts"), "attempts %d is negative", *a)
		case *a == 0:
			r.Warnf(fld(p, "attempts"), "attempts 0 disables retries; the schema asks for at least 1 (remove retry instead)")
		}
	}
	checkGatewayDuration(r, fld(p, "backoff"), rt.Backoff)
}

// checkSessionPersistence checks session persistence settings.
func checkSessionPersistence(r *Result, p string, s *gatewayv1.SessionPersistence) {
	if s == nil {
		return
	}
	if s.SessionName != nil && len(*s.SessionName) > 128 {
		r.Errorf(fld(p, "sessionName"), "sessionName is %d characters long; at most 128 are allowed", len(*s.SessionName))
	}
	checkGatewayDuration(r, fld(p, "absoluteTimeout"), s.AbsoluteTimeout)
	typ := gatewayv1.CookieBasedSessionPersistence
	if s.Type != nil {
		typ = *s.Type
	}
	switch typ {
	case gatewayv1.CookieBasedSessionPersistence, gatewayv1.HeaderBasedSessionPersistence:
	default:
		r.Errorf(fld(p, "type"), "session persistence type %q must be Cookie or Header", typ)
	}
	if cc := s.CookieConfig; cc != nil {
		if typ != gatewayv1.CookieBasedSessionPersistence {
			r.Errorf(fld(p, "cookieConfig"), "cookieConfig needs type Cookie")
		}
		if lt := cc.LifetimeType; lt != nil {
			switch *lt {
			case gatewayv1.SessionCookieLifetimeType:
			case gatewayv1.PermanentCookieLifetimeType:
				if s.AbsoluteTimeout == nil {
					r.Errorf(fld(p, "absoluteTimeout"), "a Permanent cookie needs absoluteTimeout")
				}
			default:
				r.Errorf(fld(p, "cookieConfig.lifetimeType"), "lifetimeType %q must be Session or Permanent", *lt)
			}
		}
	}
}

// GRPCRoute.

// GRPCRoute validates a Gateway API GRPCRoute: parent references,
// hostnames, and every rule: method matches (service and method names, or
// regexes that compile), header matches, filters and backends.
func GRPCRoute(c config.Config) Result {
	return validateSpec(c, "GRPCRoute", namespacedMeta, checkGRPCRouteSpec)
}

// checkGRPCRouteSpec checks the spec of a GRPCRoute (see GRPCRoute).
func checkGRPCRouteSpec(c config.Config, spec *gatewayv1.GRPCRouteSpec, r *Result) {
	checkParentRefs(r, "spec.parentRefs", spec.ParentRefs, c.Namespace)
	checkDefaultGateways(r, "spec.useDefaultGateways", spec.UseDefaultGateways)
	checkHostnames(r, "spec.hostnames", spec.Hostnames, maxRouteHostnames)
	if len(spec.Rules) > maxRouteRules {
		r.Errorf("spec.rules", "at most %d rules are allowed, not %d", maxRouteRules, len(spec.Rules))
	}
	checkRouteRuleNames(r, "spec.rules", ruleNames(spec.Rules, func(rule gatewayv1.GRPCRouteRule) *gatewayv1.SectionName { return rule.Name }))
	total := 0
	for i := range spec.Rules {
		total += len(spec.Rules[i].Matches)
		checkGRPCRouteRule(r, idx("spec.rules", i), &spec.Rules[i])
	}
	if total > maxTotalMatches {
		r.Errorf("spec.rules", "the rules have %d matches in all; at most %d are allowed", total, maxTotalMatches)
	}
}

// checkGRPCRouteRule checks one rule of a GRPCRoute.
func checkGRPCRouteRule(r *Result, p string, rule *gatewayv1.GRPCRouteRule) {
	if len(rule.Matches) > maxRuleMatches {
		r.Errorf(fld(p, "matches"), "at most %d matches are allowed, not %d", maxRuleMatches, len(rule.Matches))
	}
	for i, m := range rule.Matches {
		mp := idx(fld(p, "matches"), i)
		checkGRPCMethodMatch(r, fld(mp, "method"), m.Method)
		if len(m.Headers) > maxHeaderMatches {
			r.Errorf(fld(mp, "headers"), "at most %d header matches are allowed, not %d", maxHeaderMatches, len(m.Headers))
		}
		for j, h := range m.Headers {
			hp := idx(fld(mp, "headers"), j)
			checkHeaderName(r, fld(hp, "name"), string(h.Name))
			checkValueMatch(r, hp, h.Type, h.Value)
		}
	}
	checkGRPCFilters(r, fld(p, "filters"), rule.Filters)
	if len(rule.BackendRefs) > maxRuleBackends {
		r.Errorf(fld(p, "backendRefs"), "at most %d backendRefs are allowed, not %d", maxRuleBackends, len(rule.BackendRefs))
	}
	weights := make([]*int32, len(rule.BackendRefs))
	for i, b := range rule.BackendRefs {
		bp := idx(fld(p, "backendRefs"), i)
		checkBackendRef(r, bp, b.BackendRef)
		checkGRPCFilters(r, fld(bp, "filters"), b.Filters)
		weights[i] = b.Weight
	}
	warnZeroWeights(r, fld(p, "backendRefs"), weights)
	checkSessionPersistence(r, fld(p, "sessionPersistence"), rule.SessionPersistence)
}

// checkGRPCMethodMatch checks a method match: with type Exact, a valid
// service and/or method name; with RegularExpression, regexes that
// compile.
func checkGRPCMethodMatch(r *Result, p string, m *gatewayv1.GRPCMethodMatch) {
	if m == nil {
		return
	}
	if (m.Service == nil || *m.Service == "") && (m.Method == nil || *m.Method == "") {
		r.Errorf(p, "a method match needs service, method or both")
	}
	typ := gatewayv1.GRPCMethodMatchExact
	if m.Type != nil {
		typ = *m.Type
	}
	for _, f := range []struct {
		name  string
		value *string
		form  *regexp.Regexp
		rule  string
	}{
		{"service", m.Service, grpcServiceName, "dot-separated parts of letters, digits and '_', such as foo.bar.v1.Greeter"},
		{"method", m.Method, grpcMethodName, "letters, digits and '_', not starting with a digit, such as SayHello"},
	} {
		if f.value == nil || *f.value == "" {
			continue
		}
		fp := fld(p, f.name)
		switch {
		case len(*f.value) > 1024:
			r.Errorf(fp, "%s is %d characters long; at most 1024 are allowed", f.name, len(*f.value))
		case typ == gatewayv1.GRPCMethodMatchExact:
			if !f.form.MatchString(*f.value) {
				r.Errorf(fp, "%s %q is not a valid gRPC %s name: %s", f.name, *f.value, f.name, f.rule)
			}
		case typ == gatewayv1.GRPCMethodMatchRegularExpression:
			checkRegex(r, fp, *f.value)
		}
	}
	if typ != gatewayv1.GRPCMethodMatchExact && typ != gatewayv1.GRPCMethodMatchRegularExpression {
		r.Errorf(fld(p, "type"), "method match type %q must be Exact or RegularExpression", typ)
	}
}

// checkGRPCFilters checks the filters of a GRPCRoute rule or backend.
func checkGRPCFilters(r *Result, p string, filters []gatewayv1.GRPCRouteFilter) {
	if len(filters) > maxRuleFilters {
		r.Errorf(p, "at most %d filters are allowed, not %d", maxRuleFilters, len(filters))
	}
	first := map[gatewayv1.GRPCRouteFilterType]int{}
	for i := range filters {
		f := &filters[i]
		fp := idx(p, i)
		unique := f.Type == gatewayv1.GRPCRouteFilterRequestHeaderModifier || f.Type == gatewayv1.GRPCRouteFilterResponseHeaderModifier
		if j, dup := first[f.Type]; dup && unique {
			r.Errorf(fld(fp, "type"), "%s is already applied by filters[%d]; each %s filter may appear only once", f.Type, j, f.Type)
		} else if !dup {
			first[f.Type] = i
		}
		checkGRPCFilter(r, fp, f)
	}
}

// checkGRPCFilter checks one GRPCRoute filter.
func checkGRPCFilter(r *Result, p string, f *gatewayv1.GRPCRouteFilter) {
	fields := []struct {
		typ   gatewayv1.GRPCRouteFilterType
		field string
		set   bool
	}{
		{gatewayv1.GRPCRouteFilterRequestHeaderModifier, "requestHeaderModifier", f.RequestHeaderModifier != nil},
		{gatewayv1.GRPCRouteFilterResponseHeaderModifier, "responseHeaderModifier", f.ResponseHeaderModifier != nil},
		{gatewayv1.GRPCRouteFilterRequestMirror, "requestMirror", f.RequestMirror != nil},
		{gatewayv1.GRPCRouteFilterExtensionRef, "extensionRef", f.ExtensionRef != nil},
	}
	known := false
	for _, ff := range fields {
		switch {
		case ff.typ == f.Type:
			known = true
			if !ff.set {
				r.Errorf(fld(p, ff.field), "a %s filter needs %s", f.Type, ff.field)
			}
		case ff.set:
			r.Errorf(fld(p, ff.field), "%s is only allowed in a %s filter, not in a %q filter", ff.field, ff.typ, f.Type)
		}
	}
	if !known {
		r.Errorf(fld(p, "type"), "unknown filter type %q; use RequestHeaderModifier, ResponseHeaderModifier, RequestMirror or ExtensionRef", f.Type)
	}
	checkHeaderFilter(r, fld(p, "requestHeaderModifier"), f.RequestHeaderModifier)
	checkHeaderFilter(r, fld(p, "responseHeaderModifier"), f.ResponseHeaderModifier)
	checkMirrorFilter(r, fld(p, "requestMirror"), f.RequestMirror)
	checkExtensionRef(r, fld(p, "extensionRef"), f.ExtensionRef)
}

// TCPRoute and TLSRoute.

// TCPRoute validates a Gateway API TCPRoute: parent references, and rules
// that each have backends.
func TCPRoute(c config.Config) Result {
	return validateSpec(c, "TCPRoute", namespacedMeta, func(c config.Config, spec *gatewayv1.TCPRouteSpec, r *Result) {
		checkParentRefs(r, "spec.parentRefs", spec.ParentRefs, c.Namespace)
		checkDefaultGateways(r, "spec.useDefaultGateways", spec.UseDefaultGateways)
		rules := make([]l4Rule, len(spec.Rules))
		for i, rule := range spec.Rules {
			rules[i] = l4Rule{rule.Name, rule.BackendRefs}
		}
		checkL4Rules(r, "spec.rules", "TCPRoute", rules)
	})
}

// TLSRoute validates a Gateway API TLSRoute: parent references, hostnames
// (DNS names, wildcards only as the first label), and rules that each
// have backends.
func TLSRoute(c config.Config) Result {
	return validateSpec(c, "TLSRoute", namespacedMeta, func(c config.Config, spec *gatewayv1.TLSRouteSpec, r *Result) {
		checkParentRefs(r, "spec.parentRefs", spec.ParentRefs, c.Namespace)
		checkDefaultGateways(r, "spec.useDefaultGateways", spec.UseDefaultGateways)
		if len(spec.Hostnames) == 0 {
			r.Warnf("spec.hostnames", "no hostnames: the route matches every SNI name its listeners accept (the v1 API requires at least one)")
		}
		checkHostnames(r, "spec.hostnames", spec.Hostnames, maxTLSHostnames)
		rules := make([]l4Rule, len(spec.Rules))
		for i, rule := range spec.Rules {
			rules[i] = l4Rule{rule.Name, rule.BackendRefs}
		}
		checkL4Rules(r, "spec.rules", "TLSRoute", rules)
	})
}

// l4Rule is a rule of a TCPRoute or TLSRoute.
type l4Rule struct {
	name     *gatewayv1.SectionName
	backends []gatewayv1.BackendRef
}

// checkL4Rules checks the rules of a TCPRoute or TLSRoute: at least one,
// each with 1..16 backends.
func checkL4Rules(r *Result, p, kind string, rules []l4Rule) {
	switch {
	case len(rules) == 0:
		r.Errorf(p, "a %s needs a rule with backendRefs", kind)
	case len(rules) > 1:
		r.Warnf(p, "the v1 %s takes exactly one rule; put every backend in one rule", kind)
	}
	checkRouteRuleNames(r, p, ruleNames(rules, func(rule l4Rule) *gatewayv1.SectionName { return rule.name }))
	for i, rule := range rules {
		bp := fld(idx(p, i), "backendRefs")
		switch {
		case len(rule.backends) == 0:
			r.Errorf(bp, "a rule needs at least one backendRef")
		case len(rule.backends) > maxRuleBackends:
			r.Errorf(bp, "at most %d backendRefs are allowed, not %d", maxRuleBackends, len(rule.backends))
		}
		weights := make([]*int32, len(rule.backends))
		for j, b := range rule.backends {
			checkBackendRef(r, idx(bp, j), b)
			weights[j] = b.Weight
		}
		warnZeroWeights(r, bp, weights)
	}
}

// ReferenceGrant.

// ReferenceGrant validates a Gateway API ReferenceGrant: 1..16 from and to
// entries, each with a kind (and, for from, a namespace).
func ReferenceGrant(c config.Config) Result {
	return validateSpec(c, "ReferenceGrant", namespacedMeta, checkReferenceGrant)
}

// checkReferenceGrant checks the spec of a ReferenceGrant (see ReferenceGrant).
func checkReferenceGrant(_ config.Config, spec *gatewayv1.ReferenceGrantSpec, r *Result) {
	for _, l := range []struct {
		name string
		n    int
	}{{"from", len(spec.From)}, {"to", len(spec.To)}} {
		switch {
		case l.n == 0:
			r.Errorf(fld("spec", l.name), "a ReferenceGrant needs at least one %q entry", l.name)
		case l.n > maxRefs:
			r.Errorf(fld("spec", l.name), "at most %d %q entries are allowed, not %d", maxRefs, l.name, l.n)
		}
	}
	for i, f := range spec.From {
		p := idx("spec.from", i)
		checkGroup(r, fld(p, "group"), string(f.Group))
		checkKind(r, fld(p, "kind"), string(f.Kind))
		if f.Namespace == "" {
			r.Errorf(fld(p, "namespace"), "namespace is required")
		} else {
			checkNamespaceRef(r, fld(p, "namespace"), &f.Namespace)
		}
	}
	for i, t := range spec.To {
		p := idx("spec.to", i)
		checkGroup(r, fld(p, "group"), string(t.Group))
		checkKind(r, fld(p, "kind"), string(t.Kind))
		if t.Name != nil {
			checkObjectName(r, fld(p, "name"), *t.Name)
		}
	}
}

// Gateway (Gateway API).

// KubernetesGateway validates a Gateway API Gateway: the class name, and
// listeners that are unique by name and by (port, protocol, hostname),
// with valid hostnames, TLS settings that fit the protocol (Terminate with
// certificates for HTTPS, a mode for TLS, Passthrough only for TLS) and
// route kinds the protocol can carry; addresses and infrastructure.
func KubernetesGateway(c config.Config) Result {
	return validateSpec(c, "Gateway", namespacedMeta, checkKubernetesGateway)
}

// checkKubernetesGateway checks the spec of a Gateway API Gateway (see KubernetesGateway).
func checkKubernetesGateway(_ config.Config, spec *gatewayv1.GatewaySpec, r *Result) {
	if spec.GatewayClassName == "" {
		r.Errorf("spec.gatewayClassName", "gatewayClassName is required")
	} else {
		for _, msg := range k8svalidation.IsDNS1123Subdomain(string(spec.GatewayClassName)) {
			r.Errorf("spec.gatewayClassName", "gatewayClassName %q is not a valid name: %s", spec.GatewayClassName, msg)
		}
	}
	checkListeners(r, "spec.listeners", spec.Listeners)
	checkGatewayAddresses(r, "spec.addresses", spec.Addresses)
	checkInfrastructure(r, "spec.infrastructure", spec.Infrastructure)
	if al := spec.AllowedListeners; al != nil && al.Namespaces != nil {
		checkNamespacesFrom(r, "spec.allowedListeners.namespaces", al.Namespaces.From, al.Namespaces.Selector, false)
	}
	checkGatewayTLS(r, "spec.tls", spec.TLS)
	checkDefaultGateways(r, "spec.defaultScope", spec.DefaultScope)
}

// listenerKey identifies a listener by what must be unique.
type listenerKey struct {
	port     gatewayv1.PortNumber
	protocol gatewayv1.ProtocolType
	hostname string
}

// checkListeners checks the listeners and their uniqueness.
func checkListeners(r *Result, p string, listeners []gatewayv1.Listener) {
	switch {
	case len(listeners) == 0:
		r.Errorf(p, "a Gateway needs at least one listener")
	case len(listeners) > maxListeners:
		r.Errorf(p, "at most %d listeners are allowed, not %d", maxListeners, len(listeners))
	}
	names := map[gatewayv1.SectionName]int{}
	keys := map[listenerKey]int{}
	portProtocol := map[gatewayv1.PortNumber]int{}
	for i := range listeners {
		l := &listeners[i]
		lp := idx(p, i)
		checkListener(r, lp, l)
		if j, dup := names[l.Name]; dup {
			r.Errorf(fld(lp, "name"), "listener name %q is already used by listeners[%d]; names must be unique", l.Name, j)
		} else {
			names[l.Name] = i
		}
		k := listenerKey{port: l.Port, protocol: l.Protocol}
		if l.Hostname != nil {
			k.hostname = string(*l.Hostname)
		}
		if j, dup := keys[k]; dup {
			r.Errorf(lp, "listeners[%d] already has port %d, protocol %s and hostname %q; each combination must be unique", j, l.Port, l.Protocol, k.hostname)
		} else {
			keys[k] = i
		}
		if j, seen := portProtocol[l.Port]; seen && !compatibleProtocols(listeners[j].Protocol, l.Protocol) {
			r.Warnf(fld(lp, "protocol"), "port %d is already used with protocol %s by listeners[%d]; %s cannot share it, so the listeners conflict", l.Port, listeners[j].Protocol, j, l.Protocol)
		} else if !seen {
			portProtocol[l.Port] = i
		}
	}
}

// compatibleProtocols reports whether listeners of two protocols can share
// a port: the same protocol, HTTPS with TLS (told apart by SNI), or TCP
// with UDP (different transports).
func compatibleProtocols(a, b gatewayv1.ProtocolType) bool {
	if a == b {
		return true
	}
	pair := []gatewayv1.ProtocolType{a, b}
	slices.Sort(pair)
	return (pair[0] == gatewayv1.HTTPSProtocolType && pair[1] == gatewayv1.TLSProtocolType) ||
		(pair[0] == gatewayv1.TCPProtocolType && pair[1] == gatewayv1.UDPProtocolType)
}

// coreProtocols are the listener protocols of the Gateway API core.
var coreProtocols = []gatewayv1.ProtocolType{
	gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType, gatewayv1.TLSProtocolType,
	gatewayv1.TCPProtocolType, gatewayv1.UDPProtocolType,
}

// checkListener checks one listener.
func checkListener(r *Result, p string, l *gatewayv1.Listener) {
	checkSectionName(r, fld(p, "name"), string(l.Name))
	checkPort(r, fld(p, "port"), l.Port)
	proto := l.Protocol
	switch {
	case proto == "":
		r.Errorf(fld(p, "protocol"), "protocol is required: HTTP, HTTPS, TLS, TCP or UDP")
	case len(proto) > 255 || !gwProtocol.MatchString(string(proto)):
		r.Errorf(fld(p, "protocol"), "protocol %q is invalid: use HTTP, HTTPS, TLS, TCP, UDP or a domain-prefixed name", proto)
	case !slices.Contains(coreProtocols, proto) && proto != "HBONE" && !strings.Contains(string(proto), "/"):
		r.Warnf(fld(p, "protocol"), "protocol %q is not a Gateway API protocol; the listener will not be programmed", proto)
	}
	if l.Hostname != nil {
		if proto == gatewayv1.TCPProtocolType || proto == gatewayv1.UDPProtocolType {
			r.Errorf(fld(p, "hostname"), "protocol %s has no hostname to match; remove hostname", proto)
		} else if msg := gatewayHostnameError(string(*l.Hostname), true); msg != "" {
			r.Errorf(fld(p, "hostname"), "%s", msg)
		}
	}
	mode := checkListenerTLS(r, p, l)
	if ar := l.AllowedRoutes; ar != nil {
		if ar.Namespaces != nil {
			checkNamespacesFrom(r, fld(p, "allowedRoutes.namespaces"), ar.Namespaces.From, ar.Namespaces.Selector, true)
		}
		checkRouteKinds(r, fld(p, "allowedRoutes.kinds"), ar.Kinds, proto, mode)
	}
}

// checkListenerTLS checks the TLS settings fit the protocol and returns
// the TLS mode ("" without TLS).
func checkListenerTLS(r *Result, p string, l *gatewayv1.Listener) gatewayv1.TLSModeType {
	tp := fld(p, "tls")
	switch l.Protocol {
	case gatewayv1.HTTPProtocolType, gatewayv1.TCPProtocolType, gatewayv1.UDPProtocolType:
		if l.TLS != nil {
			r.Errorf(tp, "protocol %s does not use TLS; remove tls (use HTTPS or TLS to terminate)", l.Protocol)
		}
		return ""
	case gatewayv1.HTTPSProtocolType:
		if l.TLS == nil {
			r.Errorf(tp, "an HTTPS listener needs tls with certificateRefs")
			return ""
		}
		if l.TLS.Mode != nil && *l.TLS.Mode != gatewayv1.TLSModeTerminate {
			r.Errorf(fld(tp, "mode"), "an HTTPS listener terminates TLS; mode must be Terminate (Passthrough needs protocol TLS)")
		}
	case gatewayv1.TLSProtocolType:
		if l.TLS == nil || l.TLS.Mode == nil || *l.TLS.Mode == "" {
			r.Errorf(fld(tp, "mode"), "a TLS listener needs tls.mode: Terminate or Passthrough")
			if l.TLS == nil {
				return ""
			}
		}
	}
	if l.TLS == nil {
		return ""
	}
	mode := gatewayv1.TLSModeTerminate
	if l.TLS.Mode != nil && *l.TLS.Mode != "" {
		mode = *l.TLS.Mode
	}
	switch mode {
	case gatewayv1.TLSModeTerminate:
		if len(l.TLS.CertificateRefs) == 0 && len(l.TLS.Options) == 0 {
			r.Errorf(fld(tp, "certificateRefs"), "mode Terminate needs certificateRefs (or implementation options that provide certificates)")
		}
	case gatewayv1.TLSModePassthrough:
		if len(l.TLS.CertificateRefs) > 0 {
			r.Warnf(fld(tp, "certificateRefs"), "mode Passthrough does not terminate TLS; certificateRefs are ignored")
		}
	default:
		r.Errorf(fld(tp, "mode"), "TLS mode %q must be Terminate or Passthrough", mode)
	}
	checkCertificateRefs(r, fld(tp, "certificateRefs"), l.TLS.CertificateRefs)
	for _, k := range sortedKeys(l.TLS.Options) {
		checkAnnotationLikeKey(r, key(fld(tp, "options"), string(k)), string(k))
		if v := l.TLS.Options[k]; len(v) > 4096 {
			r.Errorf(key(fld(tp, "options"), string(k)), "value is %d characters long; at most 4096 are allowed", len(v))
		}
	}
	return mode
}

// checkAnnotationLikeKey checks a key of the form of annotation keys.
func checkAnnotationLikeKey(r *Result, p, k string) {
	if len(k) > 253 || !gwAnnotationKeyV.MatchString(k) {
		r.Errorf(p, "key %q must be an optional DNS subdomain prefix and '/', then a name of up to 63 characters", k)
	}
}

// checkCertificateRefs checks references to certificate secrets.
func checkCertificateRefs(r *Result, p string, refs []gatewayv1.SecretObjectReference) {
	if len(refs) > maxCertificateRefs {
		r.Errorf(p, "at most %d certificateRefs are allowed, not %d", maxCertificateRefs, len(refs))
	}
	for i, ref := range refs {
		rp := idx(p, i)
		checkObjectName(r, fld(rp, "name"), ref.Name)
		if ref.Group != nil {
			checkGroup(r, fld(rp, "group"), string(*ref.Group))
		}
		if ref.Kind != nil {
			checkKind(r, fld(rp, "kind"), string(*ref.Kind))
		}
		checkNamespaceRef(r, fld(rp, "namespace"), ref.Namespace)
	}
}

// checkNamespacesFrom checks where routes (or listener sets) may come
// from: a known value, and a valid selector exactly when it is Selector.
func checkNamespacesFrom(r *Result, p string, from *gatewayv1.FromNamespaces, sel *metav1.LabelSelector, noneAllowed bool) {
	f := gatewayv1.NamespacesFromSame
	if from != nil {
		f = *from
	}
	switch f {
	case gatewayv1.NamespacesFromAll, gatewayv1.NamespacesFromSame:
	case gatewayv1.NamespacesFromNone:
		if !noneAllowed {
			r.Errorf(fld(p, "from"), "from %q must be All, Selector or Same", f)
		}
	case gatewayv1.NamespacesFromSelector:
		if sel == nil {
			r.Errorf(fld(p, "selector"), "from Selector needs a selector")
		}
	default:
		r.Errorf(fld(p, "from"), "from %q must be All, Selector, Same or None", f)
	}
	if sel == nil {
		return
	}
	if f != gatewayv1.NamespacesFromSelector {
		r.Warnf(fld(p, "selector"), "selector is only used with from: Selector; it is ignored")
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		r.Errorf(fld(p, "selector"), "selector is invalid: %v", err)
	}
}

// RouteKindsFor returns the route kinds (of group gateway.networking.k8s.io)
// a listener of a protocol and TLS mode can carry: HTTPRoute and GRPCRoute
// on HTTP and HTTPS, TLSRoute on TLS (and TCPRoute when the gateway
// terminates TLS), TCPRoute on TCP, UDPRoute on UDP.
func RouteKindsFor(proto gatewayv1.ProtocolType, mode gatewayv1.TLSModeType) []string {
	switch proto {
	case gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType:
		return []string{"HTTPRoute", "GRPCRoute"}
	case gatewayv1.TLSProtocolType:
		if mode == gatewayv1.TLSModeTerminate {
			return []string{"TLSRoute", "TCPRoute"}
		}
		return []string{"TLSRoute"}
	case gatewayv1.TCPProtocolType:
		return []string{"TCPRoute"}
	case gatewayv1.UDPProtocolType:
		return []string{"UDPRoute"}
	}
	return nil
}

// checkRouteKinds checks the route kinds a listener allows. A kind the
// protocol cannot carry only earns a warning: the Gateway API reports it
// in the listener's status rather than rejecting the Gateway.
func checkRouteKinds(r *Result, p string, kinds []gatewayv1.RouteGroupKind, proto gatewayv1.ProtocolType, mode gatewayv1.TLSModeType) {
	if len(kinds) > maxRouteKinds {
		r.Errorf(p, "at most %d kinds are allowed, not %d", maxRouteKinds, len(kinds))
	}
	supported := RouteKindsFor(proto, mode)
	for i, k := range kinds {
		kp := idx(p, i)
		group := gatewayv1.GroupName
		if k.Group != nil {
			group = string(*k.Group)
			checkGroup(r, fld(kp, "group"), group)
		}
		checkKind(r, fld(kp, "kind"), string(k.Kind))
		if supported == nil || k.Kind == "" {
			continue
		}
		if group != gatewayv1.GroupName || !slices.Contains(supported, string(k.Kind)) {
			r.Warnf(kp, "a %s listener cannot carry %s routes (group %q); it carries %s", proto, k.Kind, group, strings.Join(supported, " and "))
		}
	}
}

// checkGatewayAddresses checks requested addresses: valid for their type,
// and no IP address or hostname twice.
func checkGatewayAddresses(r *Result, p string, addrs []gatewayv1.GatewaySpecAddress) {
	if len(addrs) > maxGatewayAddrs {
		r.Errorf(p, "at most %d addresses are allowed, not %d", maxGatewayAddrs, len(addrs))
	}
	seen := map[string]int{}
	for i, a := range addrs {
		ap := idx(p, i)
		typ := gatewayv1.IPAddressType
		if a.Type != nil {
			typ = *a.Type
		}
		switch typ {
		case gatewayv1.IPAddressType:
			if a.Value != "" && !isIP(a.Value) {
				r.Errorf(fld(ap, "value"), "%q is not an IP address", a.Value)
			}
		case gatewayv1.HostnameAddressType:
			if msg := gatewayHostnameError(a.Value, true); a.Value != "" && msg != "" {
				r.Errorf(fld(ap, "value"), "%s", msg)
			}
		case gatewayv1.NamedAddressType:
		default:
			if len(typ) > 253 || !gwPrefixedType.MatchString(string(typ)) {
				r.Errorf(fld(ap, "type"), "address type %q must be IPAddress, Hostname, NamedAddress or a domain-prefixed type", typ)
			}
		}
		if a.Value == "" || (typ != gatewayv1.IPAddressType && typ != gatewayv1.HostnameAddressType) {
			continue
		}
		k := string(typ) + "/" + a.Value
		if j, dup := seen[k]; dup {
			r.Errorf(fld(ap, "value"), "%s %q is already requested by addresses[%d]", typ, a.Value, j)
		} else {
			seen[k] = i
		}
	}
}

// checkInfrastructure checks the labels, annotations and parameters given
// to the resources that implement a Gateway.
func checkInfrastructure(r *Result, p string, in *gatewayv1.GatewayInfrastructure) {
	if in == nil {
		return
	}
	labels := make(map[string]string, len(in.Labels))
	for k, v := range in.Labels {
		labels[string(k)] = string(v)
	}
	checkLabels(r, fld(p, "labels"), labels)
	for _, k := range sortedKeys(in.Annotations) {
		checkAnnotationLikeKey(r, key(fld(p, "annotations"), string(k)), string(k))
	}
	if ref := in.ParametersRef; ref != nil {
		checkGroup(r, fld(p, "parametersRef.group"), string(ref.Group))
		checkKind(r, fld(p, "parametersRef.kind"), string(ref.Kind))
		checkObjectName(r, fld(p, "parametersRef.name"), ref.Name)
	}
}

// checkGatewayTLS checks the Gateway-wide TLS settings: per-port frontend
// settings on unique ports, with CA certificates where validation is
// asked for.
func checkGatewayTLS(r *Result, p string, t *gatewayv1.GatewayTLSConfig) {
	if t == nil {
		return
	}
	if b := t.Backend; b != nil && b.ClientCertificateRef != nil {
		checkCertificateRefs(r, fld(p, "backend.clientCertificateRef"), []gatewayv1.SecretObjectReference{*b.ClientCertificateRef})
	}
	f := t.Frontend
	if f == nil {
		return
	}
	checkFrontendValidation(r, fld(p, "frontend.default.validation"), f.Default.Validation)
	ports := map[gatewayv1.PortNumber]int{}
	for i, pp := range f.PerPort {
		ep := idx(fld(p, "frontend.perPort"), i)
		checkPort(r, fld(ep, "port"), pp.Port)
		if j, dup := ports[pp.Port]; dup {
			r.Errorf(fld(ep, "port"), "port %d already has settings in perPort[%d]", pp.Port, j)
		} else {
			ports[pp.Port] = i
		}
		checkFrontendValidation(r, fld(ep, "tls.validation"), pp.TLS.Validation)
	}
}

// checkFrontendValidation checks client certificate validation settings.
func checkFrontendValidation(r *Result, p string, v *gatewayv1.FrontendTLSValidation) {
	if v == nil {
		return
	}
	if len(v.CACertificateRefs) == 0 {
		r.Errorf(fld(p, "caCertificateRefs"), "client certificate validation needs caCertificateRefs")
	}
	for i, ref := range v.CACertificateRefs {
		rp := idx(fld(p, "caCertificateRefs"), i)
		checkGroup(r, fld(rp, "group"), string(ref.Group))
		checkKind(r, fld(rp, "kind"), string(ref.Kind))
		checkObjectName(r, fld(rp, "name"), ref.Name)
		checkNamespaceRef(r, fld(rp, "namespace"), ref.Namespace)
	}
	switch v.Mode {
	case "", gatewayv1.AllowValidOnly, gatewayv1.AllowInsecureFallback:
	default:
		r.Errorf(fld(p, "mode"), "mode %q must be AllowValidOnly or AllowInsecureFallback", v.Mode)
	}
}
