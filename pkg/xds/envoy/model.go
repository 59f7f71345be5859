package envoy

import (
	"cmp"
	"slices"
	"strings"

	meshconfig "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/gateway"
	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/registry"
)

// EndpointSource gives the endpoints of a service by its key
// (registry.ServiceKey). *registry.Registry is one.
type EndpointSource interface {
	EndpointsOf(serviceKey string) []registry.Endpoint
}

// EndpointIndex is an EndpointSource over a fixed set of endpoints, by
// service key, for tests and tools.
type EndpointIndex map[string][]registry.Endpoint

// IndexEndpoints groups endpoints by service.
func IndexEndpoints(eps []registry.Endpoint) EndpointIndex {
	x := EndpointIndex{}
	for _, e := range eps {
		x[e.Service] = append(x[e.Service], e)
	}
	return x
}

// EndpointsOf returns the endpoints of the service.
func (x EndpointIndex) EndpointsOf(serviceKey string) []registry.Endpoint {
	return slices.Clone(x[serviceKey])
}

// Inputs are what the builders read: the registry and the routing
// configuration in force, at one moment.
type Inputs struct {
	Services  []registry.Service
	Endpoints EndpointSource
	// VirtualServices, DestinationRules and Gateways are accepted Istio
	// configs (Gateway API output included), with *v1alpha3 specs.
	VirtualServices  []config.Config
	DestinationRules []config.Config
	Gateways         []config.Config
	// Mesh is the mesh config in force; nil means Istio's defaults where
	// the builders need one (connect timeout 10s, trust domain
	// cluster.local, root namespace istio-system, ALLOW_ANY).
	Mesh *meshconfig.MeshConfig
	// Domain resolves short host names ("reviews") in routing config;
	// empty means the domain each config was read with, else cluster.local.
	Domain string
}

// Model is Inputs indexed for the builders. It is immutable once built and
// safe to share between goroutines generating for different proxies.
type Model struct {
	in       Inputs
	byHost   map[string][]*registry.Service // namespaces in order
	services []*registry.Service            // by key
	vs       []*virtualService              // oldest first
	dr       []*destinationRule             // oldest first
	gw       []*gatewayConfig
	// By exact host, and those with a wildcard host, each oldest first:
	// lookups look at the candidates only.
	vsByHost   map[string][]*virtualService
	vsWildcard []*virtualService
	drByHost   map[string][]*destinationRule
	drWildcard []*destinationRule
	// meshConfig is in.Mesh, or Istio's defaults.
	meshConfig *meshconfig.MeshConfig
	// traits say which inputs shape which types in this Model.
	traits traits
}

// traits are what a Model holds that makes more types depend on a kind
// than usual (see affects).
type traits struct {
	// l4Routes: some VirtualService has tcp or tls routes, which the
	// listeners of sidecars and gateways are built from.
	l4Routes bool
	// autoPassthrough: some Istio Gateway has an AUTO_PASSTHROUGH server,
	// whose hosts decide a gateway's SNI-DNAT clusters and endpoints.
	autoPassthrough bool
}

// or is what either set of traits makes depend.
func (t traits) or(o traits) traits {
	return traits{l4Routes: t.l4Routes || o.l4Routes, autoPassthrough: t.autoPassthrough || o.autoPassthrough}
}

type virtualService struct {
	cfg      config.Config
	spec     *networking.VirtualService
	hosts    []string // resolved
	gateways []string // "namespace/name" or "mesh"
	// elementPrefixes: prefix matches are by path element, as the
	// Gateway API's (gateway.RouteSemanticsAnnotation).
	elementPrefixes bool
}

type destinationRule struct {
	cfg  config.Config
	spec *networking.DestinationRule
	host string // resolved
}

type gatewayConfig struct {
	cfg  config.Config
	spec *networking.Gateway
}

