package envoy_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// l4Objects add to the mesh world: db's subsets, and a TLS service
// (secure) whose connections the routes send to backend's subsets.
const l4Objects = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: db, namespace: default}
spec:
  host: db
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}}
---
apiVersion: v1
kind: Service
metadata: {name: secure, namespace: default}
spec: {clusterIP: 10.96.0.14, ports: [{name: tls, port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: backend, namespace: default}
spec: {clusterIP: 10.96.0.15, ports: [{name: tls, port: 443}]}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: backend, namespace: default}
spec:
  host: backend
  subsets:
  - {name: blue, labels: {color: blue}}
  - {name: green, labels: {color: green}}
`

const (
	db      = "db.default.svc.cluster.local"
	backend = "backend.default.svc.cluster.local"
)

// tcpSummary renders what a tcp_proxy forwards to: a cluster, or
// "cluster:weight" for each weighted cluster.
func tcpSummary(t *testing.T, f *listenerv3.Filter) string {
	t.Helper()
	tp := &tcpproxyv3.TcpProxy{}
	if err := f.GetTypedConfig().UnmarshalTo(tp); err != nil {
		t.Fatalf("filter %s is no tcp_proxy: %v", f.Name, err)
	}
	if c := tp.GetCluster(); c != "" {
		return c
	}
	var out []string
	for _, wc := range tp.GetWeightedClusters().GetClusters() {
		out = append(out, fmt.Sprintf("%s:%d", wc.Name, wc.Weight))
	}
	return strings.Join(out, " ")
}

// chainSummaries render a listener's filter chains, one line each: its
// name, SNI match, whether it terminates TLS, and where it sends
// connections (a tcp_proxy's clusters, or an HTTP connection manager's
// routes); then the listener filters.
func chainSummaries(t *testing.T, l *listenerv3.Listener) []string {
	t.Helper()
	return summarizeChains(l, func(fc *listenerv3.FilterChain) string {
		f := fc.Filters[0]
		if f.Name == "envoy.filters.network.http_connection_manager" {
			return "rds " + rdsName(t, f)
		}
		return tcpSummary(t, f)
	})
}

// summarizeChains renders each filter chain of a listener as its name,
// SNI match and whether it terminates TLS, then " -> " and what filters
// says of it; then the listener filters.
func summarizeChains(l *listenerv3.Listener, filters func(*listenerv3.FilterChain) string) []string {
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
		out = append(out, strings.TrimSpace(s+" -> "+filters(fc)))
	}
	for _, lf := range l.ListenerFilters {
		out = append(out, "listener filter "+lf.Name)
	}
	return out
}

// rdsName is the route configuration an HTTP connection manager reads.
func rdsName(t *testing.T, f *listenerv3.Filter) string {
	t.Helper()
	h := &hcmv3.HttpConnectionManager{}
	if err := f.GetTypedConfig().UnmarshalTo(h); err != nil {
		t.Fatal(err)
	}
	return h.GetRds().GetRouteConfigName()
}

// tcpClustersOf lists the clusters the tcp proxies of listeners name.
func tcpClustersOf(t *testing.T, r envoy.Result) []string {
	t.Helper()
	var out []string
	for _, res := range r.Resources {
		for _, fc := range res.Message.(*listenerv3.Listener).FilterChains {
			for _, f := range fc.Filters {
				tp := &tcpproxyv3.TcpProxy{}
				if f.GetTypedConfig().UnmarshalTo(tp) != nil {
					continue
				}
				if c := tp.GetCluster(); c != "" {
					out = append(out, c)
				}
				for _, wc := range tp.GetWeightedClusters().GetClusters() {
					out = append(out, wc.Name)
				}
			}
		}
	}
	return out
}

// checkL4Result validates every listener (packed messages too) and checks
// that CDS has every cluster the tcp proxies name, but for those of
// missing.
func checkL4Result(t *testing.T, p *envoy.Proxy, m *envoy.Model, r envoy.Result, missing ...string) {
	t.Helper()
	for _, res := range r.Resources {
		if err := envoy.Validate(res.Message); err != nil {
			t.Errorf("%s is invalid: %v\n%s", res.Name, err, asJSON(res.Message))
		}
	}
	clusters := envoy.BuildClusters(p, m, nil)
	for _, c := range tcpClustersOf(t, r) {
		if clusters.ByName(c) == nil && !slices.Contains(missing, c) {
			t.Errorf("a tcp proxy names cluster %s, which CDS does not have (it has %v)", c, clusters.Names())
		}
	}
}

func warningFields(r envoy.Result) []string {
	var out []string
	for _, w := range r.Warnings {
		out = append(out, w.Object+" "+w.Field)
	}
	return out
}

// A sidecar's TCP proxy listener of db follows the VirtualService of its
// host: the first tcp route whose match applies (port, gateways "mesh",
// source namespace and labels, destination subnets against the VIP),
// weighted destinations as weighted clusters, subsets as subset
// clusters; without a route that applies, db's own cluster.
func TestSidecarTCPRoutes(t *testing.T) {
	vs := func(tcp string) string {
		return "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: db, namespace: default}\nspec:\n  hosts: [db]\n" + tcp
	}
	for _, tc := range []struct {
		name, vs, want string
	}{
		{"no VirtualService", "", "outbound|5432||" + db},
		{"only http routes", vs("  http:\n  - route: [{destination: {host: db, subset: v2}}]\n"), "outbound|5432||" + db},
		{"one destination, a subset", vs("  tcp:\n  - route: [{destination: {host: db, subset: v1}}]\n"), "outbound|5432|v1|" + db},
		{"weighted subsets", vs("  tcp:\n  - route:\n    - {destination: {host: db, subset: v1}, weight: 90}\n    - {destination: {host: db, subset: v2}, weight: 10}\n"),
			"outbound|5432|v1|" + db + ":90 outbound|5432|v2|" + db + ":10"},
		{"a weight of 0 is left out", vs("  tcp:\n  - route:\n    - {destination: {host: db, subset: v1}, weight: 100}\n    - {destination: {host: db, subset: v2}, weight: 0}\n"),
			"outbound|5432|v1|" + db},
		{"first route on another port, second applies", vs("  tcp:\n  - match: [{port: 5433}]\n    route: [{destination: {host: db, subset: v2}}]\n  - match: [{port: 5432}]\n    route: [{destination: {host: db, subset: v1}}]\n"),
			"outbound|5432|v1|" + db},
		{"first route wins", vs("  tcp:\n  - route: [{destination: {host: db, subset: v2}}]\n  - route: [{destination: {host: db, subset: v1}}]\n"),
			"outbound|5432|v2|" + db},
		{"subnet of the VIP", vs("  tcp:\n  - match: [{destinationSubnets: [10.0.0.0/8]}]\n    route: [{destination: {host: db, subset: v2}}]\n"),
			"outbound|5432|v2|" + db},
		{"subnet without the VIP", vs("  tcp:\n  - match: [{destinationSubnets: [192.168.0.0/16, 10.96.0.13]}]\n    route: [{destination: {host: db, subset: v2}}]\n"),
			"outbound|5432||" + db},
		{"other source namespace", vs("  tcp:\n  - match: [{sourceNamespace: web}]\n    route: [{destination: {host: db, subset: v2}}]\n"),
			"outbound|5432||" + db},
		{"other source labels", vs("  tcp:\n  - match: [{sourceLabels: {app: other}}]\n    route: [{destination: {host: db, subset: v2}}]\n"),
			"outbound|5432||" + db},
		{"gateways: mesh", vs("  tcp:\n  - match: [{gateways: [mesh]}]\n    route: [{destination: {host: db, subset: v2}}]\n"),
			"outbound|5432|v2|" + db},
		{"gateways: another", vs("  tcp:\n  - match: [{gateways: [web/ingress]}]\n    route: [{destination: {host: db, subset: v2}}]\n"),
			"outbound|5432||" + db},
		{"another service's port", vs("  tcp:\n  - route: [{destination: {host: backend, port: {number: 443}, subset: green}}]\n"),
			"outbound|443|green|" + backend},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"l4.yaml": l4Objects}
			if tc.vs != "" {
				files["vs.yaml"] = tc.vs
			}
			m := loadWorld(t, "mesh", files).model()
			r := envoy.BuildListeners(sidecar, m, nil)
			l := listener(t, r, "10.96.0.12_5432")
			if got := chainSummaries(t, l); len(got) != 1 || got[0] != "-> "+tc.want {
				t.Errorf("db's listener: %q, want one chain -> %s", got, tc.want)
			}
			checkL4Result(t, sidecar, m, r)
			for _, w := range r.Warnings {
				t.Errorf("warning: %s", w)
			}
		})
	}
}

// On a TLS port a sidecar routes by SNI: a chain per tls route that
// applies (a name a route before it took is left out, with a warning),
// the TLS inspector to read the SNI, and for the rest the tcp route, or
// the service's cluster.
func TestSidecarTLSRoutes(t *testing.T) {
	m := loadWorld(t, "mesh", map[string]string{"l4.yaml": l4Objects, "vs.yaml": `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: secure, namespace: default}
