package envoy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

func routeConfig(t *testing.T, r envoy.Result, name string) *routev3.RouteConfiguration {
	t.Helper()
	rc, ok := r.ByName(name).(*routev3.RouteConfiguration)
	if !ok {
		t.Fatalf("no route configuration %s among %v", name, r.Names())
	}
	return rc
}

func vhost(t *testing.T, rc *routev3.RouteConfiguration, name string) *routev3.VirtualHost {
	t.Helper()
	for _, vh := range rc.VirtualHosts {
		if vh.Name == name {
			return vh
		}
	}
	t.Fatalf("no virtual host %s in %s", name, asJSON(rc))
	return nil
}

// summary renders a route as "match -> action" for comparisons.
func summary(r *routev3.Route) string {
	m := r.GetMatch()
	match := "prefix " + m.GetPrefix()
	switch {
	case m.GetPath() != "":
		match = "path " + m.GetPath()
	case m.GetSafeRegex() != nil:
		match = "regex " + m.GetSafeRegex().GetRegex()
	}
	for _, h := range m.Headers {
		match += fmt.Sprintf(" %s=%s", h.Name, h.GetStringMatch().GetExact())
	}
	for _, q := range m.QueryParameters {
		match += fmt.Sprintf(" ?%s=%s", q.Name, q.GetStringMatch().GetExact())
	}
	a := r.GetRoute()
	action := a.GetCluster()
	for _, wc := range a.GetWeightedClusters().GetClusters() {
		action += fmt.Sprintf("%s:%d ", strings.Split(wc.Name, "|")[2], wc.GetWeight().GetValue())
	}
	if rd := r.GetRedirect(); rd != nil {
		action = "redirect " + rd.GetPathRedirect() + " " + rd.ResponseCode.String()
	}
	return match + " -> " + strings.TrimSpace(action)
}

func summaries(vh *routev3.VirtualHost) []string {
	var out []string
	for _, r := range vh.Routes {
		out = append(out, summary(r))
	}
	return out
}

func fault(t *testing.T, r *routev3.Route) *faultv3.HTTPFault {
	t.Helper()
	f := &faultv3.HTTPFault{}
	a := r.TypedPerFilterConfig["envoy.filters.http.fault"]
	if a == nil {
		return nil
	}
	if err := a.UnmarshalTo(f); err != nil {
		t.Fatal(err)
	}
	return f
}

// A VirtualService's http routes, for a gRPC client: matches on headers,
// method, prefix and regex; weighted subsets; the timeout as
// max_stream_duration; retries on gRPC codes only; fault injection per
// route. The virtual host answers to the name the client asked for.
func TestGRPCRoutes(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	r := envoy.BuildRoutes(grpcApp, m, []string{"reviews:9080"})
	vh := vhost(t, routeConfig(t, r, "reviews:9080"), "reviews:9080")
	if got := strings.Join(vh.Domains, " "); got != "reviews:9080 "+reviews+" "+reviews+":9080" {
		t.Errorf("domains = %s", got)
	}
	want := []string{
		"prefix / :method=POST end-user=jason -> " + reviewsV3,
		"prefix /reviews.Reviews/ -> v1:80 v2:20",
		`regex /reviews\.Reviews/List.* -> v1:80 v2:20`,
		"prefix / -> " + reviewsV1,
	}
	if got := summaries(vh); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	jason := vh.Routes[0].GetRoute()
	if jason.GetMaxStreamDuration().GetMaxStreamDuration().AsDuration() != 2*time.Second || jason.Timeout != nil || jason.RetryPolicy != nil {
		t.Errorf("jason route: %s", asJSON(jason))
	}
	split := vh.Routes[1].GetRoute().GetRetryPolicy()
	if split.GetRetryOn() != "unavailable,cancelled" || split.GetNumRetries().GetValue() != 3 || split.PerTryTimeout != nil || split.RetryHostPredicate != nil {
		t.Errorf("split retries: %s", asJSON(split))
	}
	f := fault(t, vh.Routes[3])
	if f.GetAbort().GetGrpcStatus() != 14 || f.GetAbort().GetPercentage().GetNumerator() != 125000 ||
		f.GetDelay().GetFixedDelay().AsDuration() != 100*time.Millisecond || f.GetDelay().GetPercentage().GetNumerator() != 10000 {
		t.Errorf("fault: %s", asJSON(f))
	}
}

