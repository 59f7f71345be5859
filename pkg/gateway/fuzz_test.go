package gateway

import (
	"regexp"
	"testing"
)

// hostnameForm is the form of Gateway API hostnames (validation rejects
// anything else before it reaches the translation).
var hostnameForm = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// covers reports whether a listener or route hostname pattern covers host.
func covers(pattern, host string) bool {
	return pattern == "" || pattern == host || (isWildcard(pattern) && wildcardMatches(pattern, host))
}

// Whatever two hostnames intersect to is one of them and is covered by
// both, and the intersection does not depend on which is the listener's.
func FuzzIntersectHostname(f *testing.F) {
	for _, seed := range [][2]string{
		{"*.example.com", "foo.example.com"}, {"foo.example.com", "*.example.com"}, {"*.example.com", "example.com"},
		{"*.a.example.com", "*.example.com"}, {"", "x.y"}, {"a.b", "a.b"}, {"*.b", "*.a.b"}, {"*.com", "x.example.com"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, listener, route string) {
		if !hostnameForm.MatchString(route) || (listener != "" && !hostnameForm.MatchString(listener)) {
			return
		}
		got, ok := intersectHostname(listener, route)
		if !ok {
			if covers(listener, route) {
				t.Errorf("intersectHostname(%q, %q) found none, but the listener covers the route", listener, route)
			}
			return
		}
		if got != listener && got != route {
			t.Errorf("intersectHostname(%q, %q) = %q, neither of them", listener, route, got)
		}
		if !covers(listener, got) || !covers(route, got) {
			t.Errorf("intersectHostname(%q, %q) = %q, which %q or %q does not cover", listener, route, got, listener, route)
		}
		if listener != "" {
			if back, ok := intersectHostname(route, listener); !ok || back != got {
				t.Errorf("intersectHostname is not symmetric for %q and %q: %q, then %q %v", listener, route, got, back, ok)
			}
		}
	})
}
