package envoy

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/gateway"
)

// The tcp and tls routes of VirtualServices: what a connection does when
// nothing in it is HTTP. A tcp route forwards every connection it matches
// (by port, gateway, source workload and namespace, and on sidecars the
// destination address); a tls route forwards a TLS connection by its SNI,
// without decrypting it. In each list the first route that matches wins,
// as Istio orders them.

// l4Match is what tcp and tls match conditions share.
type l4Match struct {
	port            uint32
	subnets         []string
	gateways        []string
	sourceLabels    map[string]string
	sourceNamespace string
}

func tcpMatch(m *networking.L4MatchAttributes) l4Match {
	return l4Match{m.GetPort(), m.GetDestinationSubnets(), m.GetGateways(), m.GetSourceLabels(), m.GetSourceNamespace()}
}

func tlsMatch(m *networking.TLSMatchAttributes) l4Match {
	return l4Match{m.GetPort(), m.GetDestinationSubnets(), m.GetGateways(), m.GetSourceLabels(), m.GetSourceNamespace()}
}

// l4Applies reports whether a match condition holds here: on this
// listener port, for this gateway (a short name is in the
// VirtualService's namespace), from this proxy's workload and namespace,
// and, where the listener has one address (a sidecar's per-VIP
// listener), to a destination in the subnets. A gateway listener has no
// such address: a match on subnets there is left out, with a warning.
func (b *build) l4Applies(v *virtualService, m l4Match, rc routeContext, field string) bool {
	if m.port != 0 && m.port != rc.port {
		return false
	}
	if len(m.gateways) > 0 && !slices.ContainsFunc(m.gateways, func(g string) bool { return resolveGatewayName(g, v.cfg.Namespace) == rc.gateway }) {
		return false
	}
	if !labelsInclude(b.p.Labels, m.sourceLabels) {
		return false
	}
	if m.sourceNamespace != "" && m.sourceNamespace != b.p.Namespace {
		return false
	}
	if len(m.subnets) == 0 {
		return true
	}
	if rc.vip == "" {
		b.w.add(v.cfg.Key(), field+".destinationSubnets", "destination subnets are matched on sidecars only (against the service address); match left out on gateway %s", rc.gateway)
		return false
	}
	return slices.ContainsFunc(m.subnets, func(s string) bool { return subnetContains(s, rc.vip) })
}

// subnetContains reports whether an address or CIDR covers addr.
func subnetContains(subnet, addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	if p, err := netip.ParsePrefix(subnet); err == nil {
		return p.Contains(a)
	}
	s, err := netip.ParseAddr(subnet)
	return err == nil && s == a
}

// tcpRoute is the first tcp route of a VirtualService that applies here
// (one without matches applies everywhere), and its field path.
func (b *build) tcpRoute(v *virtualService, rc routeContext) (*networking.TCPRoute, string) {
	for i, t := range v.spec.Tcp {
		field := fmt.Sprintf("spec.tcp[%d]", i)
		if len(t.GetMatch()) == 0 {
			return t, field
		}
		for j, m := range t.GetMatch() {
			if b.l4Applies(v, tcpMatch(m), rc, fmt.Sprintf("%s.match[%d]", field, j)) {
				return t, field
			}
		}
	}
	return nil, ""
}

// tcpProxy forwards connections to a route's destinations: one cluster,
// or weighted clusters when there are several (the route's weights; all
// alike when it gives none, and destinations of weight 0 left out when
// others have one). Cluster names are as for http routes
// (destinationCluster); the Gateway API's share of backends that do not
// resolve (gateway.RejectedBackendHost) goes to BlackHoleCluster, which
// refuses it. statPrefix names the weighted case's statistics;
// a single cluster's are under its name. Nil, with a warning, when no
// destination is left.
func (b *build) tcpProxy(v *virtualService, dests []*networking.RouteDestination, field string, rc routeContext, statPrefix string) *tcpproxyv3.TcpProxy {
	total := 0
	for _, d := range dests {
		if d.GetWeight() > 0 {
			total += int(d.GetWeight())
		}
	}
	var weighted []*tcpproxyv3.TcpProxy_WeightedCluster_ClusterWeight
	for i, d := range dests {
		if total > 0 && d.GetWeight() <= 0 {
			continue
		}
		name := BlackHoleCluster
		if d.GetDestination().GetHost() != gateway.RejectedBackendHost {
			name, _, _ = b.destinationCluster(v, d.GetDestination(), rc, fmt.Sprintf("%s.route[%d].destination", field, i))
		}
		weight := uint32(1)
		if total > 0 {
			weight = uint32(d.GetWeight())
		}
		weighted = append(weighted, &tcpproxyv3.TcpProxy_WeightedCluster_ClusterWeight{Name: name, Weight: weight})
	}
	switch len(weighted) {
	case 0:
		b.w.add(v.cfg.Key(), field+".route", "no destination; route left out")
		return nil
	case 1:
		return clusterProxy(weighted[0].Name, weighted[0].Name)
	}
	return &tcpproxyv3.TcpProxy{
		StatPrefix:       statPrefix,
		ClusterSpecifier: &tcpproxyv3.TcpProxy_WeightedClusters{WeightedClusters: &tcpproxyv3.TcpProxy_WeightedCluster{Clusters: weighted}},
	}
}

