package registry

import "strings"

// DefaultDomain is the DNS domain of a cluster that says nothing else.
const DefaultDomain = "cluster.local"

// KubernetesHostname is the host name of a Kubernetes Service:
// name.namespace.svc.<domain>.
func KubernetesHostname(name, namespace, domain string) string {
	if domain == "" {
		domain = DefaultDomain
	}
	return name + "." + namespace + ".svc." + domain
}

// ResolveHost turns a host as Istio configuration writes it into the host
// name it means, for an object in namespace: a short name without dots
// ("reviews") is a Kubernetes Service of that namespace; anything with a
// dot, and "*", is taken as written.
func ResolveHost(host, namespace, domain string) string {
	if host == "*" || strings.Contains(host, ".") {
		return host
	}
	return KubernetesHostname(host, namespace, domain)
}

// HostMatches reports whether the host pattern of a route or policy
// (exact, "*.example.com" or "*") covers the service host name.
func HostMatches(pattern, host string) bool {
	if pattern == "*" || pattern == host {
		return true
	}
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return strings.HasSuffix(host, suffix)
	}
	return false
}
