package gateway

import (
	"k8s.io/apimachinery/pkg/api/equality"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
)

// ObjectStatus is the status meshcp wants a Gateway API object to have,
// beside the object as it was read (its current status included). Status
// holds a *gatewayv1.GatewayClassStatus, a *gatewayv1.GatewayStatus or,
// for every route kind, a *gatewayv1.RouteStatus; it has no
// lastTransitionTime, which is set when the status is written.
type ObjectStatus struct {
	Object config.Config `json:"object"`
	Status any           `json:"status"`
}

// ResourceName keys a status like its object.
func (s ObjectStatus) ResourceName() string { return s.Object.ResourceName() }

// Equals compares statuses and the objects they are for.
func (s ObjectStatus) Equals(o ObjectStatus) bool {
	return s.Object.Equals(o.Object) && equality.Semantic.DeepEqual(s.Status, o.Status)
}

// Statuses are the statuses meshcp computes, one collection per kind,
// for the objects it is responsible for: GatewayClasses and Gateways of
// its controller, and routes with a parentRef to one of those Gateways.
// A route that no longer has one keeps an entry with no parents, so that
// what meshcp wrote before is removed.
type Statuses struct {
	GatewayClasses krt.Collection[ObjectStatus]
	Gateways       krt.Collection[ObjectStatus]
	HTTPRoutes     krt.Collection[ObjectStatus]
	GRPCRoutes     krt.Collection[ObjectStatus]
	TCPRoutes      krt.Collection[ObjectStatus]
	TLSRoutes      krt.Collection[ObjectStatus]
}

// ByKind returns the collections keyed by the kind of their objects.
func (s Statuses) ByKind() map[config.GroupVersionKind]krt.Collection[ObjectStatus] {
	return map[config.GroupVersionKind]krt.Collection[ObjectStatus]{
		schema.GatewayClass:      s.GatewayClasses,
		schema.KubernetesGateway: s.Gateways,
		schema.HTTPRoute:         s.HTTPRoutes,
		schema.GRPCRoute:         s.GRPCRoutes,
		schema.TCPRoute:          s.TCPRoutes,
		schema.TLSRoute:          s.TLSRoutes,
	}
}

// statusesOf turns a status collection into ObjectStatuses.
func statusesOf[S any](c krt.Collection[krt.ObjectWithStatus[config.Config, S]], name string, o *options, want func(*S) any) krt.Collection[ObjectStatus] {
	return krt.NewCollection(c, func(ctx krt.HandlerContext, s krt.ObjectWithStatus[config.Config, S]) *ObjectStatus {
		return &ObjectStatus{Object: s.Obj, Status: want(&s.Status)}
	}, o.collection(name)...)
}

// newRouteAttachments builds "gateway/RouteAttachments": every listener
// each route attached to, from the statuses of all route kinds.
func newRouteAttachments(routes []routeCollections, o *options) krt.Collection[RouteAttachment] {
	perKind := make([]krt.Collection[RouteAttachment], len(routes))
	for i, r := range routes {
		perKind[i] = krt.NewManyCollection(r.statuses, func(ctx krt.HandlerContext, s krt.ObjectWithStatus[config.Config, RouteStatus]) []RouteAttachment {
			return s.Status.Attachments
		}, o.collection("gateway/RouteAttachments/"+r.kind)...)
	}
	return krt.JoinCollection(perKind, o.collection("gateway/RouteAttachments")...)
}

// routeCollections are the collections of one route kind.
type routeCollections struct {
	kind      string
	statuses  krt.Collection[krt.ObjectWithStatus[config.Config, RouteStatus]]
	fragments krt.Collection[routeFragment]
}

// newGatewayStatuses builds "gateway/status/Gateway": the status of each
// Gateway with attachedRoutes counted from the routes that attached to
// each listener.
func newGatewayStatuses(gateways krt.Collection[krt.ObjectWithStatus[config.Config, gatewayv1.GatewayStatus]], attachments krt.Collection[RouteAttachment], o *options) krt.Collection[ObjectStatus] {
	byGateway := krt.NewIndex(attachments, "gateway", func(a RouteAttachment) []string { return []string{a.Gateway} })
	return krt.NewCollection(gateways, func(ctx krt.HandlerContext, s krt.ObjectWithStatus[config.Config, gatewayv1.GatewayStatus]) *ObjectStatus {
		counts := map[string]int32{}
		for _, a := range byGateway.Fetch(ctx, s.Obj.ResourceName()) {
			counts[a.Listener]++
		}
		status := s.Status.DeepCopy()
		for i := range status.Listeners {
			status.Listeners[i].AttachedRoutes = counts[string(status.Listeners[i].Name)]
		}
		return &ObjectStatus{Object: s.Obj, Status: status}
	}, o.collection("gateway/status/Gateway")...)
}