// clusterProxy forwards every connection to one cluster.
func clusterProxy(statPrefix, cluster string) *tcpproxyv3.TcpProxy {
	return &tcpproxyv3.TcpProxy{StatPrefix: statPrefix, ClusterSpecifier: &tcpproxyv3.TcpProxy_Cluster{Cluster: cluster}}
}

func tcpProxyFilter(tp *tcpproxyv3.TcpProxy) *listenerv3.Filter {
	return &listenerv3.Filter{Name: tcpProxyName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(tp)}}
}

// tlsInspector reads the SNI (and ALPN) of TLS connections, so filter
// chains can match on them.
func tlsInspector() []*listenerv3.ListenerFilter {
	return []*listenerv3.ListenerFilter{{
		Name:       tlsInspectorName,
		ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(&tlsinspectorv3.TlsInspector{})},
	}}
}

// anySNI stands for "every server name" among SNI claims: a filter chain
// matching TLS without server_names.
const anySNI = "*"

// sniClaims are the server names the TLS filter chains of one listener
// match, each with who claimed it ("object field"): Envoy rejects two
// chains with the same match, so each name is matched once, by the first
// claim.
type sniClaims map[string]string

// claim takes the names not claimed yet for by, warning (object, field)
// for the others, and returns those it took. A set that holds anySNI is
// that alone: a chain for every name.
func (c sniClaims) claim(b *build, names []string, port uint32, by, object, field string) []string {
	if slices.Contains(names, anySNI) {
		names = []string{anySNI}
	}
	var took []string
	for _, n := range names {
		if other, taken := c[n]; taken {
			b.w.add(object, field, "SNI host %s on port %d is already served by %s; left out here", n, port, other)
			continue
		}
		c[n] = by
		took = append(took, n)
	}
	slices.Sort(took)
	return took
}

// sniChain is a filter chain for the TLS connections whose SNI is one of
// names (any, for anySNI), forwarding them with tp.
func sniChain(port uint32, names []string, tp *tcpproxyv3.TcpProxy) *listenerv3.FilterChain {
	match := &listenerv3.FilterChainMatch{TransportProtocol: "tls"}
	if !slices.Contains(names, anySNI) {
		match.ServerNames = names
	}
	return &listenerv3.FilterChain{
		Name:             tlsChainName(port, names),
		FilterChainMatch: match,
		Filters:          []*listenerv3.Filter{tcpProxyFilter(tp)},
	}
}

// tlsRouteChains are the filter chains of a VirtualService's tls routes
// that apply here, in order: each route's chain matches the SNI names of
// its matches that apply, as sni turns each sniHosts entry into names (as
// written on sidecars; met with the server's hosts on gateways). A name
// an earlier chain of the listener matches is left out, with a warning;
// so is a route left without names.
func (b *build) tlsRouteChains(v *virtualService, rc routeContext, claims sniClaims, sni func(string) []string) []*listenerv3.FilterChain {
	object := v.cfg.Key()
	var out []*listenerv3.FilterChain
	for i, t := range v.spec.Tls {
		field := fmt.Sprintf("spec.tls[%d]", i)
		var took []string
		for j, m := range t.GetMatch() {
			mf := fmt.Sprintf("%s.match[%d]", field, j)
			if !b.l4Applies(v, tlsMatch(m), rc, mf) {
				continue
			}
			var names []string
			for _, h := range m.GetSniHosts() {
				for _, n := range sni(h) {
					if !slices.Contains(took, n) { // another match of the route names it too
						names = append(names, n)
					}
				}
			}
			slices.Sort(names)
			took = append(took, claims.claim(b, slices.Compact(names), rc.port, object+" "+field, object, mf+".sniHosts")...)
		}
		if len(took) == 0 {
			continue
		}
		tp := b.tcpProxy(v, t.GetRoute(), field, rc, tlsChainName(rc.port, took))
		if tp == nil {
			for _, n := range took {
				delete(claims, n)
			}
			continue
		}
		slices.Sort(took)
		out = append(out, sniChain(rc.port, took, tp))
	}
	return out
}

// bareHost drops the "namespace/" of a gateway server host.
func bareHost(h string) string {
	if _, host, ok := strings.Cut(h, "/"); ok {
		return host
	}
	return h
}
