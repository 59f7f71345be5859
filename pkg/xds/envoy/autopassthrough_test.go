package envoy_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

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
	return summarizeChains(l, func(fc *listenerv3.FilterChain) string {
		var filters []string
		for _, f := range fc.Filters {
			name := strings.TrimPrefix(f.Name, "envoy.filters.network.")
			switch f.Name {
			case "envoy.filters.network.tcp_proxy":
				name += " " + tcpSummary(t, f)
			case "envoy.filters.network.http_connection_manager":
				name += " rds " + rdsName(t, f)
			case "envoy.filters.network.sni_cluster":
				if got := f.GetTypedConfig().GetTypeUrl(); got != sniType {
					t.Errorf("chain %s: sni_cluster's typed config is %q, want %q", fc.Name, got, sniType)
				}
			}
			filters = append(filters, name)
		}
		return strings.Join(filters, ", ")
	})
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

// sniClusterNames are the SNI-DNAT clusters among generated ones.
func sniClusterNames(r envoy.Result) []string {
	var out []string
	for _, n := range r.Names() {
		if strings.HasPrefix(n, "outbound_.") {
			out = append(out, n)
		}
	}
	return out
}

// headlessCache is a headless service with one endpoint.
const headlessCache = `apiVersion: v1
kind: Service
metadata: {name: cache, namespace: default}
spec: {clusterIP: None, selector: {app: cache}, ports: [{name: tcp-redis, port: 6379}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: cache-1, namespace: default, labels: {kubernetes.io/service-name: cache}}
addressType: IPv4
ports: [{name: tcp-redis, port: 6379}]
endpoints:
- {addresses: [127.0.0.51], conditions: {ready: true}}
`

