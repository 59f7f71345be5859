package validation

import (
	"regexp"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshcp/meshcp/pkg/config"
)

// WorkloadEntry validates an Istio WorkloadEntry: an address (an IP, a
// host name, or a unix domain socket; empty only when a network is set),
// named ports, labels and service account.
func WorkloadEntry(c config.Config) Result {
	return validateSpec(c, "WorkloadEntry", namespacedMeta, func(_ config.Config, we *networking.WorkloadEntry, r *Result) {
		checkWorkloadEntry(r, "spec", we, workloadEntryRules{allowHostname: true})
	})
}

// WorkloadGroup validates an Istio WorkloadGroup: the metadata given to
// its workloads, the template (a WorkloadEntry without an address, which
// registration fills in) and the readiness probe.
func WorkloadGroup(c config.Config) Result {
	return validateSpec(c, "WorkloadGroup", namespacedMeta, checkWorkloadGroup)
}

// checkWorkloadGroup checks the spec of a WorkloadGroup (see WorkloadGroup).
func checkWorkloadGroup(_ config.Config, wg *networking.WorkloadGroup, r *Result) {
	if m := wg.Metadata; m != nil {
		checkLabels(r, "spec.metadata.labels", m.Labels)
		checkAnnotations(r, "spec.metadata.annotations", m.Annotations)
	}
	if wg.Template == nil {
		r.Errorf("spec.template", "a WorkloadGroup needs a template")
	} else {
		checkWorkloadEntry(r, "spec.template", wg.Template, workloadEntryRules{allowHostname: true, template: true})
	}
	checkProbe(r, "spec.probe", wg.Probe)
}

// workloadEntryRules are the context-dependent rules for a WorkloadEntry.
type workloadEntryRules struct {
	// servicePorts are the port names of the ServiceEntry the entry is an
	// endpoint of; nil outside a ServiceEntry.
	servicePorts map[string]bool
	// allowHostname: the address may be a host name (DNS resolution and
	// standalone WorkloadEntries); otherwise it must be an IP.
	allowHostname bool
	// template: a WorkloadGroup template, whose address must be empty.
	template bool
}

