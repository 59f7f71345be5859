// Package envoy builds Envoy xDS resources (go-control-plane protos) from
// the service registry and Istio routing configuration: CDS, EDS, LDS and
// RDS for three kinds of client (Flavour): proxyless gRPC clients
// (grpc-go's xds resolver), Envoy sidecars and Envoy gateways.
//
// Every builder is a pure function of a Proxy (who asks: ProxyFromNode
// reads it from the xDS node), the names asked for, and a Model (NewModel
// over Inputs: services, an EndpointSource, VirtualServices,
// DestinationRules, Gateways and the MeshConfig). Builders is the
// Generator the xDS server calls per type URL; Result holds the resources
// by name and Warnings naming the config and field that could not be
// generated as written (the rest is generated as usual).
//
// # Wiring
//
// On each push the server builds a Model with
// NewModel(InputsFrom(registry, sources, mesh)) (plus derived Gateway API
// configs), then for each connection and type calls
// Builders{}.Generate(Request{Proxy, TypeURL, Names}, model). Types lists
// the type URLs in push order. An endpoint change concerns the EDS
// clusters of its host only: ClustersOfHost picks them among the names a
// client watches. Validate checks a resource as Envoy would.
//
// # What each flavour gets
//
// Clusters are named "outbound|port|subset|host" as istiod names them, EDS
// over ADS (service name = cluster name); DNS ServiceEntries are
// STRICT_DNS (Envoy) or LOGICAL_DNS (gRPC, which resolves one name). The
// DestinationRule in force (proxy namespace, then service namespace, then
// root namespace; exact host before wildcard) gives the load balancer
// (round robin, least request, ring hash from a consistent hash, and the
// route hash policies it needs), connection pool (circuit breakers;
// for gRPC max_requests only, A32), outlier detection (A50), subsets and
// TLS: Envoy gets SDS secrets over ADS or files; gRPC gets certificate
// provider instance "default" for ISTIO_MUTUAL (A29), which its bootstrap
// must define (istio-agent's do; grpc-go NACKs the clusters otherwise),
// and no cluster at all for SIMPLE or MUTUAL, which would need files gRPC
// cannot be sent.
//
// Endpoints are grouped by locality, with locality weights the sum of the
// endpoint weights (never 0, which gRPC would drop), each address once
// (gRPC rejects duplicates), health from EndpointSlice conditions
// (HEALTHY, UNHEALTHY, DRAINING), subsets by the workloads' labels.
//
// A gRPC client asks for listener "host:port" (its xds:/// target): it
// gets an API listener of exactly that name, an HTTP connection manager
// with RDS "host:port" over ADS, the fault filter then the router. Short
// hosts ("reviews:9080", "reviews.default:9080") resolve in the client's
// namespace. Sidecars get virtualOutbound (15001), one HTTP listener per
// HTTP port number (routes named by the port) and a TCP proxy listener per
// virtual IP and TCP port. Gateways get a listener per port of the Istio
// Gateway servers that select them: plaintext HTTP ("http.<port>") and
// TLS-terminating HTTPS servers (matched by SNI, certificate
// "kubernetes://<credentialName>" over SDS).
//
// Routes come from the VirtualService bound to the mesh (or to the
// gateway) for the host: uri exact, prefix and regex, headers, method,
// scheme, authority, query parameters (not for gRPC, which ignores such
// routes), port, source labels and namespace; weighted destinations with
// subsets; timeouts (Envoy: route timeout, 0 when unset; gRPC:
// max_stream_duration, A31); retries (Envoy: the mesh default when the
// route sets none; gRPC: only gRPC codes, A44); fault delay and abort
// (A33); redirect and direct response (gRPC fails RPCs that match them);
// and for Envoy only: URI and authority rewrites, header changes, mirrors.
// Without a VirtualService a host gets a default route to its cluster.
//
// Not generated yet, and reported as warnings where configured: TLS
// passthrough and TCP gateway servers, delegate VirtualServices, CORS
// policies, locality failover, automatic mutual TLS.
package envoy
