package envoy_test

import (
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

const l4PushFiles = `apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: 10.96.0.12, ports: [{name: tcp, port: 5432}]}
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: default}
spec: {clusterIP: 10.96.0.11, ports: [{name: http, port: 9080}]}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: db, namespace: default}
spec:
  host: db
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}}
`

// ratingsVS is an http-only VirtualService; each timeout makes another
// route configuration.
func ratingsVS(timeout string) string {
	return `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ratings, namespace: default}
spec:
  hosts: [ratings]
  http:
  - route: [{destination: {host: ratings}}]
    timeout: ` + timeout + "\n"
}

const dbSplitVS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: default}
spec:
  hosts: [db]
  tcp:
  - route:
    - {destination: {host: db, subset: v1}, weight: 80}
    - {destination: {host: db, subset: v2}, weight: 20}
`

// A VirtualService change re-sends an Envoy's listeners only where they
// can depend on VirtualServices: while no VirtualService has tcp or tls
// routes (in this push's Model or the last one), listeners are not even
// generated for it; once one has, they are generated again and sent when
// they changed, including when the last tcp route goes away.
func TestVirtualServiceChangeScopesListeners(t *testing.T) {
	s := serveWorld(t, map[string]string{"services.yaml": l4PushFiles, "ratings-vs.yaml": ratingsVS("1s")})
	c := connectGRPC(t, s.srv.Addr(), "sidecar~10.0.0.5~app-0.default~default.svc.cluster.local", "default")
	if got := dbListener(t, c.watch(envoy.ListenerType)); got != "outbound|5432||db.default.svc.cluster.local" {
		t.Fatalf("db's listener before any tcp route: %s", got)
	}
	c.watch(envoy.RouteType, "9080")

	step := func(what, file, content string, wantTypes ...string) *discoveryv3.DiscoveryResponse {
		t.Helper()
		s.write(t, file, content)
		var last *discoveryv3.DiscoveryResponse
		for _, typ := range wantTypes {
			resp := c.next()
			if resp.TypeUrl != typ {
				t.Fatalf("%s: got %s, want %v in order", what, resp.TypeUrl, wantTypes)
			}
			if typ == envoy.ListenerType {
				last = resp
			}
		}
		c.nothingMore()
		return last
	}
	generations := func() int64 { return s.gen.Stats().Generations }

	// No tcp or tls route anywhere: an http change re-sends routes, and
	// listeners are not generated.
	g := generations()
	step("http change, no tcp routes", "ratings-vs.yaml", ratingsVS("2s"), envoy.RouteType)
	if n := generations() - g; n != 1 {
		t.Errorf("an http-only change with no tcp routes made %d generations, want 1 (RDS)", n)
	}
	// A tcp route: the listeners change and are sent (routes did not).
	resp := step("tcp route added", "db-vs.yaml", dbSplitVS, envoy.ListenerType)
	if got := dbListener(t, resp); got != "outbound|5432|v1|db.default.svc.cluster.local:80 outbound|5432|v2|db.default.svc.cluster.local:20" {
		t.Errorf("db's listener with the split: %s", got)
	}
	// With a tcp route in the mesh, an http change makes listeners again,
	// which did not change and are not sent.
	g = generations()
	step("http change beside a tcp route", "ratings-vs.yaml", ratingsVS("3s"), envoy.RouteType)
	if n := generations() - g; n != 2 {
		t.Errorf("an http-only change beside tcp routes made %d generations, want 2 (LDS, RDS)", n)
	}
	// The last tcp route goes: the listeners that held it are re-sent.
	resp = step("tcp route removed", "db-vs.yaml", "# no VirtualService\n", envoy.ListenerType)
	if got := dbListener(t, resp); got != "outbound|5432||db.default.svc.cluster.local" {
		t.Errorf("db's listener after the split: %s", got)
	}
	// And then listeners are left alone again.
	g = generations()
	step("http change after", "ratings-vs.yaml", ratingsVS("4s"), envoy.RouteType)
	if n := generations() - g; n != 1 {
		t.Errorf("an http-only change once no tcp route is left made %d generations, want 1 (RDS)", n)
	}

	// A proxyless gRPC client's listeners never depend on them.
	grpcClient := connectGRPC(t, s.srv.Addr(), "grpc-l4", "default")
	grpcClient.watch(envoy.ListenerType, "db.default.svc.cluster.local:5432")
	s.write(t, "db-vs.yaml", dbSplitVS)
	if resp := c.next(); resp.TypeUrl != envoy.ListenerType {
		t.Fatalf("the sidecar got %s", resp.TypeUrl)
	}
	grpcClient.nothingMore()
}

// dbListener summarizes the tcp proxy of db's listener in an LDS
// response.
func dbListener(t *testing.T, resp *discoveryv3.DiscoveryResponse) string {
	t.Helper()
	var r envoy.Result
	for _, a := range resp.Resources {
		l := &listenerv3.Listener{}
		if err := a.UnmarshalTo(l); err != nil {
			t.Fatal(err)
		}
		r.Resources = append(r.Resources, envoy.Resource{Name: l.Name, Message: l})
	}
	l := listener(t, r, "10.96.0.12_5432")
	if len(l.FilterChains) != 1 {
		t.Fatalf("db's listener has %d chains", len(l.FilterChains))
	}
	return strings.TrimPrefix(chainSummaries(t, l)[0], "-> ")
}
