package envoy_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// eastWest is an east-west gateway proxy of namespace istio-system, which
// the test Gateways select.
var eastWest = &envoy.Proxy{ID: "router~10.0.0.8~eastwest-0.istio-system~istio-system.svc.cluster.local", Kind: envoy.Gateway,
	Namespace: "istio-system", Labels: map[string]string{"istio": "eastwestgateway"}}

const (
	eastWestGW = "networking.istio.io/v1/Gateway/istio-system/eastwest"
	sniType    = "type.googleapis.com/envoy.extensions.filters.network.sni_cluster.v3.SniCluster"
)

// eastWestGateway is the Gateway eastwest in namespace ns, with servers.
func eastWestGateway(ns, servers string) string {
	return "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: eastwest, namespace: " + ns + "}\n" +
		"spec:\n  selector: {istio: eastwestgateway}\n  servers:\n" + servers
}

// autoServer is an AUTO_PASSTHROUGH server on a port, of a protocol,
// with hosts (a YAML list); its port is named "auto-<port>".
func autoServer(port, protocol, hosts string) string {
	return namedAutoServer("auto-"+port, port, protocol, hosts)
}

// namedAutoServer is autoServer with a port name, unique in its Gateway.
func namedAutoServer(portName, port, protocol, hosts string) string {
	return "  - port: {number: " + port + ", name: " + portName + ", protocol: " + protocol + "}\n    hosts: " + hosts +
		"\n    tls: {mode: AUTO_PASSTHROUGH}\n"
}

// filterChainSummaries render a listener's filter chains, one line each:
// its name, match, whether it terminates TLS, then every network filter
// in order (tcp_proxy with its clusters, the HTTP connection manager with
// its routes); then the listener filters. An sni_cluster filter must
// carry the typed config Envoy knows it by.
func filterChainSummaries(t *testing.T, l *listenerv3.Listener) []string {
	t.Helper()
	var out []string
	for _, fc := range l.FilterChains {
		s := fc.Name
		if m := fc.GetFilterChainMatch(); m != nil {
			s += " " + m.GetTransportProtocol()
			if len(m.GetServerNames()) > 0 {
				s += "[" + strings.Join(m.GetServerNames(), ",") + "]"
			}
		}
		if fc.GetTransportSocket() != nil {
			s += " terminated"
		}
		var filters []string
		for _, f := range fc.Filters {
			name := strings.TrimPrefix(f.Name, "envoy.filters.network.")
			switch f.Name {
			case "envoy.filters.network.tcp_proxy":
				name += " " + tcpSummary(t, f)
			case "envoy.filters.network.http_connection_manager":
				h := &hcmv3.HttpConnectionManager{}
				if err := f.GetTypedConfig().UnmarshalTo(h); err != nil {
					t.Fatal(err)
				}
				name += " rds " + h.GetRds().GetRouteConfigName()
			case "envoy.filters.network.sni_cluster":
				if got := f.GetTypedConfig().GetTypeUrl(); got != sniType {
					t.Errorf("chain %s: sni_cluster's typed config is %q, want %q", fc.Name, got, sniType)
				}
			}
			filters = append(filters, name)
		}
		out = append(out, strings.TrimSpace(s+" -> "+strings.Join(filters, ", ")))
	}
	for _, lf := range l.ListenerFilters {
		out = append(out, "listener filter "+lf.Name)
	}
	return out
}

