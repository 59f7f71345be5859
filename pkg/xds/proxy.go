package xds

import (
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// ClientKind is what sort of client a connection serves; generators are
// chosen by it.
type ClientKind string

const (
	// ClientSidecar is an Envoy sidecar, the default.
	ClientSidecar ClientKind = "sidecar"
	// ClientRouter is an Envoy gateway: its node id starts with "router~",
	// as istiod's gateways' do.
	ClientRouter ClientKind = "router"
	// ClientGRPC is a proxyless gRPC client: its bootstrap node metadata has
	// GENERATOR=grpc, as for istiod.
	ClientGRPC ClientKind = "grpc"
)

// GeneratorMetadataKey is the node metadata field that names the client
// kind. Istio's proxyless gRPC bootstrap sets it to "grpc".
const GeneratorMetadataKey = "GENERATOR"

// Proxy is the client at the other end of a connection, as its first
// request described it. It is read-only once the connection is set up.
type Proxy struct {
	// ID is the node id.
	ID string
	// Kind decides the generators that serve it.
	Kind ClientKind
	// Node is the node as sent, metadata included.
	Node *corev3.Node
	// Peer is the client's network address.
	Peer string
	// ConnectedAt is when the stream opened.
	ConnectedAt time.Time
}

// Metadata returns a string field of the node metadata, or "".
func (p *Proxy) Metadata(key string) string {
	return p.Node.GetMetadata().GetFields()[key].GetStringValue()
}

// newProxy describes the client of a node.
func newProxy(node *corev3.Node, peer string, now time.Time) *Proxy {
	p := &Proxy{ID: node.GetId(), Node: node, Peer: peer, ConnectedAt: now, Kind: ClientSidecar}
	switch {
	case strings.EqualFold(p.Metadata(GeneratorMetadataKey), string(ClientGRPC)):
		p.Kind = ClientGRPC
	case strings.HasPrefix(p.ID, string(ClientRouter)+"~"):
		p.Kind = ClientRouter
	}
	return p
}
