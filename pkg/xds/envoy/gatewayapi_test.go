package envoy_test

import (
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/gateway"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/registry/registrytest"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
	"github.com/meshcp/meshcp/test/testcert"
)

// gatewayAPIWorld is Gateway API objects read from files and translated
// as the daemon does, with the derived Istio configs among the builders'
// inputs.
func gatewayAPIWorld(t *testing.T, files map[string]string) envoy.Sources {
	t.Helper()
	w := registrytest.Load(t, nil, files)
	stop := krttest.Stop(t)
	ctrl, err := gateway.New(gateway.InputsFrom(w.Sources), stop, gateway.Options{Domain: "cluster.local", Logger: krttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !ctrl.Gateways.WaitUntilSynced(stop) || !ctrl.VirtualServices.WaitUntilSynced(stop) {
		t.Fatal("the Gateway API translation never synced")
	}
	return envoy.Sources{Registry: w.Registry, Configs: w.Sources, Derived: []krt.Collection[config.Config]{ctrl.Gateways, ctrl.VirtualServices}}
}

// tlsSecret is a kubernetes.io/tls Secret with a key pair made for the
// test.
func tlsSecret(t *testing.T, namespace, name string) string {
	t.Helper()
	pair := testcert.SelfSigned(t, "bookinfo.example.com")
	indent := func(b []byte) string {
		return "    " + strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n    ")
	}
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: " + namespace + "}\ntype: kubernetes.io/tls\nstringData:\n" +
		"  tls.crt: |\n" + indent(pair.Cert) + "\n" +
		"  tls.key: |\n" + indent(pair.Key) + "\n"
}

const gatewayAPIObjects = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: web}
spec:
  gatewayClassName: meshcp
  listeners:
  - {name: http, port: 8080, protocol: HTTP, hostname: bookinfo.example.com}
  - name: https
    port: 8443
    protocol: HTTPS
    hostname: bookinfo.example.com
    tls: {mode: Terminate, certificateRefs: [{name: cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: pages, namespace: web}
spec:
  parentRefs: [{name: web}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /productpage}}]
    backendRefs: [{name: productpage, port: 9080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reviews, namespace: default}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /reviews.Reviews}}]
    backendRefs: [{name: reviews, port: 9080}]