// A gateway's AUTO_PASSTHROUGH server is a chain matching TLS by the
// SNI-DNAT names its hosts cover, with the TLS inspector, then the
// sni_cluster filter before tcp_proxy (whose BlackHoleCluster only TLS
// without SNI reaches). It shares a port with other TLS servers, each
// name once; a port of another class leaves it out, with a warning.
func TestAutoPassthroughListeners(t *testing.T) {
	const (
		inspector = "listener filter envoy.filters.listener.tls_inspector"
		forward   = " -> sni_cluster, tcp_proxy " + envoy.BlackHoleCluster
		https443  = "  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: [web.example.com]\n    tls: {mode: SIMPLE, credentialName: web-cert}\n"
		pass443   = "  - port: {number: 443, name: tls, protocol: TLS}\n    hosts: [api.example.com]\n    tls: {mode: PASSTHROUGH}\n"
		http15443 = "  - port: {number: 15443, name: http, protocol: HTTP}\n    hosts: ['*']\n"
		apiVS     = "---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: api, namespace: istio-system}\n" +
			"spec:\n  hosts: [api.example.com]\n  gateways: [eastwest]\n  tls:\n" +
			"  - match: [{sniHosts: [api.example.com]}]\n    route: [{destination: {host: db.default.svc.cluster.local}}]\n"
	)
	for _, tc := range []struct {
		name     string
		config   string
		want     map[string][]string // listener -> chains
		warnings []string
	}{
		{
			name:   "TLS server, wildcard host",
			config: eastWestGateway("istio-system", autoServer("15443", "TLS", "['*.local']")),
			want:   map[string][]string{"0.0.0.0_15443": {"sni-dnat.15443.0.eastwest.istio-system tls[*.local]" + forward, inspector}},
		},
		{
			name:   "HTTPS server, every host: no server names",
			config: eastWestGateway("istio-system", autoServer("15443", "HTTPS", "['*']")),
			want:   map[string][]string{"0.0.0.0_15443": {"sni-dnat.15443.0.eastwest.istio-system tls" + forward, inspector}},
		},
		{
			name:   "every host of a namespace: no server names",
			config: eastWestGateway("istio-system", autoServer("15443", "TLS", "['default/*']")),
			want:   map[string][]string{"0.0.0.0_15443": {"sni-dnat.15443.0.eastwest.istio-system tls" + forward, inspector}},
		},
		{
			name: "exact hosts, with namespaces, match the names they end",
			config: eastWestGateway("istio-system", autoServer("15443", "TLS",
				"[default/reviews.default.svc.cluster.local, '*/ratings.default.svc.cluster.local', '*.mesh.internal']")),
			want: map[string][]string{"0.0.0.0_15443": {
				"sni-dnat.15443.0.eastwest.istio-system tls[*.mesh.internal,*.ratings.default.svc.cluster.local,*.reviews.default.svc.cluster.local]" + forward,
				inspector,
			}},
		},
		{
			name:   "a named server",
			config: eastWestGateway("istio-system", strings.Replace(autoServer("15443", "TLS", "['*.local']"), "  - port:", "  - name: cross-network\n    port:", 1)),
			want:   map[string][]string{"0.0.0.0_15443": {"sni-dnat.15443.cross-network.eastwest.istio-system tls[*.local]" + forward, inspector}},
		},
		{
			name:   "shares a port with HTTPS and TLS passthrough servers",
			config: eastWestGateway("istio-system", https443+pass443+autoServer("443", "TLS", "['*.local']")) + apiVS,
			want: map[string][]string{"0.0.0.0_443": {
				"https.443.0.eastwest.istio-system tls[web.example.com] terminated -> http_connection_manager rds https.443.0.eastwest.istio-system",
				"tls.443.api.example.com tls[api.example.com] -> tcp_proxy outbound|5432||" + db,
				"sni-dnat.443.2.eastwest.istio-system tls[*.local]" + forward,
				inspector,
			}},
		},
		{
			name: "a name another server of the port took is left out",
			config: eastWestGateway("istio-system", autoServer("15443", "TLS", "['*.local']")+
				namedAutoServer("auto-b", "15443", "TLS", "['*.local', '*.global']")+namedAutoServer("auto-c", "15443", "TLS", "['*.global']")),
			want: map[string][]string{"0.0.0.0_15443": {
				"sni-dnat.15443.0.eastwest.istio-system tls[*.local]" + forward,
				"sni-dnat.15443.1.eastwest.istio-system tls[*.global]" + forward,
				inspector,
			}},
			warnings: []string{eastWestGW + " spec.servers[1].hosts", eastWestGW + " spec.servers[2].hosts"},
		},
		{
			name: "a port of plaintext HTTP (of another Gateway) leaves it out",
			config: eastWestGateway("istio-system", http15443) + "---\n" +
				strings.Replace(eastWestGateway("istio-system", autoServer("15443", "TLS", "['*.local']")), "name: eastwest,", "name: eastwest2,", 1),
			want:     map[string][]string{"0.0.0.0_15443": {"-> http_connection_manager rds http.15443"}},
			warnings: []string{eastWestGW + "2 spec.servers[0]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadWorld(t, "mesh", map[string]string{"eastwest.yaml": tc.config}).model()
			r := envoy.BuildListeners(eastWest, m, nil)
			if got, want := strings.Join(r.Names(), " "), strings.Join(slices.Sorted(maps.Keys(tc.want)), " "); got != want {
				t.Fatalf("listeners %q, want %q (warnings %v)", got, want, r.Warnings)
			}
			for name, want := range tc.want {
				if got := filterChainSummaries(t, listener(t, r, name)); !slices.Equal(got, want) {
					t.Errorf("%s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			if got := warningFields(r); !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings:\n%v\nwant at %v", r.Warnings, tc.warnings)
			}
			for _, w := range r.Warnings {
				if strings.Contains(w.Message, "not generated") {
					t.Errorf("warning %s", w)
				}
			}
			checkL4Result(t, eastWest, m, r)
		})
	}
}
