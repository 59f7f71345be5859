package xds

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// ClientKind is what sort of client a connection serves; generators are
// chosen by it, and the Envoy builders generate by it.
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

// Node metadata keys read, as istio-agent and Istio's gRPC bootstrap write
// them.
const (
	// GeneratorMetadataKey names the client kind; Istio's proxyless gRPC
	// bootstrap sets it to "grpc".
	GeneratorMetadataKey = "GENERATOR"
	// NamespaceMetadataKey is the workload's namespace.
	NamespaceMetadataKey = "NAMESPACE"
	// LabelsMetadataKey is the workload's labels, a struct of strings.
	LabelsMetadataKey = "LABELS"
	// InstanceIPsMetadataKey is the workload's addresses, comma-separated.
	InstanceIPsMetadataKey = "INSTANCE_IPS"
)

// Proxy is the client at the other end of a connection, as its first
// request described it: the one reading of a node, which the server picks
// generators by and the Envoy builders generate for. It is read-only once
// the connection is set up.
type Proxy struct {
	// ID is the node id.
	ID string
	// Kind decides the generators that serve it and what they generate.
	Kind ClientKind
	// Namespace is the workload's namespace: which configuration it sees,
	// and the namespace short host names resolve in.
	Namespace string
	// Labels are the workload's labels: Gateways select proxies by them,
	// VirtualService sourceLabels match them.
	Labels map[string]string
	// IPs are the workload's addresses, when the node says.
	IPs []string
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

// ProxyFromNode reads a client from its xDS node. The node id may follow
// Istio's form "type~ip~pod.namespace~namespace.svc.domain" with type
// "sidecar" or "router" (a gateway); any other id is taken whole. Metadata
// GENERATOR "grpc" marks a proxyless gRPC client, whatever the id;
// NAMESPACE, LABELS (a struct of strings) and INSTANCE_IPS (a
// comma-separated list) describe the workload and win over what the id
// says. A namespace found nowhere is "default". A node without an id, or
// an Istio-form id of another type, is an error naming it.
func ProxyFromNode(node *corev3.Node) (*Proxy, error) {
	if node.GetId() == "" {
		return nil, fmt.Errorf("the node has no id")
	}
	p := &Proxy{ID: node.GetId(), Kind: ClientSidecar, Node: node}
	if parts := strings.Split(node.GetId(), "~"); len(parts) == 4 {
		switch parts[0] {
		case string(ClientSidecar):
		case string(ClientRouter):
			p.Kind = ClientRouter
		default:
			return nil, fmt.Errorf("node id %q: type %q is neither sidecar nor router", node.GetId(), parts[0])
		}
		if parts[1] != "" {
			p.IPs = []string{parts[1]}
		}
		if _, ns, ok := strings.Cut(parts[2], "."); ok {
			p.Namespace = ns
		}
	}
	fields := node.GetMetadata().GetFields()
	if strings.EqualFold(fields[GeneratorMetadataKey].GetStringValue(), string(ClientGRPC)) {
		p.Kind = ClientGRPC
	}
	p.Namespace = cmp.Or(fields[NamespaceMetadataKey].GetStringValue(), p.Namespace, "default")
	if l := fields[LabelsMetadataKey].GetStructValue(); l != nil {
		p.Labels = make(map[string]string, len(l.GetFields()))
		for k, v := range l.GetFields() {
			p.Labels[k] = v.GetStringValue()
		}
	}
	if ips := fields[InstanceIPsMetadataKey].GetStringValue(); ips != "" {
		p.IPs = strings.Split(ips, ",")
	}
	return p, nil
}
