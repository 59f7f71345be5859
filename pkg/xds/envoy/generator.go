package envoy

import (
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// The type URLs the builders serve.
const (
	ClusterType  = resourcev3.ClusterType
	EndpointType = resourcev3.EndpointType
	ListenerType = resourcev3.ListenerType
	RouteType    = resourcev3.RouteType
)

// Request is what a client asked for on one type: who it is, the type
// URL, and the resource names (empty for every resource, a wildcard
// subscription).
type Request struct {
	Proxy   *Proxy
	TypeURL string
	Names   []string
}

// Builders turns a request and the model into resources: CDS, EDS, LDS
// and RDS by BuildClusters, BuildEndpoints, BuildListeners and
// BuildRoutes. It is pure: the same request and model give the same
// resources. An unknown type URL gives an empty result. (Generator is
// what serves it to the xDS server.)
type Builders struct{}

// Generate dispatches on the type URL.
func (Builders) Generate(req Request, m *Model) Result {
	switch req.TypeURL {
	case ClusterType:
		return BuildClusters(req.Proxy, m, req.Names)
	case EndpointType:
		return BuildEndpoints(req.Proxy, m, req.Names)
	case ListenerType:
		return BuildListeners(req.Proxy, m, req.Names)
	case RouteType:
		return BuildRoutes(req.Proxy, m, req.Names)
	}
	return Result{}
}

// Types lists the type URLs Builders serves, in the order istiod pushes
// them (clusters before the endpoints they need, listeners before the
// routes they name).
func Types() []string { return []string{ClusterType, EndpointType, ListenerType, RouteType} }
