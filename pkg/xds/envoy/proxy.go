package envoy

import "github.com/meshcp/meshcp/pkg/xds"

// Proxy is the client the builders generate for: the xDS server's reading
// of its node (xds.ProxyFromNode), the one reading there is. The builders
// use its Kind, Namespace and Labels.
type Proxy = xds.Proxy

// Flavour is the kind of client a proxy is; it decides what the builders
// generate and which fields they may use.
type Flavour = xds.ClientKind

const (
	// Sidecar is an Envoy next to a workload: outbound listeners for every
	// service port, routes and clusters for every visible service.
	Sidecar = xds.ClientSidecar
	// ProxylessGRPC is a gRPC client with its own xDS client (grpc-go's xds
	// resolver). It asks for listeners by "host:port" and accepts only what
	// gRPC implements (gRFCs A27, A28, A29, A31, A40, A42, A44, A48, A50):
	// no Envoy-only fields, certificate providers instead of SDS, timeouts
	// as max_stream_duration.
	ProxylessGRPC = xds.ClientGRPC
	// Gateway is an Envoy at the edge (istio-ingressgateway): listeners
	// from the Istio Gateway servers that select it.
	Gateway = xds.ClientRouter
)
