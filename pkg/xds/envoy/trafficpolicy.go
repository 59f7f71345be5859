package envoy

import (
	"math"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"
)

// trafficPolicy is the DestinationRule policy in force for one cluster:
// the rule's top-level policy, overridden field by field by its settings
// for the port, then by the subset's policy and the subset's settings for
// the port, as Istio merges them.
type trafficPolicy struct {
	loadBalancer     *networking.LoadBalancerSettings
	connectionPool   *networking.ConnectionPoolSettings
	outlierDetection *networking.OutlierDetection
	tls              *networking.ClientTLSSettings
}

func policyFor(dr *destinationRule, subset *networking.Subset, port uint32) trafficPolicy {
	var p trafficPolicy
	if dr != nil {
		p.apply(dr.spec.TrafficPolicy, port)
	}
	if subset != nil {
		p.apply(subset.TrafficPolicy, port)
	}
	return p
}

func (p *trafficPolicy) apply(tp *networking.TrafficPolicy, port uint32) {
	if tp == nil {
		return
	}
	p.set(tp.LoadBalancer, tp.ConnectionPool, tp.OutlierDetection, tp.Tls)
	for _, pl := range tp.PortLevelSettings {
		if pl.GetPort().GetNumber() == port {
			p.set(pl.LoadBalancer, pl.ConnectionPool, pl.OutlierDetection, pl.Tls)
		}
	}
}

func (p *trafficPolicy) set(lb *networking.LoadBalancerSettings, cp *networking.ConnectionPoolSettings,
	od *networking.OutlierDetection, tls *networking.ClientTLSSettings) {
	if lb != nil {
		p.loadBalancer = lb
	}
	if cp != nil {
		p.connectionPool = cp
	}
	if od != nil {
		p.outlierDetection = od
	}
	if tls != nil {
		p.tls = tls
	}
}

// Ring sizes when a consistent hash names none: Envoy's and gRPC's
// default minimum.
const defaultMinimumRingSize = 1024

// applyLoadBalancer sets the cluster's load balancer. Istio's default is
// LEAST_REQUEST for Envoy; gRPC's is round robin. gRPC has no RANDOM or
// MAGLEV: round robin and ring hash stand in for them.
func applyLoadBalancer(c *clusterv3.Cluster, lb *networking.LoadBalancerSettings, f Flavour, w *warnings, object string) {
	c.LbPolicy = clusterv3.Cluster_LEAST_REQUEST
	if f == ProxylessGRPC {
		c.LbPolicy = clusterv3.Cluster_ROUND_ROBIN
	}
	if lb == nil {
		return
	}
	if ch := lb.GetConsistentHash(); ch != nil {
		minRing := ch.GetMinimumRingSize()
		if rh := ch.GetRingHash(); rh != nil {
			minRing = rh.GetMinimumRingSize()
		}
		if ch.GetMaglev() != nil && f != ProxylessGRPC {
			c.LbPolicy = clusterv3.Cluster_MAGLEV
			if size := ch.GetMaglev().GetTableSize(); size > 0 {
				c.LbConfig = &clusterv3.Cluster_MaglevLbConfig_{MaglevLbConfig: &clusterv3.Cluster_MaglevLbConfig{TableSize: wrapperspb.UInt64(size)}}
			}
			return
		}
		if ch.GetMaglev() != nil {
			w.add(object, "trafficPolicy.loadBalancer.consistentHash.maglev", "gRPC has no Maglev load balancer; using a ring hash")
		}
		if minRing == 0 {
			minRing = defaultMinimumRingSize
		}
		c.LbPolicy = clusterv3.Cluster_RING_HASH
		c.LbConfig = &clusterv3.Cluster_RingHashLbConfig_{RingHashLbConfig: &clusterv3.Cluster_RingHashLbConfig{
			MinimumRingSize: wrapperspb.UInt64(minRing),
			HashFunction:    clusterv3.Cluster_RingHashLbConfig_XX_HASH,
		}}
		return
	}
	switch lb.GetSimple() {
	case networking.LoadBalancerSettings_ROUND_ROBIN:
		c.LbPolicy = clusterv3.Cluster_ROUND_ROBIN
	case networking.LoadBalancerSettings_LEAST_REQUEST, networking.LoadBalancerSettings_LEAST_CONN:
		c.LbPolicy = clusterv3.Cluster_LEAST_REQUEST
	case networking.LoadBalancerSettings_RANDOM:
		if f == ProxylessGRPC {
			w.add(object, "trafficPolicy.loadBalancer.simple", "gRPC has no RANDOM load balancer; using round robin")
			c.LbPolicy = clusterv3.Cluster_ROUND_ROBIN
		} else {
			c.LbPolicy = clusterv3.Cluster_RANDOM
		}
	case networking.LoadBalancerSettings_PASSTHROUGH:
		if f == ProxylessGRPC {
			w.add(object, "trafficPolicy.loadBalancer.simple", "gRPC cannot pass traffic through to the original destination; using round robin")
			c.LbPolicy = clusterv3.Cluster_ROUND_ROBIN
		} else {
			c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_ORIGINAL_DST}
			c.LbPolicy = clusterv3.Cluster_CLUSTER_PROVIDED
			c.EdsClusterConfig = nil
		}
	}
}

