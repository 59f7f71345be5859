package gateway

import (
	"fmt"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// RouteReasonHostnameConflict is the reason of Accepted=False on the
// parent of an HTTPRoute or GRPCRoute that lost a listener and hostname
// to an older route of the other kind. The Gateway API requires that
// exactly one of the two be accepted but names no reason for it.
const RouteReasonHostnameConflict gatewayv1.RouteConditionReason = "HostnameConflict"

// rivals are the routes of the other kind that may share a listener with
// a route: GRPCRoutes for an HTTPRoute and HTTPRoutes for a GRPCRoute,
// looked up by the Gateways their parentRefs name. The Gateway API does
// not merge the two kinds: where an HTTPRoute and a GRPCRoute attach to
// one listener with intersecting hostnames, only the older (then the
// first by namespace/name) is accepted there.
type rivals struct {
	byGateway krt.Index[string, config.Config]
	// parent reads a rival as routeParent.
	parent func(config.Config) (routeParent, bool)
}

// parentGateways returns the keys ("namespace/name") of the Gateways a
// route's parentRefs name, for the rivals index.
func parentGateways(c config.Config, refs []gatewayv1.ParentReference) []string {
	var out []string
	for _, ref := range refs {
		if gw := parentRef(ref, c.Namespace); gw.isGateway() {
			out = append(out, gw.key())
		}
	}
	return out
}

// rivalsOn returns the rivals of a route that name the Gateway gwKey and
// are older than it.
func (rv *rivals) rivalsOn(ctx krt.HandlerContext, r routeParent, gwKey string) []routeParent {
	if rv == nil {
		return nil
	}
	self := refOf(r.kind, r.route)
	var out []routeParent
	for _, c := range rv.byGateway.Fetch(ctx, gwKey) {
		p, ok := rv.parent(c)
		if ok && refOf(p.kind, p.route).compare(self) < 0 {
			out = append(out, p)
		}
	}
	return out
}

// beatenBy returns the older rival that takes listener l for one of
// hosts, if any: one that attaches to l through a parentRef to the same
// Gateway with a hostname intersecting one of hosts. (A rival that itself
// lost elsewhere still counts: chains of conflicts are not untangled.)
func beatenBy(older []routeParent, l Gateway, hosts []string) (string, bool) {
	for _, rival := range older {
		for _, ref := range rival.parentRefs {
			if describeParent(rival.route, ref) != l.parentKey() {
				continue
			}
			res := attachToGateway(rival, ref, []Gateway{l}, nil)
			for _, a := range res.attached {
				if h, ok := hostsOverlap(hosts, a.hosts); ok {
					return fmt.Sprintf("%s %s/%s, older, serves hostname %q on listener %s", rival.kind, rival.route.Namespace,
						rival.route.Name, h, l.ParentInfo.SectionName), true
				}
			}
		}
	}
	return "", false
}

// hostsOverlap reports whether two sets of a listener's hosts share a
// name, and one of the names they share. "*" overlaps everything.
func hostsOverlap(a, b []string) (string, bool) {
	for _, x := range a {
		for _, y := range b {
			switch {
			case x == "*":
				return y, true
			case y == "*":
				return x, true
			}
			if h, ok := intersectHostname(x, y); ok {
				return h, true
			}
		}
	}
	return "", false
}

// joinConflicts describes the conflicts that kept a route off every
// listener.
func joinConflicts(conflicts []string) string { return strings.Join(conflicts, "; ") }

// newRivals indexes routes of one kind by the Gateways they name.
func newRivals(routes krt.Collection[config.Config], parent func(config.Config) (routeParent, bool)) *rivals {
	return &rivals{
		byGateway: krt.NewIndex(routes, "parent-gateways", func(c config.Config) []string {
			p, ok := parent(c)
			if !ok {
				return nil
			}
			return parentGateways(c, p.parentRefs)
		}),
		parent: parent,
	}
}
