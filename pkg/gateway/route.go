package gateway

import (
	"slices"
	"strings"
	"time"

	networking "istio.io/api/networking/v1alpha3"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// RouteStatus is what the translation concludes about a route: the status
// to write (one entry per parentRef that names a Gateway of ours) and the
// listeners the route attached to, which the Gateways count.
type RouteStatus struct {
	gatewayv1.RouteStatus `json:",inline"`
	Attachments           []RouteAttachment `json:"attachments,omitempty"`
}

// Equals compares route statuses.
func (s RouteStatus) Equals(o RouteStatus) bool {
	return equality.Semantic.DeepEqual(s.RouteStatus, o.RouteStatus) && slices.Equal(s.Attachments, o.Attachments)
}

// RouteAttachment is a route attached to a listener: it counts in the
// listener's attachedRoutes.
type RouteAttachment struct {
	// Route is "Kind/namespace/name".
	Route string `json:"route"`
	// Gateway is the Gateway API Gateway, "namespace/name".
	Gateway string `json:"gateway"`
	// Listener is the listener's name.
	Listener string `json:"listener"`
}

// ResourceName keys an attachment by route and listener.
func (a RouteAttachment) ResourceName() string { return a.Route + "@" + a.Gateway + "/" + a.Listener }

// routeRef identifies a route among all kinds, and orders routes as the
// Gateway API breaks ties: the oldest first, then by namespace/name.
type routeRef struct {
	Kind      string
	Namespace string
	Name      string
	Created   time.Time
}

func (r routeRef) String() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// compare orders routes: older first, then by "namespace/name", then by
// kind.
func (r routeRef) compare(o routeRef) int {
	if c := r.Created.Compare(o.Created); c != 0 {
		return c
	}
	if c := strings.Compare(r.Namespace+"/"+r.Name, o.Namespace+"/"+o.Name); c != 0 {
		return c
	}
	return strings.Compare(r.Kind, o.Kind)
}

func refOf(kind string, c config.Config) routeRef {
	return routeRef{Kind: kind, Namespace: c.Namespace, Name: c.Name, Created: c.CreationTimestamp}
}

// routeFragment is what one route contributes to the VirtualService of
// one host on one listener. Fragments of every route for the same
// listener and host are merged, in precedence order, into one
// VirtualService (see mergeVirtualService).
type routeFragment struct {
	// Gateway is the Istio Gateway ("namespace/name") of the listener, or
	// "mesh" for a route whose parent is a Service (see mesh.go).
	Gateway string
	Host    string
	Route   routeRef
	HTTP    []httpEntry
	TCP     []*networking.TCPRoute
	TLS     []*networking.TLSRoute
	// ExportTo is the VirtualService's: "." for a consumer route.
	ExportTo []string
}

// httpEntry is one http route of a VirtualService with its place in the
// Gateway API's precedence order.
type httpEntry struct {
	Route      *networking.HTTPRoute
	Precedence precedence
}

// ResourceName keys a fragment by route, listener and host.
func (f routeFragment) ResourceName() string {
	return f.Route.String() + "@" + f.Gateway + "@" + f.Host
}

// virtualServiceKey is the VirtualService a fragment belongs to: one per
// listener and host, and for the mesh one per Service host and namespace
// of the routes (producer routes share one, each consumer namespace has
// its own).
func (f routeFragment) virtualServiceKey() string {
	if f.Gateway == meshGateway {
		return f.Route.Namespace + "/" + meshGateway + "@" + f.Host
	}
	return f.Gateway + "@" + f.Host
}

// Equals compares fragments, protobufs by value.
func (f routeFragment) Equals(o routeFragment) bool {
	return f.Gateway == o.Gateway && f.Host == o.Host && f.Route == o.Route && slices.Equal(f.ExportTo, o.ExportTo) &&
		slices.EqualFunc(f.HTTP, o.HTTP, func(a, b httpEntry) bool { return a.Precedence == b.Precedence && protoEqual(a.Route, b.Route) }) &&
		slices.EqualFunc(f.TCP, o.TCP, protoEqual[*networking.TCPRoute]) &&
		slices.EqualFunc(f.TLS, o.TLS, protoEqual[*networking.TLSRoute])
}

// routeContent is what a route's rules translate into, before the route
// is placed on listeners: the same for every listener and host, except
// for TLSRoutes, whose form depends on the listener and whose SNI match
// names the host (l4For).
type routeContent struct {
	http  []httpEntry
	tcp   []*networking.TCPRoute
	l4For func(l ParentInfo, host string) ([]*networking.TCPRoute, []*networking.TLSRoute)
	// problems are the backend references that did not resolve.
	problems refProblems
	// dropped lists rules that cannot be implemented and were left out;
	// when every rule is, the route is not accepted.
	dropped   []string
	allRules  int
	generated bool // whether any rule produced configuration
}

// translateRoute places a route whose rules translated into content on
// the listeners it attaches to: the status of each parentRef of ours, the
// attachments, and a fragment per listener and host.
func translateRoute(ctx krt.HandlerContext, p routeParent, content routeContent, in *routeInputs) (*RouteStatus, []routeFragment) {
	parents := attachRoute(ctx, p, in)
	status := &RouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{}}}
	ref := refOf(p.kind, p.route)
	gen := p.route.Generation
	resolved := condition(gatewayv1.RouteConditionResolvedRefs, true, gatewayv1.RouteReasonResolvedRefs, "All references resolved", gen)
	if content.problems.reason != "" {
		resolved = condition(gatewayv1.RouteConditionResolvedRefs, false, content.problems.reason, content.problems.message(), gen)
	}
	var fragments []routeFragment
	for _, pr := range parents {
		var accepted metav1.Condition
		switch {
		case pr.reason != "":
			accepted = condition(gatewayv1.RouteConditionAccepted, false, pr.reason, pr.message, gen)
		case content.allRules > 0 && len(content.dropped) == content.allRules:
			accepted = condition(gatewayv1.RouteConditionAccepted, false, gatewayv1.RouteReasonUnsupportedValue,
				"no rule can be implemented: "+strings.Join(content.dropped, "; "), gen)
		default:
			accepted = condition(gatewayv1.RouteConditionAccepted, true, gatewayv1.RouteReasonAccepted, "Route was valid", gen)
		}
		conds := []metav1.Condition{accepted, resolved}
		if accepted.Status == metav1.ConditionTrue && len(content.dropped) > 0 {
			conds = append(conds, condition(gatewayv1.RouteConditionPartiallyInvalid, true, gatewayv1.RouteReasonUnsupportedValue,
				"Dropped Rule(s): "+strings.Join(content.dropped, "; "), gen))
		}
		status.Parents = append(status.Parents, gatewayv1.RouteParentStatus{
			ParentRef:      *pr.ref.DeepCopy(),
			ControllerName: in.controller,
			Conditions:     conds,
		})
		if accepted.Status != metav1.ConditionTrue {
			continue
		}
		for _, a := range pr.attached {
			if a.mesh != nil {
				fragments = append(fragments, meshFragment(ref, *a.mesh, content))
				continue
			}
			l := a.listener
			status.Attachments = append(status.Attachments, RouteAttachment{
				Route: ref.String(), Gateway: l.parentKey(), Listener: string(l.ParentInfo.SectionName),
			})
			if !l.Valid {
				continue // counted, but a listener that is not programmed has no configuration
			}
			for _, h := range a.hosts {
				f := routeFragment{Gateway: l.ParentInfo.IstioGateway, Host: h, Route: ref, HTTP: content.http, TCP: content.tcp}
				if content.l4For != nil {
					f.TCP, f.TLS = content.l4For(l.ParentInfo, h)
				}
				if len(f.HTTP)+len(f.TCP)+len(f.TLS) > 0 {
					fragments = append(fragments, f)
				}
			}
		}
	}
	slices.SortFunc(status.Attachments, func(a, b RouteAttachment) int { return strings.Compare(a.ResourceName(), b.ResourceName()) })
	status.Attachments = slices.Compact(status.Attachments)
	return status, fragments
}
