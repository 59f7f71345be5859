package envoy

import (
	"net/netip"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	upstreamhttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/registry"
)

// defaultConnectTimeout is Istio's when the mesh config sets none.
const defaultConnectTimeout = 10 * time.Second

// BuildClusters generates the CDS resources of a proxy: one cluster per
// service port ("outbound|port||host") and one per DestinationRule subset
// ("outbound|port|subset|host") of every service the proxy sees, or only
// the named ones. Sidecars also get BlackHoleCluster and
// PassthroughCluster, gateways BlackHoleCluster. A gateway with
// AUTO_PASSTHROUGH servers also gets, for every service port and subset
// the hosts of one of those servers admit, the cluster named by the SNI a
// mesh client sends there ("outbound_.port_.subset_.host", see
// sniClusters). A name that is not a cluster of a visible service is
// left out, as a resource that does not exist.
func BuildClusters(p *Proxy, m *Model, names []string) Result {
	b := newBuild(p, m)
	var out []Resource
	add := func(c *clusterv3.Cluster) {
		if c != nil {
			out = append(out, Resource{Name: c.Name, Message: c})
		}
	}
	if len(names) == 0 {
		for _, svc := range m.visibleServices(p) {
			dr := m.destinationRule(svc, p)
			for _, port := range svc.Ports {
				if port.Protocol == registry.UDP {
					continue
				}
				add(b.cluster(svc, port, "", dr))
				if dr != nil {
					for _, s := range dr.spec.Subsets {
						add(b.cluster(svc, port, s.Name, dr))
					}
				}
			}
		}
		switch p.Kind {
		case Sidecar:
			add(blackHoleCluster())
			add(passthroughCluster(m))
		case Gateway:
			// Where tcp routes send connections to refuse (the Gateway
			// API's backends that do not resolve, and TLS without SNI on
			// AUTO_PASSTHROUGH servers).
			add(blackHoleCluster())
			for _, c := range b.sniClusters() {
				add(c)
			}
		}
		return b.result(out)
	}
	for _, name := range names {
		switch name {
		case BlackHoleCluster:
			if p.Kind != ProxylessGRPC {
				add(blackHoleCluster())
			}
			continue
		case PassthroughCluster:
			if p.Kind != ProxylessGRPC {
				add(passthroughCluster(m))
			}
			continue
		}
		ref, err := ParseClusterName(name)
		if err != nil {
			continue
		}
		svc, port, dr, ok := b.clusterOf(ref)
		if !ok {
			continue
		}
		if ref.SNI {
			add(b.sniCluster(svc, port, ref.Subset, dr))
		} else {
			add(b.cluster(svc, port, ref.Subset, dr))
		}
	}
	return b.result(out)
}

// clusterOf finds what a cluster name refers to for the proxy: a visible
// service with that port, its DestinationRule, and the subset if one is
// named. An SNI-DNAT name refers to something only on a gateway whose
// AUTO_PASSTHROUGH servers admit the service, and never to a UDP port.
func (b *build) clusterOf(ref ClusterRef) (*registry.Service, registry.Port, *destinationRule, bool) {
	svc := b.m.service(ref.Host, b.p)
	if svc == nil {
		return nil, registry.Port{}, nil, false
	}
	port, ok := svc.Port(ref.Port)
	if !ok {
		return nil, registry.Port{}, nil, false
	}
	if ref.SNI && (port.Protocol == registry.UDP || !b.autoPassthroughAdmits(svc)) {
		return nil, registry.Port{}, nil, false
	}
	dr := b.m.destinationRule(svc, b.p)
	if ref.Subset != "" && dr.subset(ref.Subset) == nil {
		return nil, registry.Port{}, nil, false
	}
	return svc, port, dr, true
}

