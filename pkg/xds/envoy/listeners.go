package envoy

import (
	"fmt"
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
	meshconfig "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/registry"
)

// BuildListeners generates the LDS resources of a proxy, the named ones or
// all it should have:
//
//   - proxyless gRPC: for each "host:port" asked, an API listener of that
//     exact name whose HTTP connection manager reads route configuration
//     "host:port" over ADS and runs the fault filter, then the router;
//   - sidecars: virtualOutbound (15001, original destination, to
//     PassthroughCluster or BlackHoleCluster by the outbound policy), an
//     HTTP listener per port number that an HTTP service port uses
//     ("0.0.0.0_9080", routes "9080"), and a TCP proxy listener per
//     virtual IP and port of other services ("10.0.0.1_5432"), none bound
//     to a port themselves: iptables sends traffic to 15001. A TCP proxy
//     listener follows the tcp routes of the VirtualService of its host
//     (weighted clusters, subsets), and on TLS ports its tls routes, by
//     SNI; without one, the service's cluster;
//   - gateways: a listener per port of the Istio Gateway servers that
//     select the proxy ("0.0.0.0_8080"): plaintext HTTP servers share one
//     filter chain (routes "http.<port>"), each TLS-terminating HTTPS
//     server gets its own, matched by SNI; a TCP server gets a TCP proxy
//     from the tcp routes of the VirtualServices bound to the gateway
//     ("tcp.<port>.<server>.<gateway>.<namespace>"); a TLS PASSTHROUGH
//     server a chain per tls route, by SNI, and a TLS server that
//     terminates TLS a chain per VirtualService host with tcp routes
//     ("tls.<port>.<server name>"); an AUTO_PASSTHROUGH server one chain
//     matched by the SNI-DNAT names its hosts cover
//     ("sni-dnat.<port>.<server>.<gateway>.<namespace>"), where the
//     sni_cluster filter hands each connection to the cluster its SNI
//     names ("outbound_.port_.subset_.host", see BuildClusters). A port
//     serves one class of server: HTTP, TLS, or one TCP server.
func BuildListeners(p *Proxy, m *Model, names []string) Result {
	b := newBuild(p, m)
	var out []Resource
	switch p.Kind {
	case ProxylessGRPC:
		out = b.grpcListeners(names)
	case Sidecar:
		out = b.sidecarListeners()
	case Gateway:
		out = b.gatewayListeners()
	}
	if len(names) > 0 && p.Kind != ProxylessGRPC {
		keep := wanted(names)
		out = slices.DeleteFunc(out, func(r Resource) bool { return !keep(r.Name) })
	}
	return b.result(out)
}

// grpcListeners are the API listeners of the named gRPC targets, or of
// every port of every visible service.
func (b *build) grpcListeners(names []string) []Resource {
	if len(names) == 0 {
		for _, svc := range b.m.visibleServices(b.p) {
			for _, port := range svc.Ports {
				if port.Protocol != registry.UDP {
					names = append(names, svc.Hostname+":"+itoa(port.Number))
				}
			}
		}
	}
	var out []Resource
	for _, name := range names {
		if _, _, ok := b.grpcTarget(name); !ok {
			continue
		}
		hcm := httpConnectionManager(name, name, ProxylessGRPC)
		l := &listenerv3.Listener{
			Name:        name,
			ApiListener: &listenerv3.ApiListener{ApiListener: mustAny(hcm)},
		}
		out = append(out, Resource{Name: name, Message: l})
	}
	return out
}

// httpConnectionManager reads routes over ADS and runs the fault filter
// (configured per route) then the router. gRPC clients get nothing else:
// they reject some fields Envoy accepts (A41: xff_num_trusted_hops,
// original_ip_detection_extensions).
func httpConnectionManager(statPrefix, routeName string, f Flavour) *hcmv3.HttpConnectionManager {
	h := &hcmv3.HttpConnectionManager{
		StatPrefix: statPrefix,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: routeName,
		}},
		HttpFilters: []*hcmv3.HttpFilter{
			{Name: faultFilterName, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&faultv3.HTTPFault{})}},
			{Name: routerFilterName, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&routerv3.Router{})}},
		},
	}
	switch f {
	case Sidecar:
		h.CodecType = hcmv3.HttpConnectionManager_AUTO
		h.NormalizePath = wrapperspb.Bool(true)
	case Gateway:
		h.CodecType = hcmv3.HttpConnectionManager_AUTO
		h.NormalizePath = wrapperspb.Bool(true)
		h.UseRemoteAddress = wrapperspb.Bool(true)
	}
	return h
}

