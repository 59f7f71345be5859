package envoy

import (
	"fmt"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	sniclusterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/sni_cluster/v3"

	"github.com/meshcp/meshcp/pkg/registry"
)

// AUTO_PASSTHROUGH gateway servers (the east-west gateways of
// multi-network meshes): a mesh client's sidecar sends its mutual TLS
// connection to the gateway with the SNI "outbound_.port_.subset_.host"
// (SNIClusterName), which names the destination itself; the gateway
// needs no VirtualService, forwards the connection undecrypted to the
// cluster of that name, and has such a cluster for every service port
// and subset its server's hosts admit. Envoy's sni_cluster network filter
// makes the connection's SNI the cluster tcp_proxy connects to, in place
// of the one tcp_proxy names.

// autoPassthroughServers lists the AUTO_PASSTHROUGH servers of the
// Gateways that select the proxy; none unless the proxy is a gateway.
func (b *build) autoPassthroughServers() []gatewayServer {
	if b.p.Kind != Gateway {
		return nil
	}
	var out []gatewayServer
	for _, s := range b.gatewayServers() {
		if kindOf(s.server) == autoPassthrough {
			out = append(out, s)
		}
	}
	return out
}

// autoPassthroughAdmits reports whether one of the proxy's
// AUTO_PASSTHROUGH servers admits a service, so the proxy has its
// SNI-DNAT clusters.
func (b *build) autoPassthroughAdmits(svc *registry.Service) bool {
	return admittedBy(b.autoPassthroughServers(), svc)
}

// admittedBy reports whether a host of one of servers admits a service.
// A service with a wildcard host has no SNI-DNAT clusters: no client
// sends a "*" in its SNI.
func admittedBy(servers []gatewayServer, svc *registry.Service) bool {
	if strings.HasPrefix(svc.Hostname, "*") {
		return false
	}
	for _, s := range servers {
		for _, h := range s.server.Hosts {
			if serverHostAdmits(h, svc, s.gw.cfg.Namespace) {
				return true
			}
		}
	}
	return false
}

// serverHostAdmits reports whether a gateway server host admits a
// service: "namespace/dnsName", or "dnsName" for any namespace, the
// namespace "*" (any) or "." (the Gateway's) or a name, the service's;
// the dnsName an exact host, a "*.suffix" or "*", the service's host.
func serverHostAdmits(serverHost string, svc *registry.Service, gwNamespace string) bool {
	ns, dnsName, ok := strings.Cut(serverHost, "/")
	if !ok {
		ns, dnsName = "*", serverHost
	}
	switch ns {
	case "*":
	case ".":
		if svc.Namespace != gwNamespace {
			return false
		}
	default:
		if svc.Namespace != ns {
			return false
		}
	}
	return registry.HostMatches(dnsName, svc.Hostname)
}

// sniClusters are the SNI-DNAT clusters of a gateway's AUTO_PASSTHROUGH
// servers: for every service the proxy sees that a server admits, one per
// port (but UDP) and one per subset of its DestinationRule.
func (b *build) sniClusters() []*clusterv3.Cluster {
	servers := b.autoPassthroughServers()
	if len(servers) == 0 {
		return nil
	}
	var out []*clusterv3.Cluster
	for _, svc := range b.m.visibleServices(b.p) {
		if !admittedBy(servers, svc) {
			continue
		}
		dr := b.m.destinationRule(svc, b.p)
		for _, port := range svc.Ports {
			if port.Protocol == registry.UDP {
				continue
			}
			out = append(out, b.sniCluster(svc, port, "", dr))
			if dr != nil {
				for _, s := range dr.spec.Subsets {
					out = append(out, b.sniCluster(svc, port, s.Name, dr))
				}
			}
		}
	}
	return out
}

// sniDNATServerNames are the server names an AUTO_PASSTHROUGH server's
// chain matches: its hosts (without their namespaces) as Envoy matches
// SNI names, where "*.suffix" covers every name under the suffix. An
// SNI-DNAT name puts its host last ("outbound_.9080_._.reviews.default.svc.cluster.local"),
// so a wildcard host stays as it is, an exact host matches as
// "*.<host>" (the host itself is never the SNI), and "*" is every name
// (anySNI).
func sniDNATServerNames(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		switch bare := bareHost(h); {
		case bare == anySNI:
			return []string{anySNI}
		case strings.HasPrefix(bare, "*."):
			out = append(out, bare)
		default:
			out = append(out, "*."+bare)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// autoPassthroughChain is the filter chain of an AUTO_PASSTHROUGH server:
// TLS connections whose SNI its hosts cover (names an earlier server of
// the port took are left out, with a warning), passed on undecrypted by
// the sni_cluster filter then tcp_proxy. tcp_proxy names BlackHoleCluster,
// which only a TLS connection without SNI reaches (sni_cluster changes
// nothing then) and which refuses it. Nil when no name is left.
func (b *build) autoPassthroughChain(s gatewayServer, claims sniClaims) *listenerv3.FilterChain {
	port := s.server.GetPort().GetNumber()
	object := s.gw.cfg.Key()
	field := fmt.Sprintf("spec.servers[%d]", s.index)
	names := claims.claim(b, sniDNATServerNames(s.server.Hosts), port, object+" "+field, object, field+".hosts")
	if len(names) == 0 {
		return nil
	}
	match := &listenerv3.FilterChainMatch{TransportProtocol: "tls"}
	if !slices.Contains(names, anySNI) {
		match.ServerNames = names
	}
	name := gatewaySNIDNATName(port, s.serverName(), s.gw.cfg.Name, s.gw.cfg.Namespace)
	return &listenerv3.FilterChain{
		Name:             name,
		FilterChainMatch: match,
		Filters: []*listenerv3.Filter{
			{Name: sniClusterName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&sniclusterv3.SniCluster{})}},
			tcpProxyFilter(clusterProxy(name, BlackHoleCluster)),
		},
	}
}