// hashPolicies are the route hash policies a consistent-hash load balancer
// needs. gRPC hashes only on a header or on its channel (A42), so a source
// IP hash becomes the channel id, and cookie or query hashes are dropped.
func hashPolicies(lb *networking.LoadBalancerSettings, f Flavour, w *warnings, object string) []*routev3.RouteAction_HashPolicy {
	ch := lb.GetConsistentHash()
	if ch == nil {
		return nil
	}
	switch {
	case ch.GetHttpHeaderName() != "":
		return []*routev3.RouteAction_HashPolicy{{PolicySpecifier: &routev3.RouteAction_HashPolicy_Header_{
			Header: &routev3.RouteAction_HashPolicy_Header{HeaderName: ch.GetHttpHeaderName()}}}}
	case ch.GetUseSourceIp():
		if f == ProxylessGRPC {
			return []*routev3.RouteAction_HashPolicy{{PolicySpecifier: &routev3.RouteAction_HashPolicy_FilterState_{
				FilterState: &routev3.RouteAction_HashPolicy_FilterState{Key: "io.grpc.channel_id"}}}}
		}
		return []*routev3.RouteAction_HashPolicy{{PolicySpecifier: &routev3.RouteAction_HashPolicy_ConnectionProperties_{
			ConnectionProperties: &routev3.RouteAction_HashPolicy_ConnectionProperties{SourceIp: true}}}}
	case ch.GetHttpCookie() != nil:
		if f == ProxylessGRPC {
			w.add(object, "trafficPolicy.loadBalancer.consistentHash.httpCookie", "gRPC cannot hash on a cookie; requests are spread by the ring hash without a key")
			return nil
		}
		cookie := ch.GetHttpCookie()
		return []*routev3.RouteAction_HashPolicy{{PolicySpecifier: &routev3.RouteAction_HashPolicy_Cookie_{
			Cookie: &routev3.RouteAction_HashPolicy_Cookie{Name: cookie.GetName(), Path: cookie.GetPath(), Ttl: cookie.GetTtl()}}}}
	case ch.GetHttpQueryParameterName() != "":
		if f == ProxylessGRPC {
			w.add(object, "trafficPolicy.loadBalancer.consistentHash.httpQueryParameterName", "gRPC cannot hash on a query parameter; requests are spread by the ring hash without a key")
			return nil
		}
		return []*routev3.RouteAction_HashPolicy{{PolicySpecifier: &routev3.RouteAction_HashPolicy_QueryParameter_{
			QueryParameter: &routev3.RouteAction_HashPolicy_QueryParameter{Name: ch.GetHttpQueryParameterName()}}}}
	}
	return nil
}

// maxThreshold is what Istio puts in circuit breakers a DestinationRule
// leaves unset, lifting Envoy's defaults (1024) out of the way.
const maxThreshold = math.MaxUint32