// workloadPortName is the form of a WorkloadEntry port name.
var workloadPortName = regexp.MustCompile(`^[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// Limits of the WorkloadEntry schema.
const (
	maxAddressLength  = 256
	maxNetworkLength  = 2048
	maxLocalityLength = 2048
)

// checkWorkloadEntry checks a WorkloadEntry, standalone, as a ServiceEntry
// endpoint or as a WorkloadGroup template.
func checkWorkloadEntry(r *Result, p string, we *networking.WorkloadEntry, rules workloadEntryRules) {
	checkWorkloadAddress(r, fld(p, "address"), we, rules)
	for _, name := range sortedKeys(we.Ports) {
		pp := key(fld(p, "ports"), name)
		if len(name) >= 63 || !workloadPortName.MatchString(name) {
			r.Errorf(pp, "port name %q is invalid: it must be under 63 letters, digits or '-', starting and ending with a letter or digit", name)
		}
		if rules.servicePorts != nil && !rules.servicePorts[name] {
			r.Errorf(pp, "port %q is not a port name of the ServiceEntry; endpoint ports refer to spec.ports[].name", name)
		}
		checkPort(r, pp, we.Ports[name])
	}
	checkLabels(r, fld(p, "labels"), we.Labels)
	if len(we.Network) > maxNetworkLength {
		r.Errorf(fld(p, "network"), "network is %d characters long; at most %d are allowed", len(we.Network), maxNetworkLength)
	}
	if len(we.Locality) > maxLocalityLength {
		r.Errorf(fld(p, "locality"), "locality is %d characters long; at most %d are allowed", len(we.Locality), maxLocalityLength)
	} else if we.Locality != "" && strings.Count(we.Locality, "/") > 2 {
		r.Warnf(fld(p, "locality"), "locality %q has more than region/zone/subzone; the rest is ignored", we.Locality)
	}
	if we.ServiceAccount != "" {
		for _, msg := range k8svalidation.IsDNS1123Subdomain(we.ServiceAccount) {
			r.Errorf(fld(p, "serviceAccount"), "service account %q is not a valid name: %s", we.ServiceAccount, msg)
		}
	}
}

// checkWorkloadAddress checks the address of a WorkloadEntry.
func checkWorkloadAddress(r *Result, p string, we *networking.WorkloadEntry, rules workloadEntryRules) {
	addr := we.Address
	switch {
	case rules.template:
		if addr != "" {
			r.Errorf(p, "a template must not set an address; each workload's address is filled in when it registers")
		}
	case len(addr) > maxAddressLength:
		r.Errorf(p, "address is %d characters long; at most %d are allowed", len(addr), maxAddressLength)
	case addr == "":
		if we.Network == "" {
			r.Errorf(p, "address is required (it may only be empty when network is set)")
		} else {
			r.Warnf(p, "address is unset; the workload is reached through the gateway of network %q", we.Network)
		}
	case strings.HasPrefix(addr, unixPrefix):
		checkUnixAddress(r, p, addr)
		if len(we.Ports) > 0 {
			r.Errorf(fld(strings.TrimSuffix(p, ".address"), "ports"), "a unix domain socket endpoint must not have ports")
		}
	case isIP(addr):
	case !rules.allowHostname:
		r.Errorf(p, "address %q is not an IP address; resolution STATIC needs IP addresses (or unix:// sockets)", addr)
	default:
		if msg := fqdnError(addr); msg != "" {
			r.Errorf(p, "address %q is neither an IP address nor a valid host name: %s", addr, msg)
		}
	}
}

// Readiness probes.

// probeHeaderName is the form of a probe header name.
var probeHeaderName = regexp.MustCompile(`^[-_A-Za-z0-9]+$`)

// checkProbe checks a WorkloadGroup readiness probe: non-negative timings
// and exactly one well-formed method.
func checkProbe(r *Result, p string, pr *networking.ReadinessProbe) {
	if pr == nil {
		return
	}
	for _, f := range []struct {
		name string
		v    int32
	}{
		{"initialDelaySeconds", pr.InitialDelaySeconds}, {"timeoutSeconds", pr.TimeoutSeconds},
		{"periodSeconds", pr.PeriodSeconds}, {"successThreshold", pr.SuccessThreshold},
		{"failureThreshold", pr.FailureThreshold},
	} {
		checkNotNegative(r, fld(p, f.name), f.v)
	}
	switch m := pr.HealthCheckMethod.(type) {
	case nil:
		r.Errorf(p, "a probe needs one of httpGet, tcpSocket, grpc or exec")
	case *networking.ReadinessProbe_HttpGet:
		checkHTTPProbe(r, fld(p, "httpGet"), m.HttpGet)
	case *networking.ReadinessProbe_TcpSocket:
		if m.TcpSocket == nil {
			r.Errorf(fld(p, "tcpSocket"), "tcpSocket must not be null")
		} else {
			checkPort(r, fld(p, "tcpSocket.port"), m.TcpSocket.Port)
		}
	case *networking.ReadinessProbe_Grpc:
		if m.Grpc == nil {
			r.Errorf(fld(p, "grpc"), "grpc must not be null")
		} else {
			checkPort(r, fld(p, "grpc.port"), m.Grpc.Port)
		}
	case *networking.ReadinessProbe_Exec:
		switch {
		case m.Exec == nil || len(m.Exec.Command) == 0:
			r.Errorf(fld(p, "exec.command"), "an exec probe needs a command")
		default:
			checkNonEmptyStrings(r, fld(p, "exec.command"), m.Exec.Command)
		}
	}
}

// checkHTTPProbe checks an HTTP readiness probe.
func checkHTTPProbe(r *Result, p string, h *networking.HTTPHealthCheckConfig) {
	if h == nil {
		r.Errorf(p, "httpGet must not be null")
		return
	}
	checkPort(r, fld(p, "port"), h.Port)
	if h.Scheme != "" && h.Scheme != "HTTP" && h.Scheme != "HTTPS" {
		r.Errorf(fld(p, "scheme"), `scheme %q must be "HTTP" or "HTTPS"`, h.Scheme)
	}
	for i, hd := range h.HttpHeaders {
		hp := idx(fld(p, "httpHeaders"), i)
		if hd == nil {
			r.Errorf(hp, "header must not be null")
			continue
		}
		if !probeHeaderName.MatchString(hd.Name) {
			r.Errorf(fld(hp, "name"), "header name %q is invalid: it may only contain letters, digits, '-' and '_'", hd.Name)
		}
	}
}
