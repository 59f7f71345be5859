package xds

import (
	"slices"
	"strings"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Type URLs of the Envoy resources, in the order a push sends them: clusters
// before the endpoints they load, listeners before the routes they name, so
// that a client never holds a reference to something it has not received
// (Envoy's "make before break" order).
const (
	ClusterType  = resourcev3.ClusterType
	EndpointType = resourcev3.EndpointType
	ListenerType = resourcev3.ListenerType
	RouteType    = resourcev3.RouteType
)

// envoyOrder ranks the Envoy types; every other type URL (config
// distribution) comes after them.
var envoyOrder = []string{ClusterType, EndpointType, ListenerType, RouteType}

// pushRank is the position of a type URL in a push.
func pushRank(typeURL string) int {
	if i := slices.Index(envoyOrder, typeURL); i >= 0 {
		return i
	}
	return len(envoyOrder)
}

// comparePushOrder orders type URLs as a push sends them: CDS, EDS, LDS,
// RDS, then the rest by name, so pushes are deterministic.
func comparePushOrder(a, b string) int {
	if ra, rb := pushRank(a), pushRank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

// sendsChangesOnly reports whether a state-of-the-world push of a type
// carries only the resources that changed. The protocol requires the
// whole set in every response for listeners and clusters (a resource left
// out is deleted) and allows a subset for the types clients subscribe to
// by name, endpoints and routes: there, what a response leaves out stays
// as it was. Config distribution types are sent whole, as their clients
// (mirrors, tools) expect state of the world.
func sendsChangesOnly(typeURL string) bool { return typeURL == EndpointType || typeURL == RouteType }