// applyConnectionPool sets circuit breakers and connection limits. gRPC
// implements only max_requests (A32), so that is all it is sent.
func applyConnectionPool(c *clusterv3.Cluster, cp *networking.ConnectionPoolSettings, f Flavour) {
	http, tcp := cp.GetHttp(), cp.GetTcp()
	if f == ProxylessGRPC {
		if n := http.GetHttp2MaxRequests(); n > 0 {
			c.CircuitBreakers = &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{
				Priority: corev3.RoutingPriority_DEFAULT, MaxRequests: wrapperspb.UInt32(uint32(n)),
			}}}
		}
		return
	}
	t := &clusterv3.CircuitBreakers_Thresholds{
		Priority:           corev3.RoutingPriority_DEFAULT,
		MaxConnections:     thresholdOr(tcp.GetMaxConnections()),
		MaxPendingRequests: thresholdOr(http.GetHttp1MaxPendingRequests()),
		MaxRequests:        thresholdOr(http.GetHttp2MaxRequests()),
		MaxRetries:         thresholdOr(http.GetMaxRetries()),
		TrackRemaining:     true,
	}
	c.CircuitBreakers = &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{t}}
	if d := tcp.GetConnectTimeout(); d != nil {
		c.ConnectTimeout = d
	}
	if ka := tcp.GetTcpKeepalive(); ka != nil {
		keepalive := &corev3.TcpKeepalive{}
		if ka.Probes > 0 {
			keepalive.KeepaliveProbes = wrapperspb.UInt32(ka.Probes)
		}
		if ka.Time != nil {
			keepalive.KeepaliveTime = wrapperspb.UInt32(uint32(ka.Time.AsDuration() / time.Second))
		}
		if ka.Interval != nil {
			keepalive.KeepaliveInterval = wrapperspb.UInt32(uint32(ka.Interval.AsDuration() / time.Second))
		}
		c.UpstreamConnectionOptions = &clusterv3.UpstreamConnectionOptions{TcpKeepalive: keepalive}
	}
}

func thresholdOr(n int32) *wrapperspb.UInt32Value {
	if n > 0 {
		return wrapperspb.UInt32(uint32(n))
	}
	return wrapperspb.UInt32(maxThreshold)
}

// httpOptions are the common HTTP options of a connection pool, for
// Envoy's HttpProtocolOptions.
func httpOptions(cp *networking.ConnectionPoolSettings) *corev3.HttpProtocolOptions {
	http := cp.GetHttp()
	if http.GetIdleTimeout() == nil && http.GetMaxRequestsPerConnection() == 0 {
		return nil
	}
	o := &corev3.HttpProtocolOptions{IdleTimeout: http.GetIdleTimeout()}
	if n := http.GetMaxRequestsPerConnection(); n > 0 {
		o.MaxRequestsPerConnection = wrapperspb.UInt32(uint32(n))
	}
	return o
}

// applyOutlierDetection sets outlier detection as Istio does: consecutive
// 5xx and gateway errors enforced at 100%, success-rate ejection off.
// gRPC accepts the message (A50) but acts only on its success-rate and
// failure-percentage parts, which Istio's API does not set.
func applyOutlierDetection(c *clusterv3.Cluster, od *networking.OutlierDetection, f Flavour) {
	if od == nil {
		return
	}
	out := &clusterv3.OutlierDetection{
		EnforcingSuccessRate: wrapperspb.UInt32(0),
		Interval:             od.Interval,
		BaseEjectionTime:     od.BaseEjectionTime,
	}
	if od.MaxEjectionPercent > 0 {
		out.MaxEjectionPercent = wrapperspb.UInt32(uint32(min(od.MaxEjectionPercent, 100)))
	}
	consecutive := od.GetConsecutive_5XxErrors()
	if consecutive == nil && od.ConsecutiveErrors > 0 {
		consecutive = wrapperspb.UInt32(uint32(od.ConsecutiveErrors))
	}
	if consecutive != nil {
		if v := consecutive.GetValue(); v > 0 {
			out.Consecutive_5Xx = wrapperspb.UInt32(v)
			out.EnforcingConsecutive_5Xx = wrapperspb.UInt32(100)
		} else {
			out.EnforcingConsecutive_5Xx = wrapperspb.UInt32(0)
		}
	}
	if g := od.GetConsecutiveGatewayErrors(); g != nil {
		if v := g.GetValue(); v > 0 {
			out.ConsecutiveGatewayFailure = wrapperspb.UInt32(v)
			out.EnforcingConsecutiveGatewayFailure = wrapperspb.UInt32(100)
		} else {
			out.EnforcingConsecutiveGatewayFailure = wrapperspb.UInt32(0)
		}
	}
	if od.SplitExternalLocalOriginErrors && f != ProxylessGRPC {
		out.SplitExternalLocalOriginErrors = true
		if n := od.GetConsecutiveLocalOriginFailures(); n != nil {
			out.ConsecutiveLocalOriginFailure = n
		}
	}
	c.OutlierDetection = out
	if od.MinHealthPercent > 0 && f != ProxylessGRPC {
		c.CommonLbConfig = &clusterv3.Cluster_CommonLbConfig{HealthyPanicThreshold: &typev3.Percent{Value: float64(od.MinHealthPercent)}}
	}
}

// durationOr returns d, or def when d is unset.
func durationOr(d *durationpb.Duration, def time.Duration) *durationpb.Duration {
	if d != nil && d.AsDuration() > 0 {
		return d
	}
	return durationpb.New(def)
}
