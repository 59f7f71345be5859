package gateway

import (
	"slices"
	"strings"
)

// Hostnames follow the Gateway API: a precise name ("foo.example.com") or
// a wildcard ("*.example.com") that matches any name ending in
// ".example.com", with any number of labels before it, and not
// "example.com" itself. An empty listener hostname matches every name.

// isWildcard reports whether h is a wildcard hostname.
func isWildcard(h string) bool { return strings.HasPrefix(h, "*.") }

// wildcardMatches reports whether the wildcard w ("*.example.com") covers
// h, a precise name or a wildcard as specific as w or more.
func wildcardMatches(w, h string) bool {
	suffix := w[1:] // ".example.com"
	return strings.HasSuffix(h, suffix) && len(h) > len(suffix)
}

// intersectHostname returns the hostname under which a route hostname
// applies to a listener with hostname listener (empty: any), and whether
// the two intersect at all. The more specific of the two wins:
//
//	listener            route               result
//	""                  foo.example.com     foo.example.com
//	*.example.com       foo.example.com     foo.example.com
//	foo.example.com     *.example.com       foo.example.com
//	*.example.com       *.bar.example.com   *.bar.example.com
//	*.example.com       example.com         (none)
func intersectHostname(listener, route string) (string, bool) {
	switch {
	case listener == "" || listener == route:
		return route, true
	case isWildcard(listener) && wildcardMatches(listener, route):
		return route, true
	case isWildcard(route) && wildcardMatches(route, listener):
		return listener, true
	}
	return "", false
}

// routeHostnames returns the hostnames a route with the given hostnames
// serves on a listener: each intersection, deduplicated and sorted; for a
// route without hostnames, the listener's hostname, or "*" for a listener
// without one. ok is false when the route names hostnames and none of them
// intersects the listener's, in which case the route does not attach.
func routeHostnames(listener string, route []string) (hosts []string, ok bool) {
	if len(route) == 0 {
		if listener == "" {
			return []string{"*"}, true
		}
		return []string{listener}, true
	}
	for _, r := range route {
		if h, match := intersectHostname(listener, r); match {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	return hosts, len(hosts) > 0
}