// NewModel indexes inputs.
func NewModel(in Inputs) *Model {
	m := &Model{in: in, byHost: map[string][]*registry.Service{}, meshConfig: in.Mesh,
		vsByHost: map[string][]*virtualService{}, drByHost: map[string][]*destinationRule{}}
	if m.meshConfig == nil {
		m.meshConfig = mesh.Default()
	}
	for i := range in.Services {
		s := &in.Services[i]
		m.services = append(m.services, s)
		m.byHost[s.Hostname] = append(m.byHost[s.Hostname], s)
	}
	slices.SortFunc(m.services, func(a, b *registry.Service) int { return strings.Compare(a.ResourceName(), b.ResourceName()) })
	for _, list := range m.byHost {
		slices.SortFunc(list, func(a, b *registry.Service) int { return strings.Compare(a.Namespace, b.Namespace) })
	}
	for _, c := range sortedConfigs(in.VirtualServices) {
		spec, ok := c.Spec.(*networking.VirtualService)
		if !ok || spec == nil {
			continue
		}
		v := &virtualService{cfg: c, spec: spec, elementPrefixes: c.Annotations[gateway.RouteSemanticsAnnotation] == "gateway"}
		for _, h := range spec.Hosts {
			v.hosts = append(v.hosts, registry.ResolveHost(h, c.Namespace, m.domain(c)))
		}
		for _, g := range spec.Gateways {
			v.gateways = append(v.gateways, resolveGatewayName(g, c.Namespace))
		}
		m.vs = append(m.vs, v)
		m.traits.l4Routes = m.traits.l4Routes || len(spec.Tcp)+len(spec.Tls) > 0
		wildcard := false
		for _, h := range v.hosts {
			if strings.HasPrefix(h, "*") {
				wildcard = true
			} else if l := m.vsByHost[h]; len(l) == 0 || l[len(l)-1] != v {
				m.vsByHost[h] = append(l, v)
			}
		}
		if wildcard {
			m.vsWildcard = append(m.vsWildcard, v)
		}
	}
	for _, c := range sortedConfigs(in.DestinationRules) {
		spec, ok := c.Spec.(*networking.DestinationRule)
		if !ok || spec == nil {
			continue
		}
		d := &destinationRule{cfg: c, spec: spec, host: registry.ResolveHost(spec.Host, c.Namespace, m.domain(c))}
		m.dr = append(m.dr, d)
		if strings.HasPrefix(d.host, "*") {
			m.drWildcard = append(m.drWildcard, d)
		} else {
			m.drByHost[d.host] = append(m.drByHost[d.host], d)
		}
	}
	for _, c := range sortedConfigs(in.Gateways) {
		if spec, ok := c.Spec.(*networking.Gateway); ok && spec != nil {
			m.gw = append(m.gw, &gatewayConfig{cfg: c, spec: spec})
			m.traits.autoPassthrough = m.traits.autoPassthrough || slices.ContainsFunc(spec.Servers, func(s *networking.Server) bool { return kindOf(s) == autoPassthrough })
		}
	}
	return m
}

// sortedConfigs orders configs as Istio resolves conflicts: oldest first,
// then by namespace and name.
func sortedConfigs(cs []config.Config) []config.Config {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b config.Config) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp); c != 0 {
			return c
		}
		return strings.Compare(a.ResourceName(), b.ResourceName())
	})
	return out
}

// resolveGatewayName makes a VirtualService's gateway reference
// "namespace/name"; "mesh" stays as it is.
func resolveGatewayName(g, namespace string) string {
	if g == "mesh" || strings.Contains(g, "/") {
		return g
	}
	return namespace + "/" + g
}

func (m *Model) domain(c config.Config) string {
	return cmp.Or(m.in.Domain, c.Domain, registry.DefaultDomain)
}

// mesh returns the mesh config, never nil.
func (m *Model) mesh() *meshconfig.MeshConfig { return m.meshConfig }

func (m *Model) trustDomain() string { return cmp.Or(m.mesh().GetTrustDomain(), "cluster.local") }

func (m *Model) rootNamespace() string { return cmp.Or(m.mesh().GetRootNamespace(), "istio-system") }

// service finds the service of a host that a proxy sees: the one of the
// proxy's namespace if it declares the host, else the first visible one.
func (m *Model) service(host string, p *Proxy) *registry.Service {
	var found *registry.Service
	for _, s := range m.byHost[host] {
		if !s.VisibleTo(p.Namespace) {
			continue
		}
		if s.Namespace == p.Namespace {
			return s
		}
		if found == nil {
			found = s
		}
	}
	return found
}

