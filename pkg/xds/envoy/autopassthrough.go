package envoy

import (
	"fmt"
	"slices"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	sniclusterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/sni_cluster/v3"
)

// AUTO_PASSTHROUGH gateway servers (the east-west gateways of
// multi-network meshes): a mesh client's sidecar sends its mutual TLS
// connection to the gateway with the SNI "outbound_.port_.subset_.host"
// (SNIClusterName), which names the destination itself; the gateway
// needs no VirtualService and forwards the connection undecrypted to the
// cluster of that name. Envoy's sni_cluster network filter
// makes the connection's SNI the cluster tcp_proxy connects to, in place
// of the one tcp_proxy names.

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