spec:
  hosts: [secure, "*.example.com"]
  tls:
  - match: [{sniHosts: [b.example.com, a.example.com]}, {sniHosts: [a.example.com], port: 443}]
    route: [{destination: {host: backend, subset: blue}}]
  - match: [{sniHosts: [b.example.com, c.example.com]}]
    route:
    - {destination: {host: backend, subset: blue}, weight: 50}
    - {destination: {host: backend, subset: green}, weight: 50}
  - match: [{sniHosts: [d.example.com], port: 8443}]
    route: [{destination: {host: backend, subset: green}}]
  tcp:
  - route: [{destination: {host: backend}}]
`}).model()
	r := envoy.BuildListeners(sidecar, m, nil)
	want := []string{
		"tls.443.a.example.com tls[a.example.com,b.example.com] -> outbound|443|blue|" + backend,
		"tls.443.c.example.com tls[c.example.com] -> outbound|443|blue|" + backend + ":50 outbound|443|green|" + backend + ":50",
		"-> outbound|443||" + backend,
		"listener filter envoy.filters.listener.tls_inspector",
	}
	if got := chainSummaries(t, listener(t, r, "10.96.0.14_443")); !slices.Equal(got, want) {
		t.Errorf("secure's listener:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := warningFields(r); !slices.Equal(got, []string{"networking.istio.io/v1/VirtualService/default/secure spec.tls[1].match[0].sniHosts"}) {
		t.Errorf("warnings = %v, want the second route's b.example.com", r.Warnings)
	}
	// A TCP port reads no SNI: tls routes do not apply there.
	if got := chainSummaries(t, listener(t, r, "10.96.0.12_5432")); len(got) != 1 {
		t.Errorf("db's listener: %q", got)
	}
	checkL4Result(t, sidecar, m, r)
}

// edgeGateway is a gateway proxy in namespace edge that the test
// Gateways select.
var edgeGateway = &envoy.Proxy{ID: "router~10.0.0.7~edge-0.edge~edge.svc.cluster.local", Kind: envoy.Gateway, Namespace: "edge",
	Labels: map[string]string{"app": "edge"}}

// A gateway's TCP and TLS servers: plaintext TCP servers forward by the
// tcp routes of the VirtualServices bound to them, TLS passthrough
// servers by the SNI of tls routes (met with the server's hosts),
// TLS-terminating TLS servers decrypt then forward by tcp routes, per
// host; a port serves plaintext TCP alone, and a server that cannot
// share its port is left out with a warning naming it.
func TestGatewayTCPAndTLSServers(t *testing.T) {
	gateway := func(servers string) string {
		return "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: edge, namespace: edge}\nspec:\n  selector: {app: edge}\n  servers:\n" + servers
	}
	vs := func(name, spec string) string {
		return "---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: " + name + ", namespace: edge}\nspec:\n  gateways: [edge]\n" + spec
	}
	const (
		tcp9000     = "  - port: {number: 9000, name: tcp, protocol: TCP}\n    hosts: ['*']\n"
		http9000    = "  - port: {number: 9000, name: http, protocol: HTTP}\n    hosts: ['*']\n"
		passthrough = "  - port: {number: 443, name: tls, protocol: TLS}\n    hosts: ['*.example.com']\n    tls: {mode: PASSTHROUGH}\n"
		https443    = "  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: [web.example.com]\n    tls: {mode: SIMPLE, credentialName: web-cert}\n"
		terminate   = "  - port: {number: 8443, name: tls-terminate, protocol: TLS}\n    hosts: ['*']\n    tls: {mode: SIMPLE, credentialName: db-cert}\n"
		toDB        = "  hosts: ['*']\n  tcp:\n  - route: [{destination: {host: db.default.svc.cluster.local, subset: v1}}]\n"
	)
	second := func(servers string) string {
		return "---\n" + strings.Replace(gateway(servers), "name: edge,", "name: edge2,", 1)
	}
	const apiTLS = "  hosts: [api.example.com]\n  tls:\n  - match: [{sniHosts: [api.example.com]}]\n    route: [{destination: {host: backend.default.svc.cluster.local}}]\n"
	gw := "networking.istio.io/v1/Gateway/edge/edge"
	gw2 := "networking.istio.io/v1/Gateway/edge/edge2"
	for _, tc := range []struct {
		name     string
		config   string
		want     map[string][]string // listener -> chains
		warnings []string
	}{
		{
			name:   "TCP server, one destination",
			config: gateway(tcp9000) + vs("db", toDB),
			want:   map[string][]string{"0.0.0.0_9000": {"tcp.9000.0.edge.edge -> outbound|5432|v1|" + db}},
		},
		{
			name: "TCP server, weighted; a route of another port and one of another gateway skipped",
			config: gateway(tcp9000) + vs("db", "  hosts: ['*']\n  tcp:\n"+
				"  - match: [{port: 9001}]\n    route: [{destination: {host: db.default.svc.cluster.local, subset: v2}}]\n"+
				"  - match: [{gateways: [edge/other]}]\n    route: [{destination: {host: db.default.svc.cluster.local, subset: v2}}]\n"+
				"  - match: [{port: 9000, gateways: [edge]}]\n    route:\n"+
				"    - {destination: {host: db.default.svc.cluster.local, subset: v1}, weight: 75}\n"+
				"    - {destination: {host: db.default.svc.cluster.local, subset: v2}, weight: 25}\n"),
			want: map[string][]string{"0.0.0.0_9000": {"tcp.9000.0.edge.edge -> outbound|5432|v1|" + db + ":75 outbound|5432|v2|" + db + ":25"}},
		},
		{
			name:     "TCP server without a VirtualService",
			config:   gateway(tcp9000),
			want:     map[string][]string{},
			warnings: []string{gw + " spec.servers[0]"},
		},
		{
			name:     "TCP server whose VirtualService has only a route of another port",
			config:   gateway(tcp9000) + vs("db", "  hosts: ['*']\n  tcp:\n  - match: [{port: 9001}]\n    route: [{destination: {host: db.default.svc.cluster.local}}]\n"),
			want:     map[string][]string{},
			warnings: []string{gw + " spec.servers[0]"},
		},
		{
			name:     "a VirtualService bound to another gateway does not apply",
			config:   gateway(tcp9000) + gatewayWithVS(),
			want:     map[string][]string{},
			warnings: []string{gw + " spec.servers[0]"},
		},
		{
			name:     "HTTP then TCP on one port: the TCP server is left out",
			config:   gateway(http9000) + second(tcp9000) + vs("db", toDB),
			want:     map[string][]string{"0.0.0.0_9000": {"-> rds http.9000"}},
			warnings: []string{gw2 + " spec.servers[0]"},
		},
		{
			name:     "TCP then HTTP on one port: the HTTP server is left out",
			config:   gateway(tcp9000) + second(http9000) + vs("db", toDB),
			want:     map[string][]string{"0.0.0.0_9000": {"tcp.9000.0.edge.edge -> outbound|5432|v1|" + db}},
			warnings: []string{gw2 + " spec.servers[0]"},
		},
		{
			name:     "TCP then TCP on one port: the second is left out",
			config:   gateway(tcp9000) + second(tcp9000) + vs("db", toDB),
			want:     map[string][]string{"0.0.0.0_9000": {"tcp.9000.0.edge.edge -> outbound|5432|v1|" + db}},
			warnings: []string{gw2 + " spec.servers[0]"},
		},
		{
			name:     "TLS then TCP on one port: the TCP server is left out",
			config:   gateway(passthrough) + second(strings.Replace(tcp9000, "9000", "443", 1)) + vs("db", toDB) + vs("api", apiTLS),
			want:     map[string][]string{"0.0.0.0_443": {"tls.443.api.example.com tls[api.example.com] -> outbound|443||" + backend, "listener filter envoy.filters.listener.tls_inspector"}},
			warnings: []string{gw2 + " spec.servers[0]"},
		},
		{
			name: "TLS passthrough by SNI, met with the server's hosts; a name taken twice is left out",
			config: gateway(passthrough) + vs("dbs", "  hosts: ['*.example.com', other.org]\n  tls:\n"+
				"  - match: [{sniHosts: [orders.example.com, users.example.com, other.org]}]\n    route: [{destination: {host: db.default.svc.cluster.local, subset: v1}}]\n"+
				"  - match: [{sniHosts: ['*.example.com']}]\n    route: [{destination: {host: db.default.svc.cluster.local, subset: v2}}]\n") +
				vs("late", "  hosts: [users.example.com]\n  tls:\n  - match: [{sniHosts: [users.example.com]}]\n    route: [{destination: {host: backend.default.svc.cluster.local}}]\n"),
			want: map[string][]string{"0.0.0.0_443": {
				"tls.443.orders.example.com tls[orders.example.com,users.example.com] -> outbound|5432|v1|" + db,
				"tls.443.*.example.com tls[*.example.com] -> outbound|5432|v2|" + db,
				"listener filter envoy.filters.listener.tls_inspector",
			}},
			warnings: []string{"networking.istio.io/v1/VirtualService/edge/late spec.tls[0].match[0].sniHosts"},
		},
		{
			name:     "TLS passthrough without a tls route",
			config:   gateway(passthrough) + vs("db", "  hosts: ['*.example.com']\n  tcp:\n  - route: [{destination: {host: db.default.svc.cluster.local}}]\n"),
			want:     map[string][]string{},
			warnings: []string{gw + " spec.servers[0]"},
		},
		{
			name: "HTTPS and TLS passthrough share a port by SNI",
			config: gateway(https443+passthrough) + vs("web", "  hosts: [web.example.com]\n  http:\n  - route: [{destination: {host: productpage.web.svc.cluster.local}}]\n") +
				vs("api", "  hosts: [api.example.com, web.example.com]\n  tls:\n  - match: [{sniHosts: [api.example.com, web.example.com]}]\n    route: [{destination: {host: backend.default.svc.cluster.local}}]\n"),
			want: map[string][]string{"0.0.0.0_443": {
				"https.443.0.edge.edge tls[web.example.com] terminated -> rds https.443.0.edge.edge",
				"tls.443.api.example.com tls[api.example.com] -> outbound|443||" + backend,
				"listener filter envoy.filters.listener.tls_inspector",
			}},
			warnings: []string{"networking.istio.io/v1/VirtualService/edge/api spec.tls[0].match[0].sniHosts"},
		},
		{
			name: "TLS terminated, then tcp routes by host",
			config: gateway(terminate) + vs("orders", "  hosts: [orders.example.com]\n  tcp:\n  - route: [{destination: {host: db.default.svc.cluster.local, subset: v1}}]\n") +
				vs("rest", "  hosts: ['*']\n  tcp:\n  - route: [{destination: {host: backend.default.svc.cluster.local}}]\n"),
			want: map[string][]string{"0.0.0.0_8443": {
				"tls.8443.orders.example.com tls[orders.example.com] terminated -> outbound|5432|v1|" + db,
				"tls.8443.* tls terminated -> outbound|443||" + backend,
				"listener filter envoy.filters.listener.tls_inspector",
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadWorld(t, "mesh", map[string]string{"l4.yaml": l4Objects, "edge.yaml": tc.config}).model()
			r := envoy.BuildListeners(edgeGateway, m, nil)
			if got, want := strings.Join(r.Names(), " "), strings.Join(slices.Sorted(maps.Keys(tc.want)), " "); got != want {
				t.Fatalf("listeners %q, want %q (warnings %v)", got, want, r.Warnings)
			}
			for name, want := range tc.want {
				if got := chainSummaries(t, listener(t, r, name)); !slices.Equal(got, want) {
					t.Errorf("%s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			if got := warningFields(r); !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings:\n%v\nwant at %v", r.Warnings, tc.warnings)
			}
			checkL4Result(t, edgeGateway, m, r)
			rs := envoy.BuildRoutes(edgeGateway, m, nil)
			for _, res := range rs.Resources {
				if err := envoy.Validate(res.Message); err != nil {
					t.Errorf("%s: %v", res.Name, err)
				}
			}
		})
	}
}

// gatewayWithVS is the Gateway of one TCP server with a VirtualService
// bound to another gateway only.
func gatewayWithVS() string {
	return `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: edge}
