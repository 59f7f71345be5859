package envoy_test

import (
	"strings"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/meshcp/meshcp/pkg/registry/registrytest"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// The bundled examples generate valid configuration for every flavour,
// and each reviews subset finds its pod.
func TestExamplesGenerate(t *testing.T) {
	w := &world{registrytest.Load(t, []string{"../../../examples/config/bookinfo"}, nil)}
	m := w.model()
	gw := &envoy.Proxy{ID: "gw", Kind: envoy.Gateway, Namespace: "bookinfo", Labels: map[string]string{"istio": "ingressgateway"}}
	app := &envoy.Proxy{ID: "app", Kind: envoy.ProxylessGRPC, Namespace: "bookinfo"}
	for _, p := range []*envoy.Proxy{{ID: "sidecar", Kind: envoy.Sidecar, Namespace: "bookinfo"}, gw, app} {
		for _, typ := range envoy.Types() {
			var names []string
			if p.Kind == envoy.ProxylessGRPC && (typ == envoy.ListenerType || typ == envoy.RouteType) {
				names = []string{"reviews:9080", "ratings:9080"}
			}
			res := envoy.Builders{}.Generate(envoy.Request{Proxy: p, TypeURL: typ, Names: names}, m)
			if len(res.Resources) == 0 {
				t.Errorf("%s %s: nothing", p.Kind, typ)
			}
			for _, r := range res.Resources {
				if err := envoy.Validate(r.Message); err != nil {
					t.Errorf("%s %s %s: %v", p.Kind, typ, r.Name, err)
				}
			}
		}
	}
	eds := envoy.BuildEndpoints(app, m, nil)
	for v, addr := range map[string]string{"v1": "127.0.0.3", "v2": "127.0.0.4", "v3": "127.0.0.5"} {
		cla, _ := eds.ByName("outbound|9080|" + v + "|reviews.bookinfo.svc.cluster.local").(*endpointv3.ClusterLoadAssignment)
		if got := render(cla); !strings.HasPrefix(got, "zone-a(1): "+addr+":9080 HEALTHY") {
			t.Errorf("reviews %s: %s", v, got)
		}
	}
}