// The same kind of routes for a sidecar: route timeouts, the mesh's
// default retries, redirects, rewrites, header changes, mirrors, query
// matches; a default route where no VirtualService applies; a catch-all.
func TestSidecarRoutes(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	r := envoy.BuildRoutes(sidecar, m, nil)
	if got := strings.Join(r.Names(), " "); got != "9080 9090" {
		t.Fatalf("route configurations = %s", got)
	}
	rc := routeConfig(t, r, "9080")
	ratingsHost := vhost(t, rc, ratings+":9080")
	want := []string{
		"path /old -> redirect /new PERMANENT_REDIRECT",
		"prefix /v1 ?debug=1 -> outbound|9080||" + ratings,
		"prefix / -> outbound|9080||" + ratings,
	}
	if got := summaries(ratingsHost); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ratings routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rw := ratingsHost.Routes[1]
	a := rw.GetRoute()
	if a.PrefixRewrite != "/v2" || a.GetHostRewriteLiteral() != "ratings.internal" || len(a.RequestMirrorPolicies) != 1 ||
		a.RequestMirrorPolicies[0].GetRuntimeFraction().GetDefaultValue().GetNumerator() != 50000 ||
		len(rw.RequestHeadersToAdd) != 2 || rw.RequestHeadersToRemove[0] != "x-legacy" || len(rw.ResponseHeadersToAdd) != 1 {
		t.Errorf("rewrite route: %s", asJSON(rw))
	}
	if a.Timeout.AsDuration() != 0 || a.GetRetryPolicy().GetNumRetries().GetValue() != 2 {
		t.Errorf("rewrite route timeout %s, retries %s", a.Timeout.AsDuration(), asJSON(a.GetRetryPolicy()))
	}
	if got := ratingsHost.Routes[2].GetRoute().Timeout.AsDuration(); got != 4*time.Second {
		t.Errorf("route timeout %s, want 4s", got)
	}
	// productpage has no VirtualService: the default route.
	pp := vhost(t, rc, "productpage.web.svc.cluster.local:9080")
	if got := summaries(pp); len(got) != 1 || got[0] != "prefix / -> outbound|9080||productpage.web.svc.cluster.local" {
		t.Errorf("productpage routes = %v", got)
	}
	if !strings.Contains(strings.Join(pp.Domains, " "), "productpage.web:9080") || strings.Contains(strings.Join(pp.Domains, " "), " productpage ") {
		t.Errorf("productpage domains (another namespace: no bare name) = %v", pp.Domains)
	}
	if last := rc.VirtualHosts[len(rc.VirtualHosts)-1]; last.Name != "allow_any" || last.Domains[0] != "*" {
		t.Errorf("last virtual host = %s", asJSON(last))
	}
	// For a gRPC client the query-matching route is left out, with a
	// warning naming the field.
	g := envoy.BuildRoutes(grpcApp, m, []string{"ratings:9080"})
	if got := summaries(vhost(t, routeConfig(t, g, "ratings:9080"), "ratings:9080")); len(got) != 2 {
		t.Errorf("gRPC ratings routes = %v", got)
	}
	found := false
	for _, w := range g.Warnings {
		found = found || (w.Field == "spec.http[1].match[0]" && strings.Contains(w.Object, "VirtualService/default/ratings"))
	}
	if !found {
		t.Errorf("warnings = %v", g.Warnings)
	}
}

// Gateway routes come from the VirtualServices bound to the gateway,
// for the hosts its servers and the VirtualService share.
func TestGatewayRoutes(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	r := envoy.BuildRoutes(ingress, m, nil)
	if got := strings.Join(r.Names(), " "); got != "http.8080 https.8443.1.ingress.web" {
		t.Fatalf("route configurations = %s", got)
	}
	for _, name := range r.Names() {
		vh := vhost(t, routeConfig(t, r, name), "bookinfo.example.com:"+strings.Split(name, ".")[1])
		if got := summaries(vh); len(got) != 1 || got[0] != "prefix /productpage -> outbound|9080||productpage.web.svc.cluster.local" {
			t.Errorf("%s routes = %v", name, got)
		}
	}
	// The mesh's VirtualServices are not the gateway's.
	for _, vh := range routeConfig(t, r, "http.8080").VirtualHosts {
		if strings.Contains(vh.Name, "reviews") {
			t.Errorf("mesh route on the gateway: %s", vh.Name)
		}
	}
}