// visibleServices lists, once per host, the services a proxy sees, in
// host order.
func (m *Model) visibleServices(p *Proxy) []*registry.Service {
	hosts := make([]string, 0, len(m.byHost))
	for h := range m.byHost {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	var out []*registry.Service
	for _, h := range hosts {
		if s := m.service(h, p); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// endpoints returns the endpoints of a service.
func (m *Model) endpoints(s *registry.Service) []registry.Endpoint {
	if m.in.Endpoints == nil {
		return nil
	}
	return m.in.Endpoints.EndpointsOf(s.ResourceName())
}

// destinationRule finds the DestinationRule that applies to a service for
// a proxy, as Istio does: one in the proxy's namespace first, then one in
// the service's namespace, then one in the root namespace; within each,
// an exact host before the most specific wildcard, oldest first. Rules not
// exported to the proxy's namespace do not count.
func (m *Model) destinationRule(s *registry.Service, p *Proxy) *destinationRule {
	for _, ns := range []string{p.Namespace, s.Namespace, m.rootNamespace()} {
		var best *destinationRule
		for _, d := range slices.Concat(m.drByHost[s.Hostname], m.drWildcard) {
			if d.cfg.Namespace != ns || !registry.Visible(d.spec.ExportTo, d.cfg.Namespace, p.Namespace) ||
				!registry.HostMatches(d.host, s.Hostname) {
				continue
			}
			if best == nil || moreSpecific(d.host, best.host) {
				best = d
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// moreSpecific reports whether host pattern a is more specific than b: an
// exact host beats a wildcard, a longer wildcard a shorter one.
func moreSpecific(a, b string) bool {
	aWild, bWild := strings.HasPrefix(a, "*"), strings.HasPrefix(b, "*")
	if aWild != bWild {
		return !aWild
	}
	return len(a) > len(b)
}

// virtualServiceFor finds the VirtualService bound to gateway (a
// "namespace/name", or "mesh") that routes host for a proxy: an exact host
// before a wildcard (the most specific one); then, as istiod orders them,
// one private to the proxy's namespace (exportTo ".") before one exported
// to it by name before a public one, so a namespace can route its own
// traffic differently (a Gateway API consumer route); then the oldest.
func (m *Model) virtualServiceFor(host, gateway string, p *Proxy) *virtualService {
	var best *virtualService
	bestRank := 0
	for _, v := range m.vsByHost[host] {
		rank, ok := exportRank(v, p.Namespace)
		if ok && v.boundTo(gateway) && (best == nil || rank < bestRank) {
			best, bestRank = v, rank
		}
	}
	if best != nil {
		return best
	}
	var bestHost string
	for _, v := range m.vsWildcard {
		rank, ok := exportRank(v, p.Namespace)
		if !ok || !v.boundTo(gateway) {
			continue
		}
		for _, h := range v.hosts {
			if !registry.HostMatches(h, host) {
				continue
			}
			if best == nil || moreSpecific(h, bestHost) || (h == bestHost && rank < bestRank) {
				best, bestHost, bestRank = v, h, rank
			}
		}
	}
	return best
}

// exportRank places a VirtualService for a proxy's namespace: 0 when it
// is private to it (exportTo "." in that namespace), 1 when exported to
// it by name, 2 when public; ok is false when the namespace does not see
// it.
func exportRank(v *virtualService, namespace string) (rank int, ok bool) {
	to := v.spec.ExportTo
	if !registry.Visible(to, v.cfg.Namespace, namespace) {
		return 0, false
	}
	switch {
	case len(to) == 0 || slices.Contains(to, "*"):
		return 2, true
	case slices.Contains(to, namespace):
		return 1, true
	}
	return 0, true
}

// gatewaySees reports whether a VirtualService applies on the proxy for a
// gateway ("namespace/name"): bound to it, and exported to the proxy's
// namespace, as istiod selects a gateway's VirtualServices.
func (b *build) gatewaySees(v *virtualService, gateway string) bool {
	_, visible := exportRank(v, b.p.Namespace)
	return visible && v.boundTo(gateway)
}

// boundTo reports whether the VirtualService applies to a gateway: with no
// gateways listed it applies to the mesh only.
func (v *virtualService) boundTo(gateway string) bool {
	if len(v.gateways) == 0 {
		return gateway == "mesh"
	}
	return slices.Contains(v.gateways, gateway)
}

// subset finds a subset of a DestinationRule by name.
func (d *destinationRule) subset(name string) *networking.Subset {
	if d == nil {
		return nil
	}
	for _, s := range d.spec.Subsets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// gatewaysFor lists the Gateways whose selector picks the proxy.
func (m *Model) gatewaysFor(p *Proxy) []*gatewayConfig {
	var out []*gatewayConfig
	for _, g := range m.gw {
		if len(g.spec.Selector) == 0 {
			continue
		}
		ok := true
		for k, v := range g.spec.Selector {
			if p.Labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, g)
		}
	}
	return out
}
