package envoy

import (
	"cmp"
	"fmt"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// Flavour is the kind of client a proxy is; it decides what the builders
// generate and which fields they may use.
type Flavour int

const (
	// Sidecar is an Envoy next to a workload: outbound listeners for every
	// service port, routes and clusters for every visible service.
	Sidecar Flavour = iota
	// ProxylessGRPC is a gRPC client with its own xDS client (grpc-go's xds
	// resolver). It asks for listeners by "host:port" and accepts only what
	// gRPC implements (gRFCs A27, A28, A29, A31, A40, A42, A44, A48, A50):
	// no Envoy-only fields, certificate providers instead of SDS, timeouts
	// as max_stream_duration.
	ProxylessGRPC
	// Gateway is an Envoy at the edge (istio-ingressgateway): listeners
	// from the Istio Gateway servers that select it.
	Gateway
)

// String names the flavour.
func (f Flavour) String() string {
	switch f {
	case Sidecar:
		return "sidecar"
	case ProxylessGRPC:
		return "grpc"
	case Gateway:
		return "router"
	}
	return fmt.Sprintf("Flavour(%d)", int(f))
}

// Proxy is the identity of a client as its node says it: who it is, what
// it is, where it runs.
type Proxy struct {
	// ID is the node id.
	ID      string
	Flavour Flavour
	// Namespace is the proxy's namespace: which configuration it sees,
	// and the namespace short host names resolve in.
	Namespace string
	// Labels are the workload's labels: Gateways select proxies by them,
	// VirtualService sourceLabels match them.
	Labels map[string]string
	// IPs are the workload's addresses, when the node says.
	IPs []string
}

// Node metadata keys read, as istio-agent and Istio's gRPC bootstrap write
// them.
const (
	metaGenerator = "GENERATOR"
	metaNamespace = "NAMESPACE"
	metaLabels    = "LABELS"
	metaIPs       = "INSTANCE_IPS"
	// generatorGRPC is what a proxyless gRPC client puts in GENERATOR.
	generatorGRPC = "grpc"
)

// ProxyFromNode reads a client's identity from its xDS node. The node id
// may follow Istio's form "type~ip~pod.namespace~namespace.svc.domain",
// type "sidecar" or "router"; metadata GENERATOR "grpc" marks a proxyless
// gRPC client (as with istiod), NAMESPACE the namespace, LABELS (a struct
// of strings) the workload labels, INSTANCE_IPS a comma-separated list.
// Metadata wins over the id; a namespace found nowhere is "default".
func ProxyFromNode(node *corev3.Node) (*Proxy, error) {
	if node.GetId() == "" {
		return nil, fmt.Errorf("the node has no id")
	}
	p := &Proxy{ID: node.GetId(), Flavour: Sidecar}
	parts := strings.Split(node.GetId(), "~")
	if len(parts) == 4 {
		switch parts[0] {
		case "sidecar":
		case "router":
			p.Flavour = Gateway
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
	if fields[metaGenerator].GetStringValue() == generatorGRPC {
		p.Flavour = ProxylessGRPC
	}
	p.Namespace = cmp.Or(fields[metaNamespace].GetStringValue(), p.Namespace, "default")
	if l := fields[metaLabels].GetStructValue(); l != nil {
		p.Labels = map[string]string{}
		for k, v := range l.GetFields() {
			p.Labels[k] = v.GetStringValue()
		}
	}
	if ips := fields[metaIPs].GetStringValue(); ips != "" {
		p.IPs = strings.Split(ips, ",")
	}
	return p, nil
}
