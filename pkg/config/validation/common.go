package validation

import (
	"fmt"
	"maps"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/apimachinery/pkg/api/validate/content"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshcp/meshcp/pkg/config"
)

// internalErrorPrefix starts the message of the error a validator reports
// when it panicked: the object is rejected rather than the process
// crashing, and the fuzz test looks for this prefix.
const internalErrorPrefix = "internal error: "

// Field paths. Paths are built as users write them:
// "spec.http[0].route[1].weight", "metadata.labels[app]".

// fld is the path of field name inside parent.
func fld(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// idx is the path of element i of the list at parent.
func idx(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// key is the path of the map entry k of the map at parent.
func key(parent, k string) string { return parent + "[" + k + "]" }

// sortedKeys returns the keys of m in order, so findings come out in a
// stable order whatever the map iteration order.
func sortedKeys[K interface{ ~string | ~uint32 }, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// nameRule says what form metadata.name must have.
type nameRule int

const (
	// nameSubdomain: a DNS-1123 subdomain, what most kinds require.
	nameSubdomain nameRule = iota
	// nameLabel: a DNS-1123 label (Namespaces; Istio Gateways, which are
	// referred to as "namespace/name").
	nameLabel
	// nameDNS1035: a DNS-1035 label, starting with a letter (Services).
	nameDNS1035
)

// metaRules are the metadata checks of one kind.
type metaRules struct {
	name          nameRule
	clusterScoped bool
}

var (
	namespacedMeta = metaRules{name: nameSubdomain}
	clusterMeta    = metaRules{name: nameSubdomain, clusterScoped: true}
)

// Meta checks the metadata every kind shares: the name is a DNS-1123
// subdomain, the namespace (when set) a DNS-1123 label, and labels and
// annotations have the keys and values Kubernetes accepts. Every validator
// of this package includes these checks (with a stricter name rule for the
// kinds that need one).
func Meta(c config.Config) Result {
	return checkMeta(c, namespacedMeta)
}

// checkMeta checks the metadata of c with the rules of its kind.
func checkMeta(c config.Config, rules metaRules) Result {
	var r Result
	checkName(&r, "metadata.name", c.Name, rules.name)
	switch {
	case c.Namespace == "":
	case rules.clusterScoped:
		r.Warnf("metadata.namespace", "%s is cluster-scoped; namespace %q is ignored", kindName(c), c.Namespace)
	default:
		for _, msg := range k8svalidation.IsDNS1123Label(c.Namespace) {
			r.Errorf("metadata.namespace", "namespace %q is not a valid DNS-1123 label: %s", c.Namespace, msg)
		}
	}
	checkLabels(&r, "metadata.labels", c.Labels)
	checkAnnotations(&r, "metadata.annotations", c.Annotations)
	return r
}

// kindName is the kind of c for messages, or "the object" when unknown.
func kindName(c config.Config) string {
	if c.GroupVersionKind.Kind == "" {
		return "the object"
	}
	return c.GroupVersionKind.Kind
}

// checkName checks a metadata.name against rule.
func checkName(r *Result, p, name string, rule nameRule) {
	if name == "" {
		r.Errorf(p, "name is required")
		return
	}
	var msgs []string
	var form string
	switch rule {
	case nameLabel:
		msgs, form = k8svalidation.IsDNS1123Label(name), "DNS-1123 label"
	case nameDNS1035:
		msgs, form = k8svalidation.IsDNS1035Label(name), "DNS-1035 label"
	default:
		msgs, form = k8svalidation.IsDNS1123Subdomain(name), "DNS-1123 subdomain"
	}
	for _, msg := range msgs {
		r.Errorf(p, "name %q is not a valid %s: %s", name, form, msg)
	}
}

// checkLabels checks the keys and values of a label map as Kubernetes does.
func checkLabels(r *Result, p string, labels map[string]string) {
	for _, k := range sortedKeys(labels) {
		checkLabelKey(r, key(p, k), k)
		for _, msg := range content.IsLabelValue(labels[k]) {
			r.Errorf(key(p, k), "label value %q is invalid: %s", labels[k], msg)
		}
	}
}

// checkLabelKey checks one label key (a qualified name, optionally with a
// DNS subdomain prefix).
func checkLabelKey(r *Result, p, k string) {
	for _, msg := range content.IsLabelKey(k) {
		r.Errorf(p, "label key %q is invalid: %s", k, msg)
	}
}

// maxAnnotationsSize is the most bytes of annotations (keys and values)
// Kubernetes stores on one object.
const maxAnnotationsSize = 256 * 1024

// checkAnnotations checks annotation keys and their total size as
// Kubernetes does.
func checkAnnotations(r *Result, p string, annotations map[string]string) {
	total := 0
	for _, k := range sortedKeys(annotations) {
		for _, msg := range content.IsLabelKey(strings.ToLower(k)) {
			r.Errorf(key(p, k), "annotation key %q is invalid: %s", k, msg)
		}
		total += len(k) + len(annotations[k])
	}
	if total > maxAnnotationsSize {
		r.Errorf(p, "annotations take %d bytes; they may take at most %d", total, maxAnnotationsSize)
	}
}

// checkSelectorLabels checks the labels of a workload selector: valid
// label keys and values, with no wildcard, which selectors do not support.
func checkSelectorLabels(r *Result, p string, labels map[string]string) {
	for _, k := range sortedKeys(labels) {
		v := labels[k]
		if strings.Contains(k, "*") || strings.Contains(v, "*") {
			r.Errorf(key(p, k), "wildcards are not supported in selectors: %q=%q", k, v)
			continue
		}
		if k == "" {
			r.Errorf(key(p, k), "selector label keys must not be empty")
			continue
		}
		checkLabelKey(r, key(p, k), k)
		for _, msg := range content.IsLabelValue(v) {
			r.Errorf(key(p, k), "label value %q is invalid: %s", v, msg)
		}
	}
}

// integer is any integer type a port number comes in.
type integer interface {
	~int | ~int32 | ~uint32 | ~int64 | ~uint64
}

// checkPort checks a port number is in 1..65535.
func checkPort[N integer](r *Result, p string, port N) {
	if port < 1 || port > 65535 {
		r.Errorf(p, "port %d is out of range; ports are 1..65535", port)
	}
}

// checkPortName checks a port name is a DNS-1123 label, as Istio and
// Kubernetes require.
func checkPortName(r *Result, p, name string) {
	if name == "" {
		r.Errorf(p, "port name is required")
		return
	}
	for _, msg := range k8svalidation.IsDNS1123Label(name) {
		r.Errorf(p, "port name %q is not a valid DNS-1123 label: %s", name, msg)
	}
}

// checkEnum checks an enum value is one of the protobuf enum's values:
// protojson accepts any number for an open enum.
func checkEnum[E ~int32](r *Result, p string, v E, names map[int32]string) {
	if _, ok := names[int32(v)]; !ok {
		known := make([]string, 0, len(names))
		for _, n := range slices.Sorted(maps.Keys(names)) {
			known = append(known, names[n])
		}
		r.Errorf(p, "unknown value %d; it must be one of %s", int32(v), strings.Join(known, ", "))
	}
}

// Durations.

// checkDuration checks a protobuf duration is well formed, at least min
// and whole milliseconds (Envoy's precision, which Istio requires).
func checkDuration(r *Result, p string, d *durationpb.Duration, minimum time.Duration) {
	if d == nil {
		return
	}
	if err := d.CheckValid(); err != nil {
		r.Errorf(p, "duration is not valid: %v", err)
		return
	}
	v := d.AsDuration()
	switch {
	case v < 0:
		r.Errorf(p, "duration %s is negative; it must be at least %s", v, minimum)
	case v < minimum:
		r.Errorf(p, "duration %s is too short; it must be at least %s", v, minimum)
	case v%time.Millisecond != 0:
		r.Errorf(p, "duration %s is not a whole number of milliseconds; only millisecond precision is supported", v)
	}
}

// checkNonNegativeDuration checks a duration where zero is allowed (and
// usually disables something).
func checkNonNegativeDuration(r *Result, p string, d *durationpb.Duration) {
	checkDuration(r, p, d, 0)
}

// checkPositiveDuration checks a duration of at least one millisecond.
func checkPositiveDuration(r *Result, p string, d *durationpb.Duration) {
	checkDuration(r, p, d, time.Millisecond)
}

// Hosts.

// hostError says why h is not a valid DNS name with an optional wildcard
// first label ("*.example.com", "*", and the partial "*-foo.example.com"
// Istio accepts), or returns "". Letters of either case are accepted: DNS
// names compare case-insensitively. A single trailing dot is allowed.
func hostError(h string) string {
	switch {
	case h == "":
		return "host must not be empty"
	case len(h) > 255:
		return fmt.Sprintf("host %q is longer than 255 characters", h)
	case h == "*":
		return ""
	}
	first, rest, _ := strings.Cut(h, ".")
	if strings.HasPrefix(first, "*") {
		if !wildcardLabel.MatchString(first) {
			return fmt.Sprintf("host %q is invalid: the wildcard label %q must be \"*\" or \"*\" followed by letters, digits and '-'", h, first)
		}
		if rest == "" {
			return ""
		}
		return labelsError(h, rest)
	}
	return labelsError(h, h)
}

// wildcardLabel is a first label with a leading wildcard: "*", "*-foo".
var wildcardLabel = regexp.MustCompile(`^\*(?:[-a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// labelsError checks the dot-separated labels of domain (part of host h).
func labelsError(h, domain string) string {
	domain = strings.TrimSuffix(domain, ".")
	labels := strings.Split(domain, ".")
	if _, err := strconv.Atoi(labels[len(labels)-1]); err == nil {
		return fmt.Sprintf("host %q is invalid: the top-level label %q must not be all digits", h, labels[len(labels)-1])
	}
	for _, l := range labels {
		if l == "" {
			return fmt.Sprintf("host %q is invalid: it has an empty label", h)
		}
		if strings.Contains(l, "*") {
			return fmt.Sprintf("host %q is invalid: a wildcard is only allowed as the first label, as in *.example.com", h)
		}
		if len(k8svalidation.IsDNS1123Label(strings.ToLower(l))) > 0 {
			return fmt.Sprintf("host %q is invalid: label %q must be 1-63 letters, digits or '-', starting and ending with a letter or digit", h, l)
		}
	}
	return ""
}

// fqdnError is hostError without wildcards.
func fqdnError(h string) string {
	if strings.Contains(h, "*") {
		return fmt.Sprintf("host %q must not contain a wildcard", h)
	}
	return hostError(h)
}

// isPartialWildcard reports a wildcard that is not a whole first label:
// "*-foo.example.com", "*foo".
func isPartialWildcard(h string) bool {
	return strings.Contains(h, "*") && h != "*" && !strings.HasPrefix(h, "*.")
}

// isShortName reports a host with no dot, which Istio completes with the
// namespace and cluster domain.
func isShortName(h string) bool {
	return h != "*" && !strings.Contains(strings.TrimSuffix(h, "."), ".")
}

// hostMatches reports whether host pattern a matches host b, where either
// may be a wildcard: "*.foo.com" matches "bar.foo.com" and "*.bar.foo.com";
// "*" matches everything.
func hostMatches(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == b || a == "*" || b == "*" {
		return true
	}
	aw, bw := strings.HasPrefix(a, "*"), strings.HasPrefix(b, "*")
	switch {
	case aw && bw:
		as, bs := a[1:], b[1:]
		return strings.HasSuffix(as, bs) || strings.HasSuffix(bs, as)
	case aw:
		return strings.HasSuffix(b, a[1:])
	case bw:
		return strings.HasSuffix(a, b[1:])
	}
	return false
}

// hostSubsetOf reports whether every name host a matches is matched by b.
func hostSubsetOf(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if b == "*" || a == b {
		return true
	}
	if strings.HasPrefix(b, "*") {
		return strings.HasSuffix(a, b[1:])
	}
	return false
}

// Addresses.

// isIP reports whether s is an IPv4 or IPv6 address.
func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// isCIDR reports whether s is an IP prefix such as 10.0.0.0/8.
func isCIDR(s string) bool {
	_, err := netip.ParsePrefix(s)
	return err == nil
}

// checkIPOrCIDR checks an address or address block.
func checkIPOrCIDR(r *Result, p, s string) {
	if strings.Contains(s, "/") {
		if !isCIDR(s) {
			r.Errorf(p, "%q is not a valid CIDR block such as 10.0.0.0/8", s)
		}
		return
	}
	if !isIP(s) {
		r.Errorf(p, "%q is not a valid IP address or CIDR block", s)
	}
}

// unixPrefix marks a Unix domain socket address.
const unixPrefix = "unix://"

// checkUnixAddress checks the path of a "unix://" address: absolute, not a
// directory, or an abstract socket starting with "@".
func checkUnixAddress(r *Result, p, addr string) {
	sock := strings.TrimPrefix(addr, unixPrefix)
	switch {
	case sock == "":
		r.Errorf(p, "unix domain socket address %q has no path", addr)
	case strings.HasPrefix(sock, "@"):
	case !path.IsAbs(sock) || strings.HasSuffix(sock, "/"):
		r.Errorf(p, "unix domain socket address %q must be an absolute path to a file (or an abstract socket starting with @)", addr)
	}
}

// Regular expressions.

// maxRegexLength is the longest regular expression accepted: Envoy limits
// the size of compiled RE2 programs, which grows with length.
const maxRegexLength = 1024

// checkRegex checks a regular expression compiles with RE2 syntax, which
// Envoy and Go both use.
func checkRegex(r *Result, p, re string) {
	switch {
	case re == "":
		r.Errorf(p, "regular expression must not be empty")
	case len(re) > maxRegexLength:
		r.Errorf(p, "regular expression is %d characters long; at most %d are allowed", len(re), maxRegexLength)
	default:
		if _, err := regexp.Compile(re); err != nil {
			r.Errorf(p, "regular expression %q does not compile (RE2 syntax): %v", re, err)
		}
	}
}

// HTTP headers.

// httpToken is an HTTP header name (RFC 7230 token).
var httpToken = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")

// checkHeaderName checks an HTTP header name.
func checkHeaderName(r *Result, p, name string) {
	switch {
	case name == "":
		r.Errorf(p, "header name must not be empty")
	case !httpToken.MatchString(name):
		r.Errorf(p, "header name %q is invalid: it may only contain letters, digits and !#$%%&'*+-.^_`|~", name)
	}
}

// checkHeaderValue checks a header value Envoy adds or sets: no control
// characters, and every '%' either doubled ("%%") or opening a
// "%VARIABLE%" that is closed.
func checkHeaderValue(r *Result, p, value string) {
	for _, c := range value {
		if (c < 0x20 && c != '\t') || c == 0x7f {
			r.Errorf(p, "header value %q contains a control character", value)
			return
		}
	}
	for i := 0; i < len(value); i++ {
		if value[i] != '%' {
			continue
		}
		if i+1 < len(value) && value[i+1] == '%' {
			i++
			continue
		}
		end := variableEnd(value, i+1)
		if end < 0 {
			r.Errorf(p, "header value %q has an unterminated %%VARIABLE%%; write %%%% for a literal %%", value)
			return
		}
		variable := value[i+1 : end]
		if variable == "" || !(variable[0] >= 'A' && variable[0] <= 'Z') {
			r.Errorf(p, "header value %q has an invalid %%VARIABLE%% %q; write %%%% for a literal %%", value, variable)
			return
		}
		i = end
	}
}

// variableEnd returns the index of the '%' closing the Envoy format
// variable that starts at start, skipping parenthesised arguments (which
// may hold '%', as in %START_TIME(%Y-%m-%d)%), or -1.
func variableEnd(value string, start int) int {
	depth := 0
	for j := start; j < len(value); j++ {
		switch value[j] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case '%':
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// Visibility.

// checkExportTo checks an exportTo list: "." (this namespace), "*" (all),
// "~" (nobody; ServiceEntries only) or namespace names, without duplicates,
// and "*" or "~" only alone.
func checkExportTo(r *Result, p, namespace string, exportTo []string, allowNone bool) {
	seen := map[string]int{}
	for i, e := range exportTo {
		ep := idx(p, i)
		norm := e
		switch e {
		case ".":
			if namespace != "" {
				norm = namespace
			}
		case "*":
		case "~":
			if !allowNone {
				r.Errorf(ep, `"~" (visible to nobody) is only allowed in ServiceEntries`)
				continue
			}
		default:
			if msgs := k8svalidation.IsDNS1123Label(e); len(msgs) > 0 {
				r.Errorf(ep, `%q is not ".", "*" or a namespace name: %s`, e, msgs[0])
				continue
			}
		}
		if j, dup := seen[norm]; dup {
			r.Errorf(ep, "%q duplicates exportTo[%d]", e, j)
			continue
		}
		seen[norm] = i
	}
	if len(exportTo) > 1 {
		for i, e := range exportTo {
			if e == "*" || e == "~" {
				r.Errorf(idx(p, i), "%q must be the only exportTo entry", e)
			}
		}
	}
}

// checkNonEmptyStrings reports empty entries of a list.
func checkNonEmptyStrings(r *Result, p string, values []string) {
	for i, v := range values {
		if v == "" {
			r.Errorf(idx(p, i), "value must not be empty")
		}
	}
}

// validateSpec runs the metadata checks of a kind, then check on the spec
// when it is a non-nil *S. A spec of another type is an error, never a
// panic; so is a panic in check, which rejects the object instead of
// crashing the control plane.
func validateSpec[S any](c config.Config, kind string, rules metaRules, check func(c config.Config, spec *S, r *Result)) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res.Errorf("spec", "%sthe %s validator panicked: %v", internalErrorPrefix, kind, p)
		}
	}()
	res = checkMeta(c, rules)
	spec, ok := c.Spec.(*S)
	switch {
	case !ok:
		res.Errorf("spec", "the spec of a %s must be a %T, not %T", kind, (*S)(nil), c.Spec)
	case spec == nil:
		res.Errorf("spec", "the spec of a %s is missing", kind)
	default:
		check(c, spec, &res)
	}
	return res
}