// cluster builds one outbound cluster, or nil (with a warning) when the
// proxy cannot be given it.
func (b *build) cluster(svc *registry.Service, port registry.Port, subsetName string, dr *destinationRule) *clusterv3.Cluster {
	name := ClusterName(port.Number, subsetName, svc.Hostname)
	c, policy, object := b.baseCluster(name, svc, port, subsetName, dr, false)
	if c == nil {
		return nil
	}
	f := b.p.Kind
	if f != ProxylessGRPC {
		if opts := b.upstreamHTTPOptions(port, policy.connectionPool); opts != nil {
			c.TypedExtensionProtocolOptions = map[string]*anypb.Any{httpOptionsKey: mustAny(opts)}
		}
	}

	tls := policy.tls
	if tls != nil && svc.MeshExternal && tls.Mode == networking.ClientTLSSettings_ISTIO_MUTUAL {
		b.w.add(object, "trafficPolicy.tls.mode", "ISTIO_MUTUAL to %s, a service outside the mesh; sent anyway", svc.Hostname)
	}
	sni := SNIClusterName(port.Number, subsetName, svc.Hostname)
	if tls != nil && tls.Mode != networking.ClientTLSSettings_ISTIO_MUTUAL {
		sni = strings.TrimPrefix(svc.Hostname, "*.")
	}
	sans := svc.SubjectAltNames
	if len(sans) == 0 && tls.GetMode() == networking.ClientTLSSettings_ISTIO_MUTUAL {
		sans = spiffeIdentities(b.m.trustDomain(), b.m.endpoints(svc))
	}
	ctx, err := upstreamTLS(tls, f, sans, sni)
	if err != nil {
		b.w.add(object, "trafficPolicy.tls", "cluster %s not generated for %s clients: %v", name, f, err)
		return nil
	}
	if ctx != nil {
		c.TransportSocket = &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)}}
	}
	return c
}

// sniCluster builds the SNI-DNAT cluster of a service port (and subset)
// for a gateway's AUTO_PASSTHROUGH servers: named by the SNI a mesh
// client sends (SNIClusterName), with the endpoints and the
// DestinationRule's load balancer, connection pool and outlier detection
// of the outbound cluster, but no TLS of its own: the client's mutual TLS
// passes through the gateway to the workload untouched, so the rule's tls
// settings are not the gateway's to apply. Nor are upstream HTTP options:
// what goes through is opaque TLS. A headless service's endpoints come
// over EDS, as the original destination of a connection to the gateway
// is the gateway itself.
func (b *build) sniCluster(svc *registry.Service, port registry.Port, subsetName string, dr *destinationRule) *clusterv3.Cluster {
	c, _, _ := b.baseCluster(SNIClusterName(port.Number, subsetName, svc.Hostname), svc, port, subsetName, dr, true)
	return c
}

// baseCluster is what an outbound cluster and an SNI-DNAT one share: how
// endpoints are found and the DestinationRule's policy for the port and
// subset, but TLS and upstream protocol options. It returns the policy
// and the object warnings name; a nil cluster (with a warning) when the
// proxy cannot be given it.
func (b *build) baseCluster(name string, svc *registry.Service, port registry.Port, subsetName string, dr *destinationRule, sniDNAT bool) (*clusterv3.Cluster, trafficPolicy, string) {
	f := b.p.Kind
	object := "service " + svc.ResourceName()
	if dr != nil {
		object = dr.cfg.Key()
	}
	c := &clusterv3.Cluster{
		Name:           name,
		ConnectTimeout: durationOr(b.m.mesh().GetConnectTimeout(), defaultConnectTimeout),
	}
	switch {
	case svc.Resolution == registry.DNS && f != ProxylessGRPC:
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS}
		c.LoadAssignment = b.dnsLoadAssignment(name, svc, port, -1)
	case svc.Resolution == registry.DNS || svc.Resolution == registry.DNSRoundRobin:
		// gRPC resolves one name (A27's LOGICAL_DNS); so does Envoy for
		// DNS_ROUND_ROBIN.
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_LOGICAL_DNS}
		c.LoadAssignment = b.dnsLoadAssignment(name, svc, port, 1)
		if len(c.LoadAssignment.GetEndpoints()) == 0 {
			b.w.add(object, "", "cluster %s: no host name to resolve", name)
			return nil, trafficPolicy{}, object
		}
	case svc.Resolution == registry.Passthrough && f == Sidecar && !sniDNAT:
		// Only a sidecar has the address the client dialed to pass
		// through to; a gateway's ORIGINAL_DST would be itself.
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_ORIGINAL_DST}
		c.LbPolicy = clusterv3.Cluster_CLUSTER_PROVIDED
	default:
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS}
		c.EdsClusterConfig = &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource(), ServiceName: name}
	}

	subset := dr.subset(subsetName)
	policy := policyFor(dr, subset, port.Number)
	if c.LbPolicy != clusterv3.Cluster_CLUSTER_PROVIDED {
		applyLoadBalancer(c, policy.loadBalancer, f, &b.w, object)
	}
	applyConnectionPool(c, policy.connectionPool, f)
	applyOutlierDetection(c, policy.outlierDetection, f)
	if f != ProxylessGRPC && c.CommonLbConfig == nil {
		// Unhealthy endpoints are sent so operators see them; Envoy's
		// panic mode would route to them when most are unhealthy.
		c.CommonLbConfig = &clusterv3.Cluster_CommonLbConfig{HealthyPanicThreshold: &typev3.Percent{Value: 0}}
	}
	return c, policy, object
}

