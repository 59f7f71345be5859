package envoy

import (
	"fmt"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
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
//     to a port themselves: iptables sends traffic to 15001;
//   - gateways: a listener per port of the Istio Gateway servers that
//     select the proxy ("0.0.0.0_8080"): plaintext HTTP servers share one
//     filter chain (routes "http.<port>"), each TLS-terminating server
//     gets its own, matched by SNI.
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
					name := listenerName(vip, port.Number)
					out = append(out, Resource{Name: name, Message: &listenerv3.Listener{
						Name:         name,
						Address:      socketAddress(vip, port.Number),
						BindToPort:   wrapperspb.Bool(false),
						FilterChains: []*listenerv3.FilterChain{tcpProxyChain("outbound|"+itoa(port.Number)+"||"+svc.Hostname, ClusterName(port.Number, "", svc.Hostname))},
					}})
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
	return &listenerv3.FilterChain{Filters: []*listenerv3.Filter{{
		Name: tcpProxyName,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&tcpproxyv3.TcpProxy{
			StatPrefix:       statPrefix,
			ClusterSpecifier: &tcpproxyv3.TcpProxy_Cluster{Cluster: cluster},
		})},
	}}}
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

// serverKind sorts a gateway server: plaintext HTTP, TLS-terminating
// HTTPS, or something not generated yet.
type serverKind int

const (
	plainHTTP serverKind = iota
	terminatedHTTPS
	notGenerated
)

func kindOf(s *networking.Server) serverKind {
	switch registry.ParseProtocol(s.GetPort().GetProtocol()) {
	case registry.HTTP, registry.HTTP2, registry.GRPC, registry.GRPCWeb:
		return plainHTTP
	case registry.HTTPS:
		switch s.GetTls().GetMode() {
		case networking.ServerTLSSettings_SIMPLE, networking.ServerTLSSettings_MUTUAL,
			networking.ServerTLSSettings_ISTIO_MUTUAL, networking.ServerTLSSettings_OPTIONAL_MUTUAL:
			return terminatedHTTPS
		}
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

func (b *build) gatewayListeners() []Resource {
	type listener struct {
		l       *listenerv3.Listener
		plain   bool
		sni     map[string]string // server name -> the gateway server that claimed it
		hasTLS  bool
		servers []gatewayServer
	}
	byPort := map[uint32]*listener{}
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
		l := byPort[port]
		if l == nil {
			name := listenerName("0.0.0.0", port)
			l = &listener{l: &listenerv3.Listener{Name: name, Address: socketAddress("0.0.0.0", port)}, sni: map[string]string{}}
			byPort[port] = l
			ports = append(ports, port)
		}
		switch kind {
		case plainHTTP:
			if l.plain {
				continue // plaintext servers of a port share one chain and route configuration
			}
			l.plain = true
			l.l.FilterChains = append(l.l.FilterChains, &listenerv3.FilterChain{Filters: []*listenerv3.Filter{hcmFilter(
				httpConnectionManager("outbound_"+l.l.Name, gatewayHTTPRouteName(port), Gateway))}})
		case terminatedHTTPS:
			ctx, err := downstreamTLS(s.server.GetTls())
			if err != nil {
				b.w.add(object, field+".tls", "%v; server left out", err)
				continue
			}
			var sni []string
			for _, h := range s.server.Hosts {
				if _, host, ok := strings.Cut(h, "/"); ok {
					h = host
				}
				if h == "*" {
					continue
				}
				if other, taken := l.sni[h]; taken {
					b.w.add(object, field+".hosts", "host %s on port %d is already served by %s; left out of this server", h, port, other)
					continue
				}
				l.sni[h] = object + " " + field
				sni = append(sni, h)
			}
			if len(sni) == 0 && slices.ContainsFunc(s.server.Hosts, func(h string) bool { return !strings.HasSuffix(h, "/*") && h != "*" }) {
				continue // every host it names is served by another server
			}
			slices.Sort(sni)
			route := gatewayHTTPSRouteName(port, s.serverName(), s.gw.cfg.Name, s.gw.cfg.Namespace)
			l.hasTLS = true
			l.l.FilterChains = append(l.l.FilterChains, &listenerv3.FilterChain{
				Name:             route,
				FilterChainMatch: &listenerv3.FilterChainMatch{ServerNames: sni, TransportProtocol: "tls"},
				TransportSocket:  &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)}},
				Filters:          []*listenerv3.Filter{hcmFilter(httpConnectionManager(route, route, Gateway))},
			})
		}
	}
	var out []Resource
	for _, port := range ports {
		l := byPort[port]
		if len(l.l.FilterChains) == 0 {
			continue
		}
		if l.hasTLS {
			l.l.ListenerFilters = []*listenerv3.ListenerFilter{{
				Name:       tlsInspectorName,
				ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(&tlsinspectorv3.TlsInspector{})},
			}}
		}
		out = append(out, Resource{Name: l.l.Name, Message: l.l})
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
