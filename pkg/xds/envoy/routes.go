package envoy

import (
	"slices"
	"strconv"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	meshconfig "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/registry"
)

// BuildRoutes generates the RDS resources (RouteConfigurations) named, or
// every one the proxy's listeners refer to when names is empty:
//
//   - proxyless gRPC: "host:port", as its listener is named; one virtual
//     host whose domains include the name as requested (gRPC matches the
//     target's authority against them);
//   - sidecars: the port number ("9080"): a virtual host per service with
//     an HTTP port of that number, and a catch-all one for other hosts
//     (to PassthroughCluster, or a 502 under REGISTRY_ONLY);
//   - gateways: "http.<port>" for plaintext servers, and
//     "https.<port>.<server>.<gateway>.<namespace>" for each
//     TLS-terminating server: a virtual host per host of the
//     VirtualServices bound to the gateway.
//
// Routes come from the VirtualService that applies, else a default route
// to the service.
func BuildRoutes(p *Proxy, m *Model, names []string) Result {
	b := newBuild(p, m)
	if len(names) == 0 {
		names = routeNamesOf(BuildListeners(p, m, nil))
	}
	var out []Resource
	for _, name := range names {
		var rc *routev3.RouteConfiguration
		switch p.Kind {
		case ProxylessGRPC:
			rc = b.grpcRouteConfig(name)
		case Sidecar:
			rc = b.sidecarRouteConfig(name)
		case Gateway:
			rc = b.gatewayRouteConfig(name)
		}
		if rc != nil {
			out = append(out, Resource{Name: name, Message: rc})
		}
	}
	return b.result(out)
}

// grpcRouteConfig is the route configuration of a gRPC target.
func (b *build) grpcRouteConfig(name string) *routev3.RouteConfiguration {
	svc, port, ok := b.grpcTarget(name)
	if !ok {
		return nil
	}
	domains := &domainSet{}
	domains.add(name, svc.Hostname, svc.Hostname+":"+itoa(port.Number))
	vh := &routev3.VirtualHost{Name: name, Domains: domains.list, Routes: b.meshRoutes(svc, port)}
	return &routev3.RouteConfiguration{Name: name, VirtualHosts: []*routev3.VirtualHost{vh}}
}

// grpcTarget finds the service and port a gRPC client's "host:port" names:
// a full host name, or a short one ("reviews", "reviews.default") in the
// client's namespace.
func (b *build) grpcTarget(name string) (*registry.Service, registry.Port, bool) {
	t, err := ParseListenerTarget(name)
	if err != nil {
		return nil, registry.Port{}, false
	}
	for _, host := range candidateHosts(t.Host, b.p.Namespace, b.m.in.Domain) {
		if svc := b.m.service(host, b.p); svc != nil {
			port, ok := svc.Port(t.Port)
			return svc, port, ok
		}
	}
	return nil, registry.Port{}, false
}

// candidateHosts are the host names a client's host may mean, most
// specific first: as written, then completed as a Kubernetes name.
func candidateHosts(host, namespace, domain string) []string {
	if domain == "" {
		domain = registry.DefaultDomain
	}
	out := []string{host}
	switch strings.Count(host, ".") {
	case 0:
		out = append(out, registry.KubernetesHostname(host, namespace, domain))
	case 1:
		out = append(out, host+".svc."+domain)
	case 2:
		if strings.HasSuffix(host, ".svc") {
			out = append(out, host+"."+domain)
		}
	}
	return out
}

// meshRoutes are the routes of a service's port for sidecars and gRPC
// clients: the VirtualService bound to the mesh for its host, else the
// default route.
func (b *build) meshRoutes(svc *registry.Service, port registry.Port) []*routev3.Route {
	rc := routeContext{port: port.Number, gateway: "mesh", service: svc}
	if v := b.m.virtualServiceFor(svc.Hostname, "mesh", b.p); v != nil {
		return b.virtualServiceRoutes(v, rc)
	}
	return []*routev3.Route{b.defaultRoute(svc, port.Number)}
}

// sidecarRouteConfig is the route configuration of a sidecar's HTTP
// listener on one port.
func (b *build) sidecarRouteConfig(name string) *routev3.RouteConfiguration {
	n, err := strconv.ParseUint(name, 10, 32)
	if err != nil || n == 0 || n > 65535 {
		return nil
	}
	portNumber := uint32(n)
	rc := &routev3.RouteConfiguration{Name: name, ValidateClusters: boolFalse()}
	domains := &domainSet{}
	for _, svc := range b.m.visibleServices(b.p) {
		port, ok := svc.Port(portNumber)
		if !ok || !port.Protocol.IsHTTP() {
			continue
		}
		vh := &routev3.VirtualHost{Name: svc.Hostname + ":" + name}
		vh.Domains = domains.add(b.sidecarDomains(svc, portNumber)...)
		if len(vh.Domains) == 0 {
			continue
		}
		vh.Routes = b.meshRoutes(svc, port)
		rc.VirtualHosts = append(rc.VirtualHosts, vh)
	}
	rc.VirtualHosts = append(rc.VirtualHosts, b.catchAllHost())
	return rc
}

