// Package xds is meshcp's xDS server: one gRPC AggregatedDiscoveryService
// serving state-of-the-world and delta (incremental) streams, fed by the krt
// graph, with a push pipeline and an ACK ledger.
//
// # Data flow
//
// Collections of config.Config come in through Server.AddConfigs, one or
// more per kind (several are served as their union). Each change is turned
// once into a ready-to-send Resource (an istio.io/api/mcp/v1alpha1.Resource
// under the type URL "group/version/Kind": config distribution, so another
// control plane or a tool can mirror every Config) and into a PushRequest
// naming the changed objects. Requests are debounced (a quiet period
// bounded by a maximum delay, istiod's 100ms / 10s by default), merged,
// numbered with a generation and queued for every connection. The queue
// holds each connection once, merging requests for a connection that is
// already waiting, and a bounded number of workers push connections, so a
// client never has two pushes in flight and a burst costs it one push.
//
// # Generators
//
// A Generator makes the resources of one type URL for one client, and
// warnings about configuration it could not generate as written; the
// server works out what the client lacks. Generators are registered per
// type URL, for every client kind or for one (Generators.RegisterFor). The
// client is read from its node once (ProxyFromNode): GENERATOR=grpc in
// the node metadata (what Istio's proxyless gRPC bootstrap sets) is a
// proxyless gRPC client, a node id starting "router~" is a gateway,
// anything else a sidecar; NAMESPACE, LABELS and INSTANCE_IPS describe its
// workload. A Generator that is also a Scoper says which PushRequests can
// change its output, so a push reaches only the connections watching an
// affected type and name (an endpoint-only change can re-send EDS alone).
// BeforePush hooks run once per push before any connection is pushed,
// where what every connection shares is built (package xds/envoy builds
// its model of the mesh there); WaitForSync makes streams wait for inputs
// other than the feeds. A push sends a connection's types in the order
// CDS, EDS, LDS, RDS, then config kinds by name. Warnings are shown per
// connection on /debug/syncz and, like NACKs, logged once however many
// clients hit them.
//
// # Protocol
//
// Per connection and type the server keeps the names asked for (wildcard
// or named), the nonce, version and generation last sent, the last ACK and
// the last NACK with the client's error. A NACKed response is not answered
// with the same content; a request with a stale nonce is ignored (its
// subscription changes still apply on delta streams, which carry no full
// state); a request without a nonce (a new subscription, a client that
// reconnected) always gets a full answer; resource names can be dropped in
// both protocols. Delta streams send only resources whose version the
// client does not hold (initial_resource_versions included), and report
// removed ones and subscribed names that do not exist in removed_resources.
// An unknown type URL gets an empty answer and one log line. A stream whose
// first request has no node id (or an Istio-form id of an unknown proxy
// type) is refused with InvalidArgument. State-of-the-world pushes of
// endpoints and routes carry only the resources that changed, which the
// protocol allows for them (listeners and clusters always go whole).
// Responses stay under Options.MaxResponseSize (grpc-go's 4 MiB): split
// where the protocol allows (delta; SotW endpoints and routes), not sent,
// with the error on /debug/syncz, where a whole set must go at once.
// SentTo tells what a node holds, for /debug/config_dump. The rules are
// spelled out on handleSotW and handleDelta.
//
// # Why our own stream state machine
//
// go-control-plane's server/v3 with a snapshot cache was the other choice.
// We keep its API types (envoy/service/discovery/v3 and friends) and write
// the streams ourselves because what this package must know lives inside
// the state machine: which generation every connection has ACKed (for
// /debug/syncz?generation=N&wait= and the change-to-ACK metric), the last
// NACK with its error, and pushes scoped by what changed. The snapshot cache
// rebuilds and versions a whole snapshot per node, while one change here
// must cost one marshalled Resource shared by thousands of connections
// plus a cheap check per connection; and its callbacks see requests and
// responses but not the coalescing push queue or the ledger. Owning the
// streams is a few hundred lines, tested against the protocol's rules.
//
// # Generations and /debug/syncz
//
// Every debounced push has a generation. A connection is synced to
// generation N once every response it was sent up to N is ACKed (a push
// with nothing for it counts as held). SyncHandler serves /debug/syncz:
// every connection with its node, types, names, sent and ACKed versions and
// nonces and last NACK; ?generation=N&wait=10s answers when every connected
// client is synced to N. The histogram meshcp_xds_change_to_ack_seconds
// counts from the change to each client's ACK.
//
// # Serving
//
// Options.Addr is the plaintext listener (15010), Options.TLSAddr the TLS
// one (15012) with certificates from files and, with ClientCAFile,
// required client certificates. Keepalive, message sizes and a cap on new
// streams per second (streams beyond it wait, they are not refused) are
// options too; Options.RegisterFlags puts them all on a command line.
package xds