func (b *build) sidecarListeners() []Resource {
	var out []Resource
	passthrough := PassthroughCluster
	if b.m.mesh().GetOutboundTrafficPolicy().GetMode() == meshconfig.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY {
		passthrough = BlackHoleCluster
	}
	out = append(out, Resource{Name: VirtualOutboundListener, Message: &listenerv3.Listener{
		Name:           VirtualOutboundListener,
		Address:        socketAddress("0.0.0.0", virtualOutboundPort),
		UseOriginalDst: wrapperspb.Bool(true),
		FilterChains:   []*listenerv3.FilterChain{tcpProxyChain(passthrough, passthrough)},
	}})
	httpPorts := map[uint32]bool{}
	for _, svc := range b.m.visibleServices(b.p) {
		for _, port := range svc.Ports {
			switch {
			case port.Protocol == registry.UDP:
			case port.Protocol.IsHTTP():
				httpPorts[port.Number] = true
			default:
				for _, vip := range svc.Addresses {
					l := b.sidecarTCPListener(svc, port, vip)
					out = append(out, Resource{Name: l.Name, Message: l})
				}
			}
		}
	}
	for port := range httpPorts {
		name := listenerName("0.0.0.0", port)
		out = append(out, Resource{Name: name, Message: &listenerv3.Listener{
			Name:       name,
			Address:    socketAddress("0.0.0.0", port),
			BindToPort: wrapperspb.Bool(false),
			FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{hcmFilter(
				httpConnectionManager("outbound_"+name, sidecarHTTPRouteName(port), Sidecar))}}},
		}})
	}
	return out
}

func hcmFilter(h *hcmv3.HttpConnectionManager) *listenerv3.Filter {
	return &listenerv3.Filter{Name: hcmFilterName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(h)}}
}

func tcpProxyChain(statPrefix, cluster string) *listenerv3.FilterChain {
	return &listenerv3.FilterChain{Filters: []*listenerv3.Filter{tcpProxyFilter(clusterProxy(statPrefix, cluster))}}
}

// sidecarTCPListener is the listener of one virtual IP and non-HTTP port
// of a service ("10.0.0.1_5432", not bound: iptables hands connections
// over from virtualOutbound). Connections go where the VirtualService
// bound to the mesh for the host sends them: on TLS ports (TLS, HTTPS)
// the first tls route whose sniHosts the connection's SNI names, read by
// the TLS inspector; otherwise the first tcp route that matches; without
// either, the service's own cluster.
func (b *build) sidecarTCPListener(svc *registry.Service, port registry.Port, vip string) *listenerv3.Listener {
	name := listenerName(vip, port.Number)
	statPrefix := "outbound|" + itoa(port.Number) + "||" + svc.Hostname
	l := &listenerv3.Listener{Name: name, Address: socketAddress(vip, port.Number), BindToPort: wrapperspb.Bool(false)}
	fallback := clusterProxy(statPrefix, ClusterName(port.Number, "", svc.Hostname))
	if v := b.m.virtualServiceFor(svc.Hostname, "mesh", b.p); v != nil {
		rc := routeContext{port: port.Number, gateway: "mesh", service: svc, vip: vip}
		if port.Protocol == registry.TLS || port.Protocol == registry.HTTPS {
			l.FilterChains = b.tlsRouteChains(v, rc, sniClaims{}, func(h string) []string { return []string{h} })
		}
		if t, field := b.tcpRoute(v, rc); t != nil {
			if tp := b.tcpProxy(v, t.GetRoute(), field, rc, statPrefix); tp != nil {
				fallback = tp
			}
		}
	}
	if len(l.FilterChains) > 0 {
		l.ListenerFilters = tlsInspector()
	}
	l.FilterChains = append(l.FilterChains, &listenerv3.FilterChain{Filters: []*listenerv3.Filter{tcpProxyFilter(fallback)}})
	return l
}

// gatewayServers lists the servers of the gateways that select the proxy.
func (b *build) gatewayServers() []gatewayServer {
	var out []gatewayServer
	for _, g := range b.m.gatewaysFor(b.p) {
		for i, s := range g.spec.Servers {
			out = append(out, gatewayServer{gw: g, server: s, index: i})
		}
	}
	return out
}

// serverKind sorts a gateway server by what its chains do with a
// connection.
type serverKind int

