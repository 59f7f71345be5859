// Package envoy builds Envoy xDS resources (go-control-plane protos) from
// the service registry and Istio routing configuration: CDS, EDS, LDS and
// RDS for three kinds of client (Flavour): proxyless gRPC clients
// (grpc-go's xds resolver), Envoy sidecars and Envoy gateways; and serves
// them through meshcp's xDS server (package xds).
//
// Every builder is a pure function of a Proxy (who asks: the xDS server's
// one reading of the node, xds.ProxyFromNode; the builders use its kind,
// namespace and labels), the names asked for, and a Model (NewModel over
// Inputs: services, an EndpointSource, VirtualServices, DestinationRules,
// Gateways and the MeshConfig). Builders dispatches by type URL; Result
// holds the resources by name and Warnings naming the config and field
// that could not be generated as written (the rest is generated as usual).
// Validate checks a resource as Envoy would, Any fields unpacked.
//
// # Wiring
//
// Serve registers a Generator for the four type URLs and every client
// kind on an xds.Server. Before each push (xds.Server.BeforePush) it
// builds one Model from Sources (InputsFrom: the registry, the configs
// read and those derived from Gateway API objects, the mesh config),
// shared by every connection; a push of endpoint changes alone keeps the
// Model, since builders read endpoints from the registry as they go.
// Within a push each distinct request (type, the proxy's kind, namespace
// and labels, the names watched) is generated and packed once, however
// many connections make it: a thousand proxyless clients watching one
// target cost one generation per type (BenchmarkProxylessPush measures
// it). Resources are packed deterministically, so one that did not change
// keeps its version and is not sent again.
//
// Serve pushes the registry's changes under ServiceChange and
// EndpointsChange, and those of the routing configs and the mesh config
// under their kinds; the Generator tells the server which types each can
// alter (see affects): an endpoint change re-sends EDS alone, for the
// clusters of its host a client watches (and the server sends only those
// that changed); a VirtualService change re-sends routes (and the
// listeners of sidecars and gateways while any VirtualService, in this
// push or the last, has tcp or tls routes); a
// DestinationRule change clusters, endpoints and routes; an Istio Gateway
// change a gateway's listeners, routes, clusters and endpoints (its
// AUTO_PASSTHROUGH servers' hosts decide its SNI-DNAT clusters).
// ConfigDumpHandler serves /debug/config_dump?proxyID= from what the
// server sent.
//
// # What each flavour gets
//
// Clusters are named "outbound|port|subset|host" as istiod names them, EDS
// over ADS (service name = cluster name); a gateway with AUTO_PASSTHROUGH
// servers also gets, for each port and subset of every service their
// hosts admit, the cluster "outbound_.port_.subset_.host" (the SNI of
// ISTIO_MUTUAL), with the same endpoints and policy but no TLS of its
// own, a headless service's over EDS too. A headless service's cluster
// passes traffic through (ORIGINAL_DST) on sidecars only; gateways and
// gRPC clients read its endpoints over EDS. DNS ServiceEntries are
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
// virtual IP and TCP port, which follows the VirtualService of the
// service's host: on TLS ports a chain per tls route matched by its
// sniHosts (with the TLS inspector), then the first tcp route that
// matches (port, gateways, source labels and namespace, destination
// subnets against the virtual IP), else the service's cluster. Gateways
// get a listener per port of the Istio Gateway servers that select them:
// plaintext HTTP ("http.<port>") and TLS-terminating HTTPS servers
// (matched by SNI, certificate "kubernetes://<credentialName>" over SDS,
// or the credentialName itself when it already has a scheme, as the
// Gateway API's "kubernetes-gateway://ns/name" have; two with
// credentialNames or tlsCertificates, an RSA and an ECDSA one; client
// certificates checked for the mutual modes; protocol versions and
// cipher suites as set); TCP servers, which
// forward by the first tcp route that applies among the VirtualServices
// bound to the gateway (one cluster, or weighted clusters); TLS
// PASSTHROUGH servers, a chain per tls route matched by its sniHosts met
// with the server's hosts ("tls.<port>.<name>"); TLS servers that
// terminate TLS (the HTTPS path's TLS context, no HTTP ALPN), a chain per
// VirtualService host with a tcp route; and AUTO_PASSTHROUGH servers, one
// chain matched by the SNI names their hosts cover (a wildcard host as
// written, an exact one as "*.<host>", "*" any) running the sni_cluster
// filter before tcp_proxy, which sends the client's mutual TLS
// undecrypted to the SNI-DNAT cluster its SNI names
// ("sni-dnat.<port>.<server>.<gateway>.<namespace>"). A port serves one
// class of server (HTTP, TLS, or a single TCP one), as Gateway validation
// requires within one Gateway; an SNI name is matched once per port; what
// is left out is warned about by object and field.
//
// Routes come from the VirtualService bound to the mesh (or to the
// gateway, among those exported to the gateway proxy's namespace; a
// short gateway name in a match is in the VirtualService's namespace)
// for the host (an exact host before a wildcard; then one
// private to the proxy's namespace, one exported to it, a public one, as
// istiod orders them; then the oldest): uri exact, prefix and regex
// (prefixes by path element under the Gateway API's route semantics:
// path_separated_prefix for Envoy, the exact path and "prefix/" for gRPC,
// which rejects path_separated_prefix), headers, method,
// scheme, authority, query parameters (not for gRPC, which ignores such
// routes), port, source labels and namespace; weighted destinations with
// subsets; timeouts (Envoy: route timeout, 0 when unset; gRPC:
// max_stream_duration, A31); retries (Envoy: the mesh default when the
// route sets none; gRPC: only gRPC codes, A44); fault delay and abort
// (A33); redirect and direct response (gRPC fails RPCs that match them);
// and for Envoy only: URI and authority rewrites, header changes, mirrors.
// Without a VirtualService a host gets a default route to its cluster.
//
// Not generated yet, and reported as warnings where configured:
// delegate VirtualServices, CORS policies, locality failover, automatic
// mutual TLS.
package envoy