// upstreamHTTPOptions picks the upstream HTTP protocol for Envoy: HTTP/2
// for HTTP2 and gRPC ports (or HTTP ports whose rule asks for the
// upgrade), and the pool's idle timeout and requests per connection.
func (b *build) upstreamHTTPOptions(port registry.Port, cp *networking.ConnectionPoolSettings) *upstreamhttpv3.HttpProtocolOptions {
	h2 := port.Protocol.IsHTTP2() ||
		(port.Protocol == registry.HTTP && cp.GetHttp().GetH2UpgradePolicy() == networking.ConnectionPoolSettings_HTTPSettings_UPGRADE)
	common := httpOptions(cp)
	if !h2 && common == nil {
		return nil
	}
	o := &upstreamhttpv3.HttpProtocolOptions{CommonHttpProtocolOptions: common}
	if h2 {
		opts := &corev3.Http2ProtocolOptions{}
		if n := cp.GetHttp().GetMaxConcurrentStreams(); n > 0 {
			opts.MaxConcurrentStreams = wrapUInt32(uint32(n))
		}
		o.UpstreamProtocolOptions = &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: opts},
		}}
	} else {
		o.UpstreamProtocolOptions = &upstreamhttpv3.HttpProtocolOptions_UseDownstreamProtocolConfig{UseDownstreamProtocolConfig: &upstreamhttpv3.HttpProtocolOptions_UseDownstreamHttpConfig{}}
	}
	return o
}

// dnsLoadAssignment lists the host names (or addresses) a DNS cluster
// resolves, at most limit of them (negative: all).
func (b *build) dnsLoadAssignment(name string, svc *registry.Service, port registry.Port, limit int) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: name}
	seen := map[string]bool{}
	var lbs []*endpointv3.LbEndpoint
	for _, e := range b.m.endpoints(svc) {
		n, ok := e.PortFor(port)
		if !ok || seen[e.Address] || e.Health != registry.Healthy {
			continue
		}
		seen[e.Address] = true
		lbs = append(lbs, &endpointv3.LbEndpoint{
			HostIdentifier:      &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socketAddress(e.Address, n)}},
			LoadBalancingWeight: wrapUInt32(max(e.Weight, 1)),
		})
		if limit > 0 && len(lbs) == limit {
			break
		}
	}
	if len(lbs) > 0 {
		cla.Endpoints = []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbs}}
	}
	return cla
}

// blackHoleCluster drops everything: a static cluster with no endpoints.
func blackHoleCluster() *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 BlackHoleCluster,
		ConnectTimeout:       durationpb.New(defaultConnectTimeout),
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
	}
}

// passthroughCluster forwards to the destination the application dialed.
func passthroughCluster(m *Model) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 PassthroughCluster,
		ConnectTimeout:       durationOr(m.mesh().GetConnectTimeout(), defaultConnectTimeout),
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_ORIGINAL_DST},
		LbPolicy:             clusterv3.Cluster_CLUSTER_PROVIDED,
	}
}

// socketAddress is a TCP address: an IP, or a host name for DNS clusters.
func socketAddress(host string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Protocol:      corev3.SocketAddress_TCP,
		Address:       host,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// clusterIsEDS reports whether a generated cluster reads its endpoints
// over EDS.
func clusterIsEDS(m any) bool {
	c, ok := m.(*clusterv3.Cluster)
	return ok && c.GetType() == clusterv3.Cluster_EDS
}