const (
	plainHTTP       serverKind = iota // plaintext HTTP: http routes
	terminatedHTTPS                   // TLS terminated, matched by SNI: http routes
	plainTCP                          // plaintext TCP (and TCP-based protocols): tcp routes
	passthroughTLS                    // TLS passed through, matched by SNI: tls routes
	terminatedTLS                     // TLS terminated, matched by SNI: tcp routes
	autoPassthrough                   // TLS passed through to the cluster its SNI names (AUTO_PASSTHROUGH)
	notGenerated
)

func (k serverKind) String() string {
	switch k {
	case plainHTTP:
		return "plaintext HTTP"
	case terminatedHTTPS:
		return "HTTPS"
	case plainTCP:
		return "TCP"
	case passthroughTLS:
		return "TLS passthrough"
	case terminatedTLS:
		return "TLS"
	case autoPassthrough:
		return "TLS auto passthrough"
	}
	return "unknown"
}

func kindOf(s *networking.Server) serverKind {
	terminates := func() bool {
		switch s.GetTls().GetMode() {
		case networking.ServerTLSSettings_SIMPLE, networking.ServerTLSSettings_MUTUAL,
			networking.ServerTLSSettings_ISTIO_MUTUAL, networking.ServerTLSSettings_OPTIONAL_MUTUAL:
			return true
		}
		return false
	}
	passes := s.GetTls().GetMode() == networking.ServerTLSSettings_PASSTHROUGH
	auto := s.GetTls().GetMode() == networking.ServerTLSSettings_AUTO_PASSTHROUGH
	switch registry.ParseProtocol(s.GetPort().GetProtocol()) {
	case registry.HTTP, registry.HTTP2, registry.GRPC, registry.GRPCWeb:
		return plainHTTP
	case registry.HTTPS:
		switch {
		case terminates():
			return terminatedHTTPS
		case passes:
			return passthroughTLS
		case auto:
			return autoPassthrough
		}
	case registry.TLS:
		switch {
		case terminates():
			return terminatedTLS
		case passes:
			return passthroughTLS
		case auto:
			return autoPassthrough
		}
	case registry.TCP, registry.Mongo, registry.Redis, registry.MySQL:
		return plainTCP
	}
	return notGenerated
}

// gatewayServersForRoute finds the servers a gateway route name serves.
func (b *build) gatewayServersForRoute(name string) []gatewayServer {
	var out []gatewayServer
	for _, s := range b.gatewayServers() {
		port := s.server.GetPort().GetNumber()
		switch kindOf(s.server) {
		case plainHTTP:
			if name == gatewayHTTPRouteName(port) {
				out = append(out, s)
			}
		case terminatedHTTPS:
			if name == gatewayHTTPSRouteName(port, s.serverName(), s.gw.cfg.Name, s.gw.cfg.Namespace) {
				out = append(out, s)
			}
		}
	}
	return out
}

// gatewayPort is the listener of one port of a gateway while its servers
// are added, in order. A port serves one class of server, as Gateway
// validation requires of the servers of one Gateway (here across every
// Gateway that selects the proxy): plaintext HTTP servers, which share
// one chain; TLS servers (HTTPS, TLS passthrough, TLS terminated, TLS
// auto passthrough), whose chains are matched by SNI, each name once; or one plaintext TCP server,
// whose connections carry nothing to tell servers apart.
type gatewayPort struct {
	l      *listenerv3.Listener
	class  string // of the first server taken: "HTTP", "TLS" or "TCP"
	first  string // that server, "object field (kind)"
	plain  bool   // the plaintext HTTP chain is there
	hasTLS bool   // chains matched by SNI are there
	sni    sniClaims
}

// portClass is the class of server a kind belongs to on a port.
func portClass(k serverKind) string {
	switch k {
	case plainHTTP:
		return "HTTP"
	case plainTCP:
		return "TCP"
	}
	return "TLS"
}