// A gateway with AUTO_PASSTHROUGH servers gets an SNI-named cluster per
// port and subset of every service a server's hosts admit (by namespace
// and host pattern), EDS over ADS (a headless service's too; a DNS one
// resolves as its outbound cluster does), with the DestinationRule's
// load balancer, pool and outlier detection but never TLS of its own.
func TestAutoPassthroughClusters(t *testing.T) {
	sni := func(port, subset, host string) string { return "outbound_." + port + "_." + subset + "_." + host }
	const (
		cache       = "cache.default.svc.cluster.local"
		productpage = "productpage.web.svc.cluster.local"
	)
	var (
		reviewsSNI = []string{sni("9080", "", reviews), sni("9080", "v1", reviews), sni("9080", "v2", reviews), sni("9080", "v3", reviews)}
		defaultSNI = slices.Concat([]string{sni("6379", "", cache), sni("5432", "", db), sni("9080", "", ratings)}, reviewsSNI)
		webSNI     = []string{sni("9080", "", productpage), sni("9090", "", productpage)}
		localSNI   = slices.Concat(defaultSNI, webSNI)
		apiSNI     = sni("443", "", "api.example.com")
	)
	for _, tc := range []struct {
		name    string
		gateway string
		want    []string
	}{
		{"every .local host", eastWestGateway("istio-system", autoServer("15443", "TLS", "['*.local']")), localSNI},
		{"every host: the DNS ServiceEntry too", eastWestGateway("istio-system", autoServer("15443", "TLS", "['*']")),
			slices.Concat(localSNI, []string{apiSNI})},
		{"one namespace, its ServiceEntry too", eastWestGateway("istio-system", autoServer("15443", "TLS", "['default/*']")),
			slices.Concat(defaultSNI, []string{apiSNI})},
		{"the Gateway's namespace", eastWestGateway("web", autoServer("15443", "TLS", "['./*']")), webSNI},
		{"a namespace and a host that do not meet", eastWestGateway("istio-system", autoServer("15443", "TLS", "['web/*.default.svc.cluster.local']")), nil},
		{"exact hosts, over two servers", eastWestGateway("istio-system", autoServer("15443", "TLS", "[reviews.default.svc.cluster.local]")+
			autoServer("15444", "HTTPS", "['web/productpage.web.svc.cluster.local']")), slices.Concat(reviewsSNI, webSNI)},
		{"a TLS PASSTHROUGH server only", eastWestGateway("istio-system",
			"  - port: {number: 443, name: tls, protocol: TLS}\n    hosts: ['*']\n    tls: {mode: PASSTHROUGH}\n"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadWorld(t, "mesh", map[string]string{"eastwest.yaml": tc.gateway, "cache.yaml": headlessCache}).model()
			r := envoy.BuildClusters(eastWest, m, nil)
			if got, want := sniClusterNames(r), slices.Sorted(slices.Values(tc.want)); !slices.Equal(got, want) {
				t.Errorf("SNI clusters:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, res := range r.Resources {
				if err := envoy.Validate(res.Message); err != nil {
					t.Errorf("%s is invalid: %v", res.Name, err)
				}
			}
			for _, name := range sniClusterNames(r) {
				c := cluster(t, r, name)
				if c.TransportSocket != nil || c.TransportSocketMatches != nil || c.TypedExtensionProtocolOptions != nil {
					t.Errorf("%s originates TLS or speaks HTTP: %s", name, asJSON(c))
				}
				switch {
				case strings.HasSuffix(name, "api.example.com"):
					if c.GetType() != clusterv3.Cluster_STRICT_DNS || len(c.GetLoadAssignment().GetEndpoints()) != 1 {
						t.Errorf("%s is not resolved as its outbound cluster is: %s", name, asJSON(c))
					}
				case c.GetType() != clusterv3.Cluster_EDS || c.GetEdsClusterConfig().GetEdsConfig().GetAds() == nil ||
					c.GetEdsClusterConfig().GetServiceName() != name:
					t.Errorf("%s is not EDS over ADS under its own name: %s", name, asJSON(c))
				}
			}
			// The Gateway's hosts change nothing of the outbound clusters,
			// which keep their TLS.
			if tls := upstreamTLS(t, cluster(t, r, reviewsV3)); tls.GetSni() != sni("9080", "v3", reviews) {
				t.Errorf("%s lost its ISTIO_MUTUAL: %s", reviewsV3, asJSON(tls))
			}
		})
	}

	m := loadWorld(t, "mesh", map[string]string{"eastwest.yaml": eastWestGateway("istio-system", autoServer("15443", "TLS", "['default/*']"))}).model()
	r := envoy.BuildClusters(eastWest, m, nil)
	// The DestinationRule's policy, the subset's over the rule's; its
	// ISTIO_MUTUAL is left to the client, whose TLS passes through.
	all, v3 := cluster(t, r, sni("9080", "", reviews)), cluster(t, r, sni("9080", "v3", reviews))
	th := all.GetCircuitBreakers().GetThresholds()
	if all.LbPolicy != clusterv3.Cluster_LEAST_REQUEST || all.GetConnectTimeout().AsDuration().String() != "3s" ||
		len(th) != 1 || th[0].GetMaxConnections().GetValue() != 100 || all.GetOutlierDetection().GetConsecutive_5Xx().GetValue() != 5 {
		t.Errorf("%s lacks the DestinationRule's policy: %s", all.Name, asJSON(all))
	}
	if v3.LbPolicy != clusterv3.Cluster_ROUND_ROBIN || v3.TransportSocket != nil {
		t.Errorf("%s: %s", v3.Name, asJSON(v3))
	}

	// Asked by name: only the clusters the servers admit, of subsets and
	// ports that exist.
	named := envoy.BuildClusters(eastWest, m, []string{sni("9080", "v1", reviews), sni("9080", "v9", reviews), sni("9081", "", reviews),
		sni("9080", "", productpage), reviewsC})
	if got, want := named.Names(), []string{sni("9080", "v1", reviews), reviewsC}; !slices.Equal(got, want) {
		t.Errorf("clusters by name %v, want %v", got, want)
	}
	// Only gateways have them, whatever a Gateway's selector picks.
	lookalike := &envoy.Proxy{ID: "sidecar~10.0.0.9~app-0.istio-system~istio-system.svc.cluster.local", Kind: envoy.Sidecar,
		Namespace: "istio-system", Labels: eastWest.Labels}
	if got := sniClusterNames(envoy.BuildClusters(lookalike, m, nil)); len(got) != 0 {
		t.Errorf("a sidecar got SNI clusters %v", got)
	}
	if got := envoy.BuildClusters(lookalike, m, []string{sni("9080", "", reviews)}); len(got.Resources) != 0 {
		t.Errorf("a sidecar got %v by name", got.Names())
	}
}

// EDS answers an SNI-DNAT cluster with the endpoints of the outbound
// cluster of the same port and subset, under the SNI name; a headless
// service's too, which the gateway's outbound cluster passes through. A
// name the gateway's servers do not admit, or a sidecar's, gets nothing.
func TestAutoPassthroughEndpoints(t *testing.T) {
	sni := func(port, subset, host string) string { return "outbound_." + port + "_." + subset + "_." + host }
	const cache = "cache.default.svc.cluster.local"
	m := loadWorld(t, "mesh", map[string]string{"cache.yaml": headlessCache,
		"eastwest.yaml": eastWestGateway("istio-system", autoServer("15443", "TLS", "['default/*']"))}).model()
	asked := []string{sni("9080", "", reviews), sni("9080", "v2", reviews), sni("6379", "", cache), sni("9080", "", "productpage.web.svc.cluster.local"),
		sni("9080", "v9", reviews), reviewsC, reviewsV2}
	r := envoy.BuildEndpoints(eastWest, m, asked)
	want := map[string]string{
		sni("9080", "", reviews):   "zone-a(3): 127.0.0.11:50051 HEALTHY x1, 127.0.0.14:50051 UNHEALTHY x1, 127.0.0.15:50051 DRAINING x1; zone-b(2): 127.0.0.12:50051 HEALTHY x1, 127.0.0.13:50051 HEALTHY x1",
		sni("9080", "v2", reviews): "zone-a(1): 127.0.0.15:50051 DRAINING x1; zone-b(1): 127.0.0.12:50051 HEALTHY x1",
		sni("6379", "", cache):     "(1): 127.0.0.51:6379 HEALTHY x1",
	}
	want[reviewsC], want[reviewsV2] = want[sni("9080", "", reviews)], want[sni("9080", "v2", reviews)]
	if got, wantNames := r.Names(), slices.Sorted(maps.Keys(want)); !slices.Equal(got, wantNames) {
		t.Errorf("assignments %v, want %v", got, wantNames)
	}
	for name, w := range want {
		cla, ok := r.ByName(name).(*endpointv3.ClusterLoadAssignment)
		if !ok {
			continue
		}
		if got := render(cla); got != w || cla.ClusterName != name {
			t.Errorf("%s (cluster_name %s):\n got %s\nwant %s", name, cla.ClusterName, got, w)
		}
		if err := envoy.Validate(cla); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Without names: those of every EDS cluster, SNI-DNAT ones included.
	all := envoy.BuildEndpoints(eastWest, m, nil).Names()
	for _, name := range []string{sni("9080", "v3", reviews), sni("6379", "", cache), reviewsC} {
		if !slices.Contains(all, name) {
			t.Errorf("wildcard EDS lacks %s: %v", name, all)
		}
	}
	if got := envoy.BuildEndpoints(sidecar, m, []string{sni("9080", "", reviews)}); len(got.Resources) != 0 {
		t.Errorf("a sidecar got %v", got.Names())
	}
}

// What reaches an east-west gateway when things change: an endpoint
// change re-sends EDS of the SNI-DNAT clusters of its host alone (no
// Model rebuilt), a DestinationRule change their clusters, and a Gateway
// change the clusters its servers' hosts now admit (and EDS answers only
// for those).
func TestAutoPassthroughPushes(t *testing.T) {
	sni := func(subset string) string { return "outbound_.9080_." + subset + "_." + reviews }
	files := meshFiles(9080)
	files["eastwest.yaml"] = eastWestGateway("istio-system", autoServer("15443", "TLS", "['*.local']"))
	s := serveWorld(t, files)
	c := connectGRPC(t, s.srv.Addr(), eastWest.ID, "istio-system")
	c.labels = map[string]any{"istio": "eastwestgateway"}
	if got := resourceNames(t, c.watch(envoy.ClusterType)); !slices.Contains(got, sni("")) || !slices.Contains(got, sni("v3")) {
		t.Fatalf("CDS %v lacks the SNI clusters of reviews", got)
	}
	c.watch(envoy.EndpointType, sni(""), sni("v1"), sni("v3"), reviewsC)
	builds := s.gen.Stats().ModelBuilds

	// reviews-v3-1 becomes ready: the v3 subset and the whole service
	// change, in both name forms; v1 does not.
	s.write(t, "slice.yaml", strings.Replace(files["slice.yaml"], "{ready: false}", "{ready: true}", 1))
	resp := c.next()
	if got, want := resourceNames(t, resp), []string{sni(""), sni("v3"), reviewsC}; resp.TypeUrl != envoy.EndpointType || !slices.Equal(got, want) {
		t.Fatalf("an endpoint change sent %s %v, want EDS of %v", resp.TypeUrl, got, want)
	}
	c.nothingMore()
	if got := s.gen.Stats().ModelBuilds; got != builds {
		t.Errorf("an endpoint change rebuilt the Model (%d builds, was %d)", got, builds)
	}

	// A DestinationRule change: the clusters, SNI-DNAT ones with the new
	// policy (Envoy's default is LEAST_REQUEST); endpoints did not change.
	s.write(t, "dr.yaml", strings.Replace(files["dr.yaml"], "subsets:", "trafficPolicy: {loadBalancer: {simple: RANDOM}}\n  subsets:", 1))
	resp = c.next()
	if resp.TypeUrl != envoy.ClusterType {
		t.Fatalf("a DestinationRule change sent %s first", resp.TypeUrl)
	}
	var v1 *clusterv3.Cluster
	for _, a := range resp.Resources {
		c := &clusterv3.Cluster{}
		if err := a.UnmarshalTo(c); err != nil {
			t.Fatal(err)
		}
		if c.Name == sni("v1") {
			v1 = c
		}
	}
	if v1 == nil || v1.LbPolicy != clusterv3.Cluster_RANDOM || v1.TransportSocket != nil {
		t.Fatalf("after a DestinationRule change, %s is %v", sni("v1"), v1)
	}
	c.nothingMore()

	// The Gateway admits web's services only, of which there are none:
	// the SNI clusters go, and EDS no longer answers their names.
	s.write(t, "eastwest.yaml", eastWestGateway("istio-system", autoServer("15443", "TLS", "['web/*']")))
	resp = c.next()
	if got := resourceNames(t, resp); resp.TypeUrl != envoy.ClusterType || slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "outbound_.") }) {
		t.Fatalf("a Gateway change sent %s %v, want clusters without SNI-DNAT ones", resp.TypeUrl, got)
	}
	// State-of-the-world EDS tells no removal: the client drops the
	// assignments with their clusters. Asked again, EDS has none of them.
	c.nothingMore()
	if got := resourceNames(t, c.watch(envoy.EndpointType, sni(""), reviewsC)); !slices.Equal(got, []string{reviewsC}) {
		t.Fatalf("EDS after a Gateway change: %v, want %s alone", got, reviewsC)
	}
	c.nothingMore()
}

