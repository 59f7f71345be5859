package gateway

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// Controller is the Gateway API translation, as a graph of krt
// collections: what it derives for the proxies, and the statuses it
// computes for the Gateway API objects.
type Controller struct {
	// Gateways holds the Istio Gateways (networking.istio.io/v1), one per
	// programmed listener: the collection "gateway/GatewayConfigs".
	Gateways krt.Collection[config.Config]
	// VirtualServices holds the VirtualServices (networking.istio.io/v1)
	// derived from the routes, one per listener and host:
	// "gateway/VirtualServices".
	VirtualServices krt.Collection[config.Config]
	// Statuses are the statuses to write back.
	Statuses Statuses
	// ControllerName is the controllerName meshcp answers to.
	ControllerName gatewayv1.GatewayController
}

// New builds the translation over in. Closing stop stops every
// collection of it.
func New(in Inputs, stop <-chan struct{}, opts Options) (*Controller, error) {
	o, err := opts.complete(stop)
	if err != nil {
		return nil, err
	}
	services := o.orEmpty(in.Services, "Services")
	grants := krt.NewNamespaceIndex(o.orEmpty(in.ReferenceGrants, "ReferenceGrants"))

	classStatuses, classes := newGatewayClasses(o.orEmpty(in.GatewayClasses, "GatewayClasses"), o)
	gatewayStatuses, listeners := newGateways(o.orEmpty(in.Gateways, "Gateways"), &gatewayInputs{
		classes:        classes,
		namespaces:     o.orEmpty(in.Namespaces, "Namespaces"),
		secrets:        o.orEmpty(in.Secrets, "Secrets"),
		grants:         grants,
		services:       krt.NewNamespaceIndex(services),
		serviceConfigs: services,
	}, o)
	// The seed's running example: the Istio Gateways are the listeners
	// that are valid.
	gatewayConfigs := krt.NewCollection(listeners, func(ctx krt.HandlerContext, i Gateway) *config.Config {
		if i.Valid {
			return i.Config
		}
		return nil
	}, o.collection("gateway/GatewayConfigs")...)

	httpRoutes, grpcRoutes := o.orEmpty(in.HTTPRoutes, "HTTPRoutes"), o.orEmpty(in.GRPCRoutes, "GRPCRoutes")
	rin := &routeInputs{
		listeners:  krt.NewIndex(listeners, "gateway", func(g Gateway) []string { return []string{g.parentKey()} }),
		services:   services,
		grants:     grants,
		domain:     o.domain,
		controller: o.controller,
		httpRivals: newRivals(httpRoutes, httpRouteParent),
		grpcRivals: newRivals(grpcRoutes, grpcRouteParent),
	}
	var routes []routeCollections
	for _, r := range []struct {
		kind  string
		input krt.Collection[config.Config]
		build func(krt.Collection[config.Config], *routeInputs, *options) (krt.Collection[krt.ObjectWithStatus[config.Config, RouteStatus]], krt.Collection[routeFragment])
	}{
		{"HTTPRoute", httpRoutes, newHTTPRoutes},
		{"GRPCRoute", grpcRoutes, newGRPCRoutes},
		{"TCPRoute", in.TCPRoutes, newTCPRoutes},
		{"TLSRoute", in.TLSRoutes, newTLSRoutes},
	} {
		statuses, fragments := r.build(o.orEmpty(r.input, r.kind+"s"), rin, o)
		routes = append(routes, routeCollections{kind: r.kind, statuses: statuses, fragments: fragments})
	}
	fragments := make([]krt.Collection[routeFragment], len(routes))
	for i, r := range routes {
		fragments[i] = r.fragments
	}
	routeStatus := func(s *RouteStatus) any { return s.RouteStatus.DeepCopy() }
	return &Controller{
		Gateways:        gatewayConfigs,
		VirtualServices: newVirtualServices(fragments, o),
		ControllerName:  o.controller,
		Statuses: Statuses{
			GatewayClasses: statusesOf(classStatuses, "gateway/status/GatewayClass", o, func(s *gatewayv1.GatewayClassStatus) any { return s.DeepCopy() }),
			Gateways:       newGatewayStatuses(gatewayStatuses, newRouteAttachments(routes, o), o),
			HTTPRoutes:     statusesOf(routes[0].statuses, "gateway/status/HTTPRoute", o, routeStatus),
			GRPCRoutes:     statusesOf(routes[1].statuses, "gateway/status/GRPCRoute", o, routeStatus),
			TCPRoutes:      statusesOf(routes[2].statuses, "gateway/status/TCPRoute", o, routeStatus),
			TLSRoutes:      statusesOf(routes[3].statuses, "gateway/status/TLSRoute", o, routeStatus),
		},
	}, nil
}