func (b *build) gatewayListeners() []Resource {
	byPort := map[uint32]*gatewayPort{}
	var ports []uint32
	for _, s := range b.gatewayServers() {
		port := s.server.GetPort().GetNumber()
		object := s.gw.cfg.Key()
		field := fmt.Sprintf("spec.servers[%d]", s.index)
		kind := kindOf(s.server)
		if kind == notGenerated {
			b.w.add(object, field, "%s servers (TLS mode %s) are not generated yet; server left out",
				s.server.GetPort().GetProtocol(), s.server.GetTls().GetMode())
			continue
		}
		var tlsContext *corev3.TransportSocket
		if kind == terminatedHTTPS || kind == terminatedTLS {
			ctx, err := downstreamTLS(s.server.GetTls())
			if err != nil {
				b.w.add(object, field+".tls", "%v; server left out", err)
				continue
			}
			if kind == terminatedTLS {
				// What is inside is no HTTP: offer no HTTP protocols.
				ctx.CommonTlsContext.AlpnProtocols = nil
			}
			tlsContext = &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)}}
		}
		gp := byPort[port]
		if gp == nil {
			name := listenerName("0.0.0.0", port)
			gp = &gatewayPort{l: &listenerv3.Listener{Name: name, Address: socketAddress("0.0.0.0", port)}, sni: sniClaims{}}
			byPort[port] = gp
			ports = append(ports, port)
		}
		switch class := portClass(kind); {
		case gp.first == "":
			gp.class, gp.first = class, fmt.Sprintf("%s %s (%s)", object, field, kind)
		case class != gp.class:
			b.w.add(object, field, "port %d is already served by %s; a %s server cannot share it; server left out", port, gp.first, kind)
			continue
		case class == "TCP":
			b.w.add(object, field, "port %d is already served by %s, and plaintext TCP carries nothing to tell servers apart; server left out", port, gp.first)
			continue
		}
		gwName := s.gw.cfg.Namespace + "/" + s.gw.cfg.Name
		rc := routeContext{port: port, gateway: gwName}
		switch kind {
		case plainHTTP:
			if gp.plain {
				continue // plaintext servers of a port share one chain and route configuration
			}
			gp.plain = true
			gp.l.FilterChains = append(gp.l.FilterChains, &listenerv3.FilterChain{Filters: []*listenerv3.Filter{hcmFilter(
				httpConnectionManager("outbound_"+gp.l.Name, gatewayHTTPRouteName(port), Gateway))}})
		case terminatedHTTPS:
			var hosts []string
			for _, h := range s.server.Hosts {
				hosts = append(hosts, bareHost(h))
			}
			sni := gp.sni.claim(b, hosts, port, object+" "+field, object, field+".hosts")
			if len(sni) == 0 {
				continue // every host it names is served by another server
			}
			if slices.Contains(sni, anySNI) {
				sni = nil
			}
			route := gatewayHTTPSRouteName(port, s.serverName(), s.gw.cfg.Name, s.gw.cfg.Namespace)
			gp.hasTLS = true
			gp.l.FilterChains = append(gp.l.FilterChains, &listenerv3.FilterChain{
				Name:             route,
				FilterChainMatch: &listenerv3.FilterChainMatch{ServerNames: sni, TransportProtocol: "tls"},
				TransportSocket:  tlsContext,
				Filters:          []*listenerv3.Filter{hcmFilter(httpConnectionManager(route, route, Gateway))},
			})
		case plainTCP:
			name := gatewayTCPName(port, s.serverName(), s.gw.cfg.Name, s.gw.cfg.Namespace)
			tp := b.gatewayTCPProxy(s, rc, name)
			if tp == nil {
				b.w.add(object, field, "no tcp route of a VirtualService bound to gateway %s applies to port %d; the server forwards nothing", gwName, port)
				continue
			}
			gp.l.FilterChains = append(gp.l.FilterChains, &listenerv3.FilterChain{Name: name, Filters: []*listenerv3.Filter{tcpProxyFilter(tp)}})
		case passthroughTLS, terminatedTLS:
			var chains []*listenerv3.FilterChain
			if kind == passthroughTLS {
				chains = b.gatewayPassthroughChains(s, rc, gp.sni)
			} else {
				chains = b.gatewayTerminatedChains(s, rc, gp.sni, tlsContext)
			}
			if len(chains) == 0 {
				routes := "tls"
				if kind == terminatedTLS {
					routes = "tcp"
				}
				b.w.add(object, field, "no %s route of a VirtualService bound to gateway %s applies to the server's hosts on port %d; the server forwards nothing", routes, gwName, port)
				continue
			}
			gp.hasTLS = true
			gp.l.FilterChains = append(gp.l.FilterChains, chains...)
		case autoPassthrough:
			chain := b.autoPassthroughChain(s, gp.sni)
			if chain == nil {
				continue // every host it names is served by another server
			}
			gp.hasTLS = true
			gp.l.FilterChains = append(gp.l.FilterChains, chain)
		}
	}
	var out []Resource
	for _, port := range ports {
		gp := byPort[port]
		if len(gp.l.FilterChains) == 0 {
			continue
		}
		if gp.hasTLS {
			gp.l.ListenerFilters = tlsInspector()
		}
		out = append(out, Resource{Name: gp.l.Name, Message: gp.l})
	}
	return out
}

// serverVirtualService is a VirtualService bound to a gateway server's
// gateway, with the hosts it and the server have in common.
type serverVirtualService struct {
	v     *virtualService
	hosts []string
}

