package envoy_test

import (
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	upstreamhttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	meshconfig "istio.io/api/mesh/v1alpha1"

	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

const (
	reviews   = "reviews.default.svc.cluster.local"
	ratings   = "ratings.default.svc.cluster.local"
	reviewsV1 = "outbound|9080|v1|" + reviews
	reviewsV2 = "outbound|9080|v2|" + reviews
	reviewsV3 = "outbound|9080|v3|" + reviews
	reviewsC  = "outbound|9080||" + reviews
	apiC      = "outbound|443||api.example.com"
)

func cluster(t *testing.T, r envoy.Result, name string) *clusterv3.Cluster {
	t.Helper()
	c, ok := r.ByName(name).(*clusterv3.Cluster)
	if !ok {
		t.Fatalf("no cluster %s among %v", name, r.Names())
	}
	return c
}

func upstreamTLS(t *testing.T, c *clusterv3.Cluster) *tlsv3.UpstreamTlsContext {
	t.Helper()
	if c.TransportSocket == nil {
		return nil
	}
	ctx := &tlsv3.UpstreamTlsContext{}
	if err := c.TransportSocket.GetTypedConfig().UnmarshalTo(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// A cluster per port and per subset, named as istiod names them, EDS over
// ADS, with the DestinationRule's policy: load balancer, circuit
// breakers, outlier detection, HTTP/2 to a gRPC port.
func TestSidecarClusters(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	r := envoy.BuildClusters(sidecar, m, nil)
	for _, want := range []string{reviewsC, reviewsV1, reviewsV2, reviewsV3, apiC, envoy.BlackHoleCluster, envoy.PassthroughCluster,
		"outbound|5432||db.default.svc.cluster.local", "outbound|9080||productpage.web.svc.cluster.local", "outbound|9090||productpage.web.svc.cluster.local"} {
		if r.ByName(want) == nil {
			t.Errorf("no cluster %s among %v", want, r.Names())
		}
	}

	c := cluster(t, r, reviewsC)
	if c.GetType() != clusterv3.Cluster_EDS || c.GetEdsClusterConfig().GetEdsConfig().GetAds() == nil || c.GetEdsClusterConfig().GetServiceName() != reviewsC {
		t.Errorf("reviews is not EDS over ADS: %s", asJSON(c))
	}
	if c.LbPolicy != clusterv3.Cluster_LEAST_REQUEST || c.ConnectTimeout.AsDuration() != 3*time.Second {
		t.Errorf("lb %s, connect timeout %s", c.LbPolicy, c.ConnectTimeout.AsDuration())
	}
	th := c.GetCircuitBreakers().GetThresholds()[0]
	if th.GetMaxConnections().GetValue() != 100 || th.GetMaxPendingRequests().GetValue() != 50 || th.GetMaxRequests().GetValue() != 1000 || th.GetMaxRetries().GetValue() != 3 {
		t.Errorf("circuit breakers: %s", asJSON(th))
	}
	od := c.GetOutlierDetection()
	if od.GetConsecutive_5Xx().GetValue() != 5 || od.GetEnforcingConsecutive_5Xx().GetValue() != 100 || od.GetInterval().AsDuration() != 10*time.Second ||
		od.GetBaseEjectionTime().AsDuration() != 30*time.Second || od.GetMaxEjectionPercent().GetValue() != 50 {
		t.Errorf("outlier detection: %s", asJSON(od))
	}
	opts := &upstreamhttpv3.HttpProtocolOptions{}
	if err := c.TypedExtensionProtocolOptions["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"].UnmarshalTo(opts); err != nil {
		t.Fatalf("no upstream HTTP options: %v", err)
	}
	if opts.GetExplicitHttpConfig().GetHttp2ProtocolOptions() == nil || opts.GetCommonHttpProtocolOptions().GetIdleTimeout().AsDuration() != time.Minute {
		t.Errorf("upstream HTTP options: %s", asJSON(opts))
	}

	// Subsets override the policy field by field.
	if v2 := cluster(t, r, reviewsV2); v2.LbPolicy != clusterv3.Cluster_RING_HASH || v2.GetRingHashLbConfig().GetMinimumRingSize().GetValue() != 1024 ||
		v2.GetCircuitBreakers().GetThresholds()[0].GetMaxRequests().GetValue() != 1000 {
		t.Errorf("v2: %s", asJSON(v2))
	}
	v3 := cluster(t, r, reviewsV3)
	tls := upstreamTLS(t, v3)
	if v3.LbPolicy != clusterv3.Cluster_ROUND_ROBIN || tls == nil ||
		tls.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()[0].GetName() != "default" ||
		tls.GetCommonTlsContext().GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName() != "ROOTCA" ||
		tls.Sni != "outbound_.9080_.v3_."+reviews {
		t.Errorf("v3 (ISTIO_MUTUAL): %s", asJSON(v3))
	}
	sans := tls.GetCommonTlsContext().GetCombinedValidationContext().GetDefaultValidationContext().GetMatchTypedSubjectAltNames()
	if len(sans) != 2 || sans[0].GetMatcher().GetExact() != "spiffe://cluster.local/ns/default/sa/reviews" {
		t.Errorf("v3 SANs: %v", sans)
	}

	// A DNS ServiceEntry: STRICT_DNS with the host, TLS SIMPLE to it.
	api := cluster(t, r, apiC)
	if api.GetType() != clusterv3.Cluster_STRICT_DNS ||
		api.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress().GetAddress() != "api.example.com" ||
		upstreamTLS(t, api).GetSni() != "api.example.com" {
		t.Errorf("api: %s", asJSON(api))
	}
	if c := cluster(t, r, envoy.PassthroughCluster); c.GetType() != clusterv3.Cluster_ORIGINAL_DST {
		t.Errorf("passthrough: %s", asJSON(c))
	}
}

// gRPC clients get only what grpc-go implements: no Envoy protocol
// options, only max_requests of the circuit breakers, certificate
// providers instead of SDS, and no cluster at all for TLS they cannot do.
func TestGRPCClusters(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	r := envoy.BuildClusters(grpcApp, m, []string{reviewsC, reviewsV3, apiC, envoy.BlackHoleCluster, "outbound|9080||nope.default.svc.cluster.local", "junk"})
	if got := strings.Join(r.Names(), " "); got != reviewsV3+" "+reviewsC {
		t.Errorf("clusters = %s", got)
	}
	c := cluster(t, r, reviewsC)
	th := c.GetCircuitBreakers().GetThresholds()
	if c.LbPolicy != clusterv3.Cluster_LEAST_REQUEST || len(th) != 1 || th[0].GetMaxRequests().GetValue() != 1000 ||
		th[0].GetMaxConnections() != nil || c.TypedExtensionProtocolOptions != nil || c.CommonLbConfig != nil {
		t.Errorf("reviews for gRPC: %s", asJSON(c))
	}
	tls := upstreamTLS(t, cluster(t, r, reviewsV3)).GetCommonTlsContext()
	if tls.GetTlsCertificateProviderInstance().GetInstanceName() != "default" ||
		tls.GetValidationContext().GetCaCertificateProviderInstance().GetCertificateName() != "ROOTCA" ||
		tls.GetTlsCertificateSdsSecretConfigs() != nil {
		t.Errorf("v3 TLS for gRPC: %s", asJSON(tls))
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].String(), "DestinationRule/default/external-api") ||
		!strings.Contains(r.Warnings[0].Message, "SIMPLE") {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

// The mesh config's connect timeout applies where the rule sets none.
func TestMeshConnectTimeout(t *testing.T) {
	w := loadWorld(t, "mesh", nil)
	m := w.modelWithMesh(&mesh.MeshConfigResource{MeshConfig: &meshconfig.MeshConfig{ConnectTimeout: durationpb.New(2 * time.Second)}})
	r := envoy.BuildClusters(sidecar, m, []string{"outbound|9080||" + ratings, reviewsC})
	if got := cluster(t, r, "outbound|9080||"+ratings).ConnectTimeout.AsDuration(); got != 2*time.Second {
		t.Errorf("ratings connect timeout %s, want the mesh's 2s", got)
	}
	if got := cluster(t, r, reviewsC).ConnectTimeout.AsDuration(); got != 3*time.Second {
		t.Errorf("reviews connect timeout %s, want the rule's 3s", got)
	}
}

func TestClusterNames(t *testing.T) {
	name := envoy.ClusterName(9080, "v1", reviews)
	if name != reviewsV1 {
		t.Fatalf("ClusterName = %s", name)
	}
	ref, err := envoy.ParseClusterName(name)
	if err != nil || ref != (envoy.ClusterRef{Port: 9080, Subset: "v1", Host: reviews}) {
		t.Errorf("ParseClusterName = %+v, %v", ref, err)
	}
	for _, bad := range []string{"", "inbound|9080||x", "outbound|0||x", "outbound|9080||", "outbound|x||h", "outbound|9080|h",
		"outbound_.9080_._.", "outbound_.9080_.v1", "outbound_.0_._.h", "outbound_.x_._.h", "outbound_9080_._.h", "inbound_.9080_._.h"} {
		if _, err := envoy.ParseClusterName(bad); err == nil {
			t.Errorf("ParseClusterName(%q) accepted", bad)
		}
	}
}

// The SNI-DNAT form of a cluster name, which AUTO_PASSTHROUGH gateway
// servers forward by, reads back to the same service, port and subset.
func TestSNIClusterNames(t *testing.T) {
	for _, c := range []struct {
		port         uint32
		subset, want string
	}{
		{9080, "", "outbound_.9080_._." + reviews},
		{9080, "v1", "outbound_.9080_.v1_." + reviews},
	} {
		name := envoy.SNIClusterName(c.port, c.subset, reviews)
		if name != c.want {
			t.Errorf("SNIClusterName(%d, %q) = %s, want %s", c.port, c.subset, name, c.want)
		}
		ref, err := envoy.ParseClusterName(name)
		if err != nil || ref != (envoy.ClusterRef{Port: c.port, Subset: c.subset, Host: reviews, SNI: true}) {
			t.Errorf("ParseClusterName(%s) = %+v, %v", name, ref, err)
		}
	}
}

// TLS modes other than ISTIO_MUTUAL: certificates from files or from a
// credential's SDS secrets for Envoy; for gRPC, no cluster.
func TestClusterTLSModes(t *testing.T) {
	m := loadWorld(t, "mesh", map[string]string{"tls.yaml": `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ratings, namespace: default}
spec:
  host: ratings
  trafficPolicy:
    tls: {mode: MUTUAL, clientCertificate: /certs/cert.pem, privateKey: /certs/key.pem, caCertificates: /certs/ca.pem, subjectAltNames: [ratings.internal]}
  subsets:
  - name: credential
    labels: {}
    trafficPolicy:
      tls: {mode: MUTUAL, credentialName: ratings-client}
`}).model()
	r := envoy.BuildClusters(sidecar, m, []string{"outbound|9080||" + ratings, "outbound|9080|credential|" + ratings})
	files := upstreamTLS(t, cluster(t, r, "outbound|9080||"+ratings)).GetCommonTlsContext()
	if files.GetTlsCertificates()[0].GetCertificateChain().GetFilename() != "/certs/cert.pem" ||
		files.GetValidationContext().GetTrustedCa().GetFilename() != "/certs/ca.pem" ||
		files.GetValidationContext().GetMatchTypedSubjectAltNames()[0].GetMatcher().GetExact() != "ratings.internal" {
		t.Errorf("files: %s", asJSON(files))
	}
	cred := upstreamTLS(t, cluster(t, r, "outbound|9080|credential|"+ratings)).GetCommonTlsContext()
	if cred.GetTlsCertificateSdsSecretConfigs()[0].GetName() != "kubernetes://ratings-client" ||
		cred.GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName() != "kubernetes://ratings-client-cacert" {
		t.Errorf("credential: %s", asJSON(cred))
	}
	for _, res := range r.Resources {
		if err := envoy.Validate(res.Message); err != nil {
			t.Error(err)
		}
	}
	g := envoy.BuildClusters(grpcApp, m, []string{"outbound|9080||" + ratings})
	if len(g.Resources) != 0 || len(g.Warnings) != 1 {
		t.Errorf("gRPC got %v, warnings %v", g.Names(), g.Warnings)
	}
}

// A headless service's cluster passes traffic through to the address the
// client dialed on a sidecar only; a gateway (whose own address that
// would be) and a gRPC client read its endpoints over EDS.
func TestHeadlessServiceClusters(t *testing.T) {
	m := loadWorld(t, "mesh", map[string]string{"cache.yaml": headlessCache}).model()
	const name = "outbound|6379||cache.default.svc.cluster.local"
	for _, c := range []struct {
		proxy *envoy.Proxy
		want  clusterv3.Cluster_DiscoveryType
	}{
		{sidecar, clusterv3.Cluster_ORIGINAL_DST},
		{ingress, clusterv3.Cluster_EDS},
		{grpcApp, clusterv3.Cluster_EDS},
	} {
		t.Run(string(c.proxy.Kind), func(t *testing.T) {
			got := cluster(t, envoy.BuildClusters(c.proxy, m, []string{name}), name)
			if got.GetType() != c.want {
				t.Fatalf("cluster type %s, want %s", got.GetType(), c.want)
			}
			eds := envoy.BuildEndpoints(c.proxy, m, []string{name})
			if c.want == clusterv3.Cluster_EDS && len(eds.Resources) != 1 {
				t.Errorf("EDS answered %v for the headless service", eds.Names())
			}
			if c.want != clusterv3.Cluster_EDS && len(eds.Resources) != 0 {
				t.Errorf("EDS answered %v for a pass-through cluster", eds.Names())
			}
		})
	}
}
