package gateway

import (
	"cmp"

	"google.golang.org/protobuf/proto"
)

// Path match kinds, most specific first in the order.
const (
	pathPrefix = iota + 1
	pathRegex
	pathExact
)

// precedence places one match of one rule in the order the Gateway API
// prescribes across all routes on a listener and host.
//
// For HTTPRoutes: an exact path first, then the longest prefix, then a
// method match, then the most header matches, then the most query
// parameter matches. A regular expression path, whose place is
// implementation-specific, comes after exact paths and before prefixes,
// the longest first.
//
// For GRPCRoutes: the longest service, then the longest method, then the
// most header matches. Method matches by regular expression, again
// implementation-specific, come after the exact ones, and a match without
// a method (every method of every service) after those.
//
// Ties go to the oldest route, then to the first by "namespace/name",
// then to the first rule and match in the route.
type precedence struct {
	// HTTPRoute matches.
	PathKind int
	PathLen  int
	Method   bool
	Queries  int
	// GRPCRoute matches.
	GRPC       bool
	GRPCMethod bool // has a method match
	GRPCRegex  bool
	ServiceLen int
	MethodLen  int
	// Both.
	Headers int
	// Within a route.
	Rule  int
	Match int
}

// compareEntries orders two http entries of one VirtualService, from
// routes a and b: the more specific match first, then the route order,
// then the rule and match order.
func compareEntries(a httpEntry, ra routeRef, b httpEntry, rb routeRef) int {
	pa, pb := a.Precedence, b.Precedence
	var c int
	if pa.GRPC && pb.GRPC {
		c = compareGRPC(pa, pb)
	} else {
		c = compareHTTP(pa, pb)
	}
	if c != 0 {
		return c
	}
	if c := ra.compare(rb); c != 0 {
		return c
	}
	if c := cmp.Compare(pa.Rule, pb.Rule); c != 0 {
		return c
	}
	return cmp.Compare(pa.Match, pb.Match)
}

// compareHTTP orders HTTPRoute matches, the more specific first.
func compareHTTP(pa, pb precedence) int {
	if c := cmp.Compare(pb.PathKind, pa.PathKind); c != 0 {
		return c
	}
	if c := cmp.Compare(pb.PathLen, pa.PathLen); c != 0 {
		return c
	}
	if c := firstTrue(pa.Method, pb.Method); c != 0 {
		return c
	}
	if c := cmp.Compare(pb.Headers, pa.Headers); c != 0 {
		return c
	}
	return cmp.Compare(pb.Queries, pa.Queries)
}

// compareGRPC orders GRPCRoute matches, the more specific first.
func compareGRPC(pa, pb precedence) int {
	if c := firstTrue(pa.GRPCMethod, pb.GRPCMethod); c != 0 {
		return c
	}
	if c := firstTrue(!pa.GRPCRegex, !pb.GRPCRegex); c != 0 {
		return c
	}
	if c := cmp.Compare(pb.ServiceLen, pa.ServiceLen); c != 0 {
		return c
	}
	if c := cmp.Compare(pb.MethodLen, pa.MethodLen); c != 0 {
		return c
	}
	return cmp.Compare(pb.Headers, pa.Headers)
}

// firstTrue orders true before false.
func firstTrue(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// protoEqual compares two protobuf messages.
func protoEqual[T proto.Message](a, b T) bool { return proto.Equal(a, b) }