// serverVirtualServices lists, oldest first, the VirtualServices bound to
// a server's gateway whose hosts meet the server's (a server host
// "namespace/host" admits that namespace's only).
func (b *build) serverVirtualServices(s gatewayServer) []serverVirtualService {
	gwName := s.gw.cfg.Namespace + "/" + s.gw.cfg.Name
	var out []serverVirtualService
	for _, v := range b.m.vs {
		if !b.gatewaySees(v, gwName) {
			continue
		}
		var hosts []string
		for _, vsHost := range v.hosts {
			for _, serverHost := range s.server.Hosts {
				if h, ok := intersectHosts(serverHost, vsHost, v.cfg.Namespace, s.gw.cfg.Namespace); ok {
					hosts = append(hosts, h)
				}
			}
		}
		if len(hosts) > 0 {
			slices.Sort(hosts)
			out = append(out, serverVirtualService{v: v, hosts: slices.Compact(hosts)})
		}
	}
	return out
}

// gatewayTCPProxy forwards a plaintext TCP server's connections: the
// first tcp route that applies, of the server's VirtualServices in order;
// nil if none does.
func (b *build) gatewayTCPProxy(s gatewayServer, rc routeContext, statPrefix string) *tcpproxyv3.TcpProxy {
	for _, sv := range b.serverVirtualServices(s) {
		if t, field := b.tcpRoute(sv.v, rc); t != nil {
			return b.tcpProxy(sv.v, t.GetRoute(), field, rc, statPrefix)
		}
	}
	return nil
}

// gatewayPassthroughChains are the chains of a TLS passthrough server:
// one per tls route of its VirtualServices that applies, matched by the
// route's sniHosts met with the server's hosts.
func (b *build) gatewayPassthroughChains(s gatewayServer, rc routeContext, claims sniClaims) []*listenerv3.FilterChain {
	var out []*listenerv3.FilterChain
	for _, sv := range b.serverVirtualServices(s) {
		out = append(out, b.tlsRouteChains(sv.v, rc, claims, func(sni string) []string {
			var names []string
			for _, serverHost := range s.server.Hosts {
				if h, ok := intersectHosts(serverHost, sni, sv.v.cfg.Namespace, s.gw.cfg.Namespace); ok {
					names = append(names, h)
				}
			}
			return names
		})...)
	}
	return out
}

// gatewayTerminatedChains are the chains of a TLS server that terminates
// TLS and forwards what is inside: one per VirtualService of the server
// with a tcp route that applies, matched by the hosts the two have in
// common (a Gateway API TLSRoute on a Terminate listener routes by its
// hostnames so), each decrypting with the server's TLS context.
func (b *build) gatewayTerminatedChains(s gatewayServer, rc routeContext, claims sniClaims, tlsContext *corev3.TransportSocket) []*listenerv3.FilterChain {
	var out []*listenerv3.FilterChain
	for _, sv := range b.serverVirtualServices(s) {
		t, field := b.tcpRoute(sv.v, rc)
		if t == nil {
			continue
		}
		object := sv.v.cfg.Key()
		names := claims.claim(b, sv.hosts, rc.port, object+" spec.hosts", object, "spec.hosts")
		if len(names) == 0 {
			continue
		}
		tp := b.tcpProxy(sv.v, t.GetRoute(), field, rc, tlsChainName(rc.port, names))
		if tp == nil {
			for _, n := range names {
				delete(claims, n)
			}
			continue
		}
		chain := sniChain(rc.port, names, tp)
		chain.TransportSocket = tlsContext
		out = append(out, chain)
	}
	return out
}

// rdsNames are the route configuration names a listener refers to.
func rdsNames(m any) []string {
	l, ok := m.(*listenerv3.Listener)
	if !ok {
		return nil
	}
	var out []string
	add := func(h *hcmv3.HttpConnectionManager) {
		if n := h.GetRds().GetRouteConfigName(); n != "" {
			out = append(out, n)
		}
	}
	if a := l.GetApiListener().GetApiListener(); a != nil {
		h := &hcmv3.HttpConnectionManager{}
		if a.UnmarshalTo(h) == nil {
			add(h)
		}
	}
	for _, fc := range l.FilterChains {
		for _, f := range fc.Filters {
			h := &hcmv3.HttpConnectionManager{}
			if tc := f.GetTypedConfig(); tc != nil && tc.MessageIs(h) && tc.UnmarshalTo(h) == nil {
				add(h)
			}
		}
	}
	return out
}