// A destination that no service matches still names its cluster (the
// client sees it missing, as with istiod) and is reported.
func TestUnknownDestination(t *testing.T) {
	m := loadWorld(t, "mesh", map[string]string{"vs.yaml": `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: productpage, namespace: web}
spec:
  hosts: [productpage]
  http:
  - route:
    - destination: {host: nope, port: {number: 80}}
`}).model()
	r := envoy.BuildRoutes(grpcApp, m, []string{"productpage.web:9080"})
	if got := summaries(vhost(t, routeConfig(t, r, "productpage.web:9080"), "productpage.web:9080")); got[0] != "prefix / -> outbound|80||nope.web.svc.cluster.local" {
		t.Errorf("routes = %v", got)
	}
	if len(r.Warnings) == 0 || r.Warnings[0].Field != "spec.http[0].route[0].destination.host" {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

// A short gateway name in an http match is the gateway of that name in
// the VirtualService's namespace, as in its own gateways list: a
// same-named gateway of another namespace does not get the route.
func TestMatchGatewayShortNameIsInTheVirtualServicesNamespace(t *testing.T) {
	m := loadWorld(t, "mesh", map[string]string{"edges.yaml": `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: a}
spec:
  selector: {app: edge}
  servers: [{port: {number: 8080, name: http, protocol: HTTP}, hosts: ['*/shop.example.com']}]
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: b}
spec:
  selector: {app: edge}
  servers: [{port: {number: 9090, name: http, protocol: HTTP}, hosts: ['*/shop.example.com']}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: shop, namespace: a}
spec:
  hosts: [shop.example.com]
  gateways: [a/edge, b/edge]
  http:
  - match: [{uri: {prefix: /only-a}, gateways: [edge]}]
    route: [{destination: {host: productpage.web.svc.cluster.local}}]
  - route: [{destination: {host: productpage.web.svc.cluster.local}}]
`}).model()
	r := envoy.BuildRoutes(edgeGateway, m, nil)
	for name, want := range map[string]int{"http.8080": 2, "http.9090": 1} {
		vh := vhost(t, routeConfig(t, r, name), "shop.example.com:"+strings.TrimPrefix(name, "http."))
		if got := summaries(vh); len(got) != want {
			t.Errorf("%s routes = %v, want %d", name, got, want)
		}
	}
}

// A gateway proxy only gets the VirtualServices exported to its own
// namespace, as istiod selects them: one private to another namespace
// is bound to the gateway in vain.
func TestGatewayRoutesFollowExportTo(t *testing.T) {
	for _, c := range []struct {
		exportTo string
		want     bool
	}{
		{exportTo: "[]", want: true},
		{exportTo: "['*']", want: true},
		{exportTo: "[edge]", want: true},
		{exportTo: "['.']", want: false},
		{exportTo: "[other]", want: false},
	} {
		t.Run(c.exportTo, func(t *testing.T) {
			m := loadWorld(t, "mesh", map[string]string{"edge.yaml": `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: a}
spec:
  selector: {app: edge}
  servers: [{port: {number: 8080, name: http, protocol: HTTP}, hosts: ['*/shop.example.com']}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: shop, namespace: a}
spec:
  hosts: [shop.example.com]
  gateways: [edge]
  exportTo: ` + c.exportTo + `
  http: [{route: [{destination: {host: productpage.web.svc.cluster.local}}]}]
`}).model()
			rc := routeConfig(t, envoy.BuildRoutes(edgeGateway, m, nil), "http.8080")
			got := slices.ContainsFunc(rc.VirtualHosts, func(vh *routev3.VirtualHost) bool { return vh.Name == "shop.example.com:8080" })
			if got != c.want {
				t.Errorf("virtual host for the VirtualService exported to %s: %v, want %v", c.exportTo, got, c.want)
			}
		})
	}
}
