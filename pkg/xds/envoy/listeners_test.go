package envoy_test

import (
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	meshconfig "istio.io/api/mesh/v1alpha1"

	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

func listener(t *testing.T, r envoy.Result, name string) *listenerv3.Listener {
	t.Helper()
	l, ok := r.ByName(name).(*listenerv3.Listener)
	if !ok {
		t.Fatalf("no listener %s among %v", name, r.Names())
	}
	return l
}

func unpackHCM(t *testing.T, l *listenerv3.Listener, chain int) *hcmv3.HttpConnectionManager {
	t.Helper()
	h := &hcmv3.HttpConnectionManager{}
	a := l.GetApiListener().GetApiListener()
	if a == nil {
		a = l.FilterChains[chain].Filters[0].GetTypedConfig()
	}
	if err := a.UnmarshalTo(h); err != nil {
		t.Fatalf("%s: no HTTP connection manager: %v", l.Name, err)
	}
	return h
}

func filterNames(h *hcmv3.HttpConnectionManager) string {
	var out []string
	for _, f := range h.HttpFilters {
		out = append(out, f.Name)
	}
	return strings.Join(out, ",")
}

// A gRPC client gets an API listener named exactly as it asked, with RDS
// over ADS and the fault filter before the router; a target that names no
// service, or no port of it, gets nothing.
func TestGRPCListeners(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	asked := []string{"reviews.default.svc.cluster.local:9080", "ratings:9080", "productpage.web:9090", "reviews:1234", "nope:80", "reviews"}
	r := envoy.BuildListeners(grpcApp, m, asked)
	if got := strings.Join(r.Names(), " "); got != "productpage.web:9090 ratings:9080 reviews.default.svc.cluster.local:9080" {
		t.Fatalf("listeners = %s", got)
	}
	for _, name := range r.Names() {
		h := unpackHCM(t, listener(t, r, name), 0)
		if h.GetRds().GetRouteConfigName() != name || h.GetRds().GetConfigSource().GetAds() == nil {
			t.Errorf("%s: RDS %s", name, asJSON(h.GetRds()))
		}
		if got := filterNames(h); got != "envoy.filters.http.fault,envoy.filters.http.router" {
			t.Errorf("%s: filters %s", name, got)
		}
		if h.UseRemoteAddress != nil || h.XffNumTrustedHops != 0 || h.NormalizePath != nil {
			t.Errorf("%s: Envoy-only fields sent to gRPC: %s", name, asJSON(h))
		}
	}
}

// A sidecar: virtualOutbound, an HTTP listener per HTTP port, a TCP proxy
// per virtual IP and TCP port, none bound; REGISTRY_ONLY sends unknown
// destinations to the black hole.
func TestSidecarListeners(t *testing.T) {
	w := loadWorld(t, "mesh", nil)
	r := envoy.BuildListeners(sidecar, w.model(), nil)
	if got := strings.Join(r.Names(), " "); got != "0.0.0.0_9080 0.0.0.0_9090 10.96.0.12_5432 virtualOutbound" {
		t.Fatalf("listeners = %s", got)
	}
	http := listener(t, r, "0.0.0.0_9080")
	if http.GetBindToPort().GetValue() || unpackHCM(t, http, 0).GetRds().GetRouteConfigName() != "9080" {
		t.Errorf("0.0.0.0_9080: %s", asJSON(http))
	}
	tcp := &tcpproxyv3.TcpProxy{}
	if err := listener(t, r, "10.96.0.12_5432").FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(tcp); err != nil || tcp.GetCluster() != "outbound|5432||db.default.svc.cluster.local" {
		t.Errorf("db listener: %v %s", err, asJSON(tcp))
	}
	vo := listener(t, r, "virtualOutbound")
	if !vo.GetUseOriginalDst().GetValue() || vo.GetAddress().GetSocketAddress().GetPortValue() != 15001 {
		t.Errorf("virtualOutbound: %s", asJSON(vo))
	}
	registryOnly := w.modelWithMesh(&mesh.MeshConfigResource{MeshConfig: &meshconfig.MeshConfig{
		OutboundTrafficPolicy: &meshconfig.MeshConfig_OutboundTrafficPolicy{Mode: meshconfig.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY}}})
	vo = listener(t, envoy.BuildListeners(sidecar, registryOnly, []string{"virtualOutbound"}), "virtualOutbound")
	if err := vo.FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(tcp); err != nil || tcp.GetCluster() != envoy.BlackHoleCluster {
		t.Errorf("REGISTRY_ONLY virtualOutbound: %s", asJSON(tcp))
	}
}

// A gateway gets a listener per port of the Gateway servers selecting it:
// plaintext HTTP with routes http.<port>, HTTPS terminated with the
// credential's secret over SDS, matched by SNI; servers not generated are
// reported.
func TestGatewayListeners(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	r := envoy.BuildListeners(ingress, m, nil)
	if got := strings.Join(r.Names(), " "); got != "0.0.0.0_8080 0.0.0.0_8443" {
		t.Fatalf("listeners = %s", got)
	}
	if h := unpackHCM(t, listener(t, r, "0.0.0.0_8080"), 0); h.GetRds().GetRouteConfigName() != "http.8080" || !h.GetUseRemoteAddress().GetValue() {
		t.Errorf("8080: %s", asJSON(h))
	}
	https := listener(t, r, "0.0.0.0_8443")
	chain := https.FilterChains[0]
	ctx := downstreamTLSOf(t, chain)
	if strings.Join(chain.GetFilterChainMatch().GetServerNames(), ",") != "bookinfo.example.com" ||
		ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()[0].GetName() != "kubernetes://bookinfo-cert" ||
		unpackHCM(t, https, 0).GetRds().GetRouteConfigName() != "https.8443.1.ingress.web" ||
		len(https.ListenerFilters) != 1 {
		t.Errorf("8443: %s", asJSON(https))
	}
	if len(r.Warnings) != 1 || r.Warnings[0].Field != "spec.servers[2]" {
		t.Errorf("warnings = %v", r.Warnings)
	}
	if got := envoy.BuildListeners(&envoy.Proxy{ID: "other", Kind: envoy.Gateway, Namespace: "web"}, m, nil); len(got.Resources) != 0 {
		t.Errorf("a gateway no Gateway selects got %v", got.Names())
	}
}