// A Gateway change makes a gateway's clusters again only while an
// AUTO_PASSTHROUGH server (in this push's Model or the last one) can make
// them depend on Gateways: before one exists, and once the last one is
// gone and its clusters were re-sent, only listeners are generated.
func TestGatewayChangeScopesClusters(t *testing.T) {
	httpServer := func(port string) string {
		return "  - port: {number: " + port + ", name: http, protocol: HTTP}\n    hosts: [shop.example.com]\n"
	}
	auto := autoServer("15443", "TLS", "['*.local']")
	files := meshFiles(9080)
	files["eastwest.yaml"] = eastWestGateway("istio-system", httpServer("8080"))
	s := serveWorld(t, files)
	c := connectGRPC(t, s.srv.Addr(), eastWest.ID, "istio-system")
	c.labels = map[string]any{"istio": "eastwestgateway"}
	c.watch(envoy.ClusterType)
	c.watch(envoy.ListenerType)

	for _, step := range []struct {
		what    string
		servers string
		sent    []string // the types re-sent, in order
		want    int64    // generations: LDS alone, or CDS and LDS
	}{
		{"an HTTP server moved, no AUTO_PASSTHROUGH server", httpServer("8081"), []string{envoy.ListenerType}, 1},
		{"an AUTO_PASSTHROUGH server added", httpServer("8081") + auto, []string{envoy.ClusterType, envoy.ListenerType}, 2},
		{"an HTTP server moved beside it", httpServer("8082") + auto, []string{envoy.ListenerType}, 2},
		{"the AUTO_PASSTHROUGH server removed", httpServer("8082"), []string{envoy.ClusterType, envoy.ListenerType}, 2},
		{"an HTTP server moved once it is gone", httpServer("8083"), []string{envoy.ListenerType}, 1},
	} {
		g := s.gen.Stats().Generations
		s.write(t, "eastwest.yaml", eastWestGateway("istio-system", step.servers))
		for _, typ := range step.sent {
			if resp := c.next(); resp.TypeUrl != typ {
				t.Fatalf("%s: got %s, want %v in order", step.what, resp.TypeUrl, step.sent)
			}
		}
		c.nothingMore()
		if got := s.gen.Stats().Generations - g; got != step.want {
			t.Errorf("%s: %d generations, want %d", step.what, got, step.want)
		}
	}
}