// sidecarDomains are the names an application may use for a service:
// the full host name, name.namespace and name.namespace.svc, the bare name
// in the proxy's own namespace, and the virtual IPs; each with and without
// the port.
func (b *build) sidecarDomains(svc *registry.Service, port uint32) []string {
	hosts := []string{svc.Hostname}
	if svc.Kind == registry.KubernetesService {
		hosts = append(hosts, svc.Name+"."+svc.Namespace, svc.Name+"."+svc.Namespace+".svc")
		if svc.Namespace == b.p.Namespace {
			hosts = append(hosts, svc.Name)
		}
	}
	hosts = append(hosts, svc.Addresses...)
	var out []string
	for _, h := range hosts {
		out = append(out, h, h+":"+itoa(port))
	}
	return out
}

// catchAllHost routes hosts no service claims, by the mesh's outbound
// traffic policy.
func (b *build) catchAllHost() *routev3.VirtualHost {
	if b.m.mesh().GetOutboundTrafficPolicy().GetMode() == meshconfig.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY {
		return &routev3.VirtualHost{Name: "block_all", Domains: []string{"*"}, Routes: []*routev3.Route{{
			Name:   "block_all",
			Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 502}},
		}}}
	}
	return &routev3.VirtualHost{Name: "allow_any", Domains: []string{"*"}, Routes: []*routev3.Route{{
		Name:  "allow_any",
		Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &routev3.Route_Route{Route: &routev3.RouteAction{
			ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: PassthroughCluster},
			Timeout:          zeroDuration(),
		}},
	}}}
}

// gatewayRouteConfig is the route configuration of a gateway's HTTP
// servers on a port ("http.<port>") or of one TLS-terminating server.
func (b *build) gatewayRouteConfig(name string) *routev3.RouteConfiguration {
	servers := b.gatewayServersForRoute(name)
	if len(servers) == 0 {
		return nil
	}
	rc := &routev3.RouteConfiguration{Name: name, ValidateClusters: boolFalse()}
	domains := &domainSet{}
	byHost := map[string]*routev3.VirtualHost{}
	for _, s := range servers {
		gwName := s.gw.cfg.Namespace + "/" + s.gw.cfg.Name
		for _, v := range b.m.vs {
			if !b.gatewaySees(v, gwName) {
				continue
			}
			for _, vsHost := range v.hosts {
				for _, serverHost := range s.server.Hosts {
					host, ok := intersectHosts(serverHost, vsHost, v.cfg.Namespace, s.gw.cfg.Namespace)
					if !ok || byHost[host] != nil {
						continue
					}
					vh := &routev3.VirtualHost{Name: host + ":" + itoa(s.server.GetPort().GetNumber())}
					vh.Domains = domains.add(host, host+":"+itoa(s.server.GetPort().GetNumber()))
					if len(vh.Domains) == 0 {
						continue
					}
					vh.Routes = b.virtualServiceRoutes(v, routeContext{port: s.server.GetPort().GetNumber(), gateway: gwName})
					if s.server.GetTls().GetHttpsRedirect() {
						vh.RequireTls = routev3.VirtualHost_ALL
					}
					byHost[host] = vh
					rc.VirtualHosts = append(rc.VirtualHosts, vh)
				}
			}
		}
	}
	slices.SortStableFunc(rc.VirtualHosts, func(a, c *routev3.VirtualHost) int { return strings.Compare(a.Name, c.Name) })
	return rc
}

// intersectHosts is the host a gateway server host ("namespace/host", or
// "host" meaning any namespace) and a VirtualService host have in common,
// if any: the more specific of the two when one covers the other.
func intersectHosts(serverHost, vsHost, vsNamespace, gwNamespace string) (string, bool) {
	if ns, h, ok := strings.Cut(serverHost, "/"); ok {
		switch ns {
		case "*":
		case ".":
			if vsNamespace != gwNamespace {
				return "", false
			}
		default:
			if vsNamespace != ns {
				return "", false
			}
		}
		serverHost = h
	}
	switch {
	case registry.HostMatches(serverHost, vsHost):
		return vsHost, true
	case registry.HostMatches(vsHost, serverHost):
		return serverHost, true
	}
	return "", false
}

// domainSet keeps the domains of one route configuration unique: Envoy
// rejects a domain in two virtual hosts.
type domainSet struct {
	seen map[string]bool
	list []string
}

// add records the domains not seen yet and returns them.
func (d *domainSet) add(domains ...string) []string {
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	var fresh []string
	for _, s := range domains {
		if s == "" || d.seen[s] {
			continue
		}
		d.seen[s] = true
		fresh = append(fresh, s)
		d.list = append(d.list, s)
	}
	return fresh
}

// routeNamesOf lists the RDS names that generated listeners refer to.
func routeNamesOf(r Result) []string {
	var out []string
	for _, res := range r.Resources {
		out = append(out, rdsNames(res.Message)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// gatewayServer is one server of a gateway that selects the proxy.
type gatewayServer struct {
	gw     *gatewayConfig
	server *networking.Server
	index  int
}

// serverName names a server in route names: its name, else its index.
func (s gatewayServer) serverName() string {
	if s.server.Name != "" {
		return s.server.Name
	}
	return strconv.Itoa(s.index)
}