---
apiVersion: v1
kind: Service
metadata: {name: productpage, namespace: web}
spec: {clusterIP: 10.96.0.20, ports: [{name: http, port: 9080}]}
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {clusterIP: 10.96.0.10, ports: [{name: grpc, port: 9080}]}
`

// What the Gateway API engineer handed over reaches the proxies right:
// the derived VirtualServices' prefixes match by path element (Envoy's
// path_separated_prefix; for gRPC clients, which reject it, the exact
// path plus the prefix with a slash), and the derived Gateways' credential
// names are SDS names as they are, not prefixed again. A route whose
// parent is a Service routes the mesh's gRPC clients.
func TestGatewayAPIConfigsReachTheBuilders(t *testing.T) {
	src := gatewayAPIWorld(t, map[string]string{"objects.yaml": gatewayAPIObjects, "secret.yaml": tlsSecret(t, "web", "cert")})
	m := envoy.NewModel(envoy.InputsFrom(src))
	gw := &envoy.Proxy{ID: "router~10.0.0.9~web-0.web~web.svc.cluster.local", Kind: envoy.Gateway, Namespace: "web",
		Labels: map[string]string{"gateway.networking.k8s.io/gateway-name": "web"}}
	side := &envoy.Proxy{ID: "sidecar~10.0.0.8~app.default~default.svc.cluster.local", Kind: envoy.Sidecar, Namespace: "default"}

	ls := envoy.BuildListeners(gw, m, nil)
	ctx := downstreamTLSOf(t, listener(t, ls, "0.0.0.0_8443").FilterChains[0])
	if got := ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()[0].GetName(); got != "kubernetes-gateway://web/cert" {
		t.Errorf("SDS secret of the HTTPS listener = %q, want the credential name as it is", got)
	}

	rs := envoy.BuildRoutes(gw, m, []string{"http.8080"})
	page := vhost(t, routeConfig(t, rs, "http.8080"), "bookinfo.example.com:8080").Routes[0].GetMatch()
	if page.GetPathSeparatedPrefix() != "/productpage" {
		t.Errorf("gateway route match = %s, want path_separated_prefix /productpage", asJSON(page))
	}
	sc := envoy.BuildRoutes(side, m, []string{"9080"})
	if got := vhost(t, routeConfig(t, sc, "9080"), reviews+":9080").Routes[0].GetMatch(); got.GetPathSeparatedPrefix() != "/reviews.Reviews" {
		t.Errorf("sidecar mesh route match = %s", asJSON(got))
	}
	g := envoy.BuildRoutes(grpcApp, m, []string{"reviews:9080"})
	var got []string
	for _, r := range vhost(t, routeConfig(t, g, "reviews:9080"), "reviews:9080").Routes {
		got = append(got, summary(r))
	}
	want := []string{"path /reviews.Reviews -> " + reviewsC, "prefix /reviews.Reviews/ -> " + reviewsC}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gRPC mesh routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, res := range []envoy.Result{ls, rs, sc, g, envoy.BuildRoutes(gw, m, nil), envoy.BuildClusters(gw, m, nil)} {
		for _, r := range res.Resources {
			if err := envoy.Validate(r.Message); err != nil {
				t.Errorf("%s: %v", r.Name, err)
			}
		}
		for _, w := range res.Warnings {
			t.Errorf("warning: %s", w)
		}
	}
}

// Istio's own prefixes stay by character; a prefix of "/" matches
// everything either way.
func TestPrefixesByCharacterOutsideGatewaySemantics(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	for _, p := range []*envoy.Proxy{grpcApp, sidecar} {
		names := []string{"reviews:9080"}
		if p == sidecar {
			names = []string{"9080"}
		}
		for _, rc := range envoy.BuildRoutes(p, m, names).Resources {
			for _, vh := range rc.Message.(*routev3.RouteConfiguration).VirtualHosts {
				for _, r := range vh.Routes {
					if r.GetMatch().GetPathSeparatedPrefix() != "" {
						t.Errorf("%s: %s matches by path element without gateway semantics", p.Kind, summary(r))
					}
				}
			}
		}
	}
}

// A consumer route (in the client's namespace, for a Service of another)
// wins there over the Service's own producer route; other namespaces keep
// the producer's.
func TestConsumerRouteWinsInItsNamespace(t *testing.T) {
	src := gatewayAPIWorld(t, map[string]string{"objects.yaml": gatewayAPIObjects, "consumer.yaml": `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reviews-canary, namespace: testers}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews, namespace: default}]
  rules:
  - backendRefs: [{name: canary, port: 9080}]
---
apiVersion: v1
kind: Service
metadata: {name: canary, namespace: testers}
spec: {clusterIP: 10.96.0.30, ports: [{name: grpc, port: 9080}]}
`})
	m := envoy.NewModel(envoy.InputsFrom(src))
	for ns, want := range map[string]string{
		"testers": "prefix / -> outbound|9080||canary.testers.svc.cluster.local",
		"default": "path /reviews.Reviews -> " + reviewsC,
		"other":   "path /reviews.Reviews -> " + reviewsC,
	} {
		p := &envoy.Proxy{ID: "grpc-" + ns, Kind: envoy.ProxylessGRPC, Namespace: ns}
		rs := envoy.BuildRoutes(p, m, []string{reviews + ":9080"})
		if got := summary(vhost(t, routeConfig(t, rs, reviews+":9080"), reviews+":9080").Routes[0]); got != want {
			t.Errorf("a client in %s routes %s, want %s", ns, got, want)
		}
	}
}

const gatewayAPIL4Objects = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: l4, namespace: infra}
spec:
  gatewayClassName: meshcp
  listeners:
  - {name: postgres, port: 5432, protocol: TCP}
  - name: passthrough
    port: 443
    protocol: TLS
    hostname: "*.db.example.com"
    tls: {mode: Passthrough}
  - name: terminate
    port: 8443
    protocol: TLS
    hostname: reports.example.com
    tls: {mode: Terminate, certificateRefs: [{name: cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: pg, namespace: infra}
spec:
  parentRefs: [{name: l4, sectionName: postgres}]
  rules:
  - backendRefs:
    - {name: pg-primary, port: 5432, weight: 4}
    - {name: pg-replica, port: 5432, weight: 1}
    - {name: pg-gone, port: 5432, weight: 5}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: dbs, namespace: infra}
spec:
  parentRefs: [{name: l4, sectionName: passthrough}]
  hostnames: [orders.db.example.com, users.db.example.com]
  rules:
  - backendRefs: [{name: db-router, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: reports, namespace: infra}
spec:
  parentRefs: [{name: l4, sectionName: terminate}]
  rules:
  - backendRefs: [{name: pg-replica, port: 5432}]
---
apiVersion: v1
kind: Service
metadata: {name: pg-primary, namespace: infra}
spec: {clusterIP: 10.96.1.1, ports: [{name: tcp, port: 5432}]}
---
apiVersion: v1
kind: Service
metadata: {name: pg-replica, namespace: infra}
spec: {clusterIP: 10.96.1.2, ports: [{name: tcp, port: 5432}]}
---
apiVersion: v1
kind: Service
metadata: {name: db-router, namespace: infra}
spec: {clusterIP: 10.96.1.3, ports: [{name: tls, port: 443}]}
`