spec:
  hosts: ['*']
  gateways: [elsewhere]
  tcp:
  - route: [{destination: {host: db.default.svc.cluster.local}}]
`
}

// A TLS server that terminates TLS for a TCP stream offers no HTTP
// protocols by ALPN, and keeps the credential as the HTTPS path sends
// it.
func TestTerminatedTLSServerContext(t *testing.T) {
	m := loadWorld(t, "mesh", map[string]string{"l4.yaml": l4Objects, "edge.yaml": `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: edge}
spec:
  selector: {app: edge}
  servers:
  - port: {number: 8443, name: tls, protocol: TLS}
    hosts: ['*']
    tls: {mode: MUTUAL, credentialName: db-cert}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: edge}
spec:
  hosts: ['*']
  gateways: [edge]
  tcp:
  - route: [{destination: {host: db.default.svc.cluster.local}}]
`}).model()
	l := listener(t, envoy.BuildListeners(edgeGateway, m, nil), "0.0.0.0_8443")
	ctx := downstreamTLSOf(t, l.FilterChains[0])
	common := ctx.GetCommonTlsContext()
	if len(common.GetAlpnProtocols()) != 0 || common.GetTlsCertificateSdsSecretConfigs()[0].GetName() != "kubernetes://db-cert" ||
		!ctx.GetRequireClientCertificate().GetValue() || common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName() != "kubernetes://db-cert-cacert" {
		t.Errorf("TLS context: %s", asJSON(ctx))
	}
}
