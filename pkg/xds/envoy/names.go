package envoy

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Well-known names of the resources and filters the builders emit.
const (
	// BlackHoleCluster drops what is sent to it (outbound policy
	// REGISTRY_ONLY); PassthroughCluster forwards to the original
	// destination (ALLOW_ANY).
	BlackHoleCluster   = "BlackHoleCluster"
	PassthroughCluster = "PassthroughCluster"
	// VirtualOutboundListener takes a sidecar's captured outbound traffic
	// and hands it to the listener of its original destination.
	VirtualOutboundListener = "virtualOutbound"
	// virtualOutboundPort is where iptables sends outbound traffic.
	virtualOutboundPort = 15001

	faultFilterName  = "envoy.filters.http.fault"
	routerFilterName = "envoy.filters.http.router"
	hcmFilterName    = "envoy.filters.network.http_connection_manager"
	tcpProxyName     = "envoy.filters.network.tcp_proxy"
	tlsInspectorName = "envoy.filters.listener.tls_inspector"
	sniClusterName   = "envoy.filters.network.sni_cluster"
	tlsSocketName    = "envoy.transport_sockets.tls"
	httpOptionsKey   = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

	// SDS secret names of the workload's identity and the mesh's roots, as
	// istio-agent serves them; for proxyless gRPC, the certificate
	// provider instance of its bootstrap, with the same certificate names.
	identitySecret              = "default"
	rootSecret                  = "ROOTCA"
	certificateProviderInstance = "default"
	credentialNamePrefix        = "kubernetes://"
)

// ClusterName is the name istiod gives an outbound cluster:
// "outbound|port|subset|host", subset empty for the service as a whole.
func ClusterName(port uint32, subset, host string) string {
	return "outbound|" + strconv.FormatUint(uint64(port), 10) + "|" + subset + "|" + host
}

// SNIClusterName is the SNI-DNAT name of an outbound cluster,
// "outbound_.port_.subset_.host" ("outbound_.port_._.host" for the
// service as a whole): the SNI a mesh client sends with Istio mutual TLS,
// which an AUTO_PASSTHROUGH gateway server forwards by, to the cluster of
// that name.
func SNIClusterName(port uint32, subset, host string) string {
	return "outbound_." + strconv.FormatUint(uint64(port), 10) + "_." + subset + "_." + host
}

// ClusterRef is a parsed outbound cluster name.
type ClusterRef struct {
	Port   uint32
	Subset string
	Host   string
	// SNI: the name is in the SNI-DNAT form (SNIClusterName), that of the
	// clusters of AUTO_PASSTHROUGH gateway servers.
	SNI bool
}

// ParseClusterName reads an outbound cluster name, in either form (see
// ClusterName and SNIClusterName). The wiring uses it to map a changed
// service to the clusters to resend.
func ParseClusterName(name string) (ClusterRef, error) {
	if rest, ok := strings.CutPrefix(name, "outbound_."); ok {
		return parseSNIClusterName(name, rest)
	}
	parts := strings.Split(name, "|")
	if len(parts) != 4 || parts[0] != "outbound" || parts[3] == "" {
		return ClusterRef{}, fmt.Errorf("cluster %q is not an outbound|port|subset|host name", name)
	}
	port, err := parsePort(name, parts[1])
	if err != nil {
		return ClusterRef{}, err
	}
	return ClusterRef{Port: port, Subset: parts[2], Host: parts[3]}, nil
}

// parseSNIClusterName reads "port_.subset_.host", the rest of an SNI-DNAT
// name after "outbound_.". A subset name is a DNS label, so holds no "_.".
func parseSNIClusterName(name, rest string) (ClusterRef, error) {
	portStr, rest, ok1 := strings.Cut(rest, "_.")
	subset, host, ok2 := strings.Cut(rest, "_.")
	if !ok1 || !ok2 || host == "" {
		return ClusterRef{}, fmt.Errorf("cluster %q is not an outbound_.port_.subset_.host name", name)
	}
	port, err := parsePort(name, portStr)
	if err != nil {
		return ClusterRef{}, err
	}
	return ClusterRef{Port: port, Subset: subset, Host: host, SNI: true}, nil
}

func parsePort(name, s string) (uint32, error) {
	port, err := strconv.ParseUint(s, 10, 32)
	if err != nil || port == 0 || port > 65535 {
		return 0, fmt.Errorf("cluster %q: port %q is not a port number", name, s)
	}
	return uint32(port), nil
}

// ListenerTarget is a parsed proxyless gRPC listener name, "host:port".
type ListenerTarget struct {
	Host string
	Port uint32
}

// ParseListenerTarget reads the "host:port" of a gRPC target such as
// xds:///reviews.default.svc.cluster.local:9080. A port is required: the
// builders cannot guess which port of a service a client means.
func ParseListenerTarget(name string) (ListenerTarget, error) {
	host, portStr, err := net.SplitHostPort(name)
	if err != nil {
		return ListenerTarget{}, fmt.Errorf("listener %q: want host:port: %w", name, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 32)
	if err != nil || port == 0 || port > 65535 || host == "" {
		return ListenerTarget{}, fmt.Errorf("listener %q: want host:port with a port in 1..65535", name)
	}
	return ListenerTarget{Host: host, Port: uint32(port)}, nil
}

// sidecarHTTPRouteName is the route configuration of a sidecar's HTTP
// listener on a port: the port number, as istiod names it.
func sidecarHTTPRouteName(port uint32) string { return strconv.FormatUint(uint64(port), 10) }

// gatewayHTTPRouteName is the route configuration of a gateway's plaintext
// HTTP servers on a port.
func gatewayHTTPRouteName(port uint32) string { return "http." + strconv.FormatUint(uint64(port), 10) }

// gatewayHTTPSRouteName is the route configuration of one TLS-terminating
// server of a gateway.
func gatewayHTTPSRouteName(port uint32, server, gwName, gwNamespace string) string {
	return "https." + strconv.FormatUint(uint64(port), 10) + "." + server + "." + gwName + "." + gwNamespace
}

// gatewayTCPName names the filter chain (and statistics) of a gateway's
// plaintext TCP server.
func gatewayTCPName(port uint32, server, gwName, gwNamespace string) string {
	return "tcp." + strconv.FormatUint(uint64(port), 10) + "." + server + "." + gwName + "." + gwNamespace
}

// tlsChainName names a filter chain matched by SNI that forwards TLS
// connections (passed through, or terminated at a gateway) with a TCP
// proxy: "tls.<port>.<first server name>", "*" for every name. A name is
// matched by one chain of a listener only, so the names are unique.
func tlsChainName(port uint32, serverNames []string) string {
	first := "*"
	if len(serverNames) > 0 {
		first = serverNames[0]
	}
	return "tls." + strconv.FormatUint(uint64(port), 10) + "." + first
}

// gatewaySNIDNATName names the filter chain (and statistics) of a
// gateway's AUTO_PASSTHROUGH server, after the router mode Istio's docs
// call it by ("sni-dnat").
func gatewaySNIDNATName(port uint32, server, gwName, gwNamespace string) string {
	return "sni-dnat." + strconv.FormatUint(uint64(port), 10) + "." + server + "." + gwName + "." + gwNamespace
}

// listenerName is "address_port", as istiod names outbound listeners.
func listenerName(address string, port uint32) string {
	return address + "_" + strconv.FormatUint(uint64(port), 10)
}