// TCPRoutes and TLSRoutes reach a Gateway's proxies: the TCP listener
// forwards to the TCPRoute's weighted backends, the share of the one
// that does not exist refused by BlackHoleCluster; the Passthrough listener
// routes each of the TLSRoute's hostnames by SNI, TLS untouched; the
// Terminate listener decrypts with the listener's certificate and
// forwards by the TLSRoute. Every resource the gateway gets validates,
// and every cluster its listeners name is in its CDS.
func TestGatewayAPITCPAndTLSRoutes(t *testing.T) {
	src := gatewayAPIWorld(t, map[string]string{"objects.yaml": gatewayAPIL4Objects, "secret.yaml": tlsSecret(t, "infra", "cert")})
	m := envoy.NewModel(envoy.InputsFrom(src))
	gw := &envoy.Proxy{ID: "router~10.0.0.9~l4-0.infra~infra.svc.cluster.local", Kind: envoy.Gateway, Namespace: "infra",
		Labels: map[string]string{"gateway.networking.k8s.io/gateway-name": "l4"}}

	ls := envoy.BuildListeners(gw, m, nil)
	const (
		gwPrefix = "l4-istio-autogenerated-k8s-gateway-"
		primary  = "outbound|5432||pg-primary.infra.svc.cluster.local"
		replica  = "outbound|5432||pg-replica.infra.svc.cluster.local"
		router   = "outbound|443||db-router.infra.svc.cluster.local"
	)
	want := map[string][]string{
		"0.0.0.0_5432": {"tcp.5432.0." + gwPrefix + "postgres.infra -> " + primary + ":4 " + replica + ":1 BlackHoleCluster:5"},
		"0.0.0.0_443": {
			"tls.443.orders.db.example.com tls[orders.db.example.com] -> " + router,
			"tls.443.users.db.example.com tls[users.db.example.com] -> " + router,
			"listener filter envoy.filters.listener.tls_inspector",
		},
		"0.0.0.0_8443": {
			"tls.8443.reports.example.com tls[reports.example.com] terminated -> " + replica,
			"listener filter envoy.filters.listener.tls_inspector",
		},
	}
	if got := strings.Join(ls.Names(), " "); got != "0.0.0.0_443 0.0.0.0_5432 0.0.0.0_8443" {
		t.Fatalf("listeners = %s (warnings %v)", got, ls.Warnings)
	}
	for name, w := range want {
		if got := chainSummaries(t, listener(t, ls, name)); strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
	}
	ctx := downstreamTLSOf(t, listener(t, ls, "0.0.0.0_8443").FilterChains[0])
	if got := ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()[0].GetName(); got != "kubernetes-gateway://infra/cert" {
		t.Errorf("SDS secret of the terminating listener = %q", got)
	}
	checkL4Result(t, gw, m, ls)
	for _, res := range []envoy.Result{ls, envoy.BuildRoutes(gw, m, nil), envoy.BuildClusters(gw, m, nil)} {
		for _, r := range res.Resources {
			if err := envoy.Validate(r.Message); err != nil {
				t.Errorf("%s: %v", r.Name, err)
			}
		}
		for _, w := range res.Warnings {
			t.Errorf("warning: %s", w)
		}
	}
}
