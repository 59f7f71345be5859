package mesh

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

// The name checks of istiod's validation (istio/istio
// pkg/config/validation/agent), which the mesh config's hosts, addresses
// and trust domains must pass.

const (
	maxDNSLabel = 63
	maxDNSName  = 255
)

// isDNSLabel reports whether s is one label of a DNS name: letters, digits
// and inner dashes, at most 63 of them. Like istiod, it accepts upper case.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > maxDNSLabel {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

// checkDNSName checks a DNS name such as "istiod.istio-system.svc": labels
// separated by dots, an optional final dot, a top-level label that is not
// all digits.
func checkDNSName(name string) error {
	if name == "" {
		return errors.New("empty domain name")
	}
	if len(name) > maxDNSName {
		return fmt.Errorf("domain name %q is too long (max %d)", shorten(name), maxDNSName)
	}
	return checkDNSLabels(name)
}

func checkDNSLabels(name string) error {
	labels := strings.Split(strings.TrimSuffix(name, "."), ".")
	if _, err := strconv.Atoi(labels[len(labels)-1]); err == nil {
		return fmt.Errorf("domain name %q is invalid: its top-level label %q is all digits", name, labels[len(labels)-1])
	}
	for _, l := range labels {
		if !isDNSLabel(l) {
			return fmt.Errorf("domain name %q is invalid: label %q is not a DNS label", name, l)
		}
	}
	return nil
}

// checkWildcardDomain checks a host that may start with a wildcard label:
// "*", "*.example.com" or "reviews.default.svc.cluster.local".
func checkWildcardDomain(host string) error {
	if host == "" {
		return errors.New("empty domain name")
	}
	if len(host) > maxDNSName {
		return fmt.Errorf("domain name %q is too long (max %d)", shorten(host), maxDNSName)
	}
	first, rest, more := strings.Cut(host, ".")
	if first != "*" && !isDNSLabel(strings.TrimPrefix(strings.TrimPrefix(first, "*"), "-")) {
		return fmt.Errorf("domain name %q is invalid: label %q is not a DNS label or a wildcard", host, first)
	}
	if more {
		if rest == "" {
			return nil // "name." is a valid absolute name
		}
		return checkDNSLabels(rest)
	}
	return nil
}

// checkTrustDomain checks a SPIFFE trust domain such as "cluster.local".
func checkTrustDomain(td string) error {
	if td == "" {
		return errors.New("empty trust domain")
	}
	labels := strings.Split(td, ".")
	for i, l := range labels {
		if i == len(labels)-1 && l == "" && i > 0 {
			return nil // a final dot, as in "istio.io."
		}
		if !isDNSLabel(l) {
			return fmt.Errorf("trust domain %q is invalid: label %q is not a DNS label", td, l)
		}
	}
	return nil
}

// checkHostPort checks an address such as "istiod.istio-system.svc:15012":
// a DNS name or an IP address, and a port.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %v", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("port %q of %q is not a number", port, addr)
	}
	if err := checkPortNumber(p); err != nil {
		return err
	}
	if checkDNSName(host) != nil && !isIP(host) {
		return fmt.Errorf("%q is not a valid hostname or IP address", host)
	}
	return nil
}

// checkPortNumber checks a port number is in 1..65535.
func checkPortNumber(p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("port %d is not in 1..65535", p)
	}
	return nil
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// checkServiceRef checks how an extension provider names its service:
// "[<namespace>/]<hostname>", the hostname being a DNS name or an IP.
func checkServiceRef(svc string) error {
	if svc == "" {
		return errors.New("service must be set")
	}
	ns, host, scoped := strings.Cut(svc, "/")
	if !scoped {
		if checkDNSName(svc) != nil && !isIP(svc) {
			return fmt.Errorf("service %q is not a valid hostname or IP address", svc)
		}
		return nil
	}
	if ns == "" || host == "" {
		return fmt.Errorf("service %q: namespace and hostname must both be set in namespace/hostname", svc)
	}
	if ns != "*" && ns != "." && ns != "~" && !isDNSLabel(ns) {
		return fmt.Errorf("service %q: invalid namespace %q", svc, ns)
	}
	if host != "*" && !strings.Contains(host, ".") {
		return fmt.Errorf("service %q: short names are not allowed; use a fully qualified hostname", svc)
	}
	if err := checkWildcardDomain(host); err != nil {
		return fmt.Errorf("service %q: %v", svc, err)
	}
	if strings.Contains(host, "*") && host != "*" && !strings.HasPrefix(host, "*.") {
		return fmt.Errorf("service %q: partial wildcard %q is not allowed", svc, host)
	}
	return nil
}

// checkNamespace checks a Kubernetes namespace name.
func checkNamespace(ns string) error {
	if len(k8svalidation.IsDNS1123Label(ns)) > 0 {
		return fmt.Errorf("%q is not a valid namespace name (lower-case letters, digits and inner '-', at most 63)", shorten(ns))
	}
	return nil
}
