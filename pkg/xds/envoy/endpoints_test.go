package envoy_test

import (
	"fmt"
	"strings"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// render writes an assignment as "zone(weight): address:port HEALTH
// xweight, ..." per locality.
func render(cla *endpointv3.ClusterLoadAssignment) string {
	var parts []string
	for _, l := range cla.Endpoints {
		var eps []string
		for _, e := range l.LbEndpoints {
			sa := e.GetEndpoint().GetAddress().GetSocketAddress()
			eps = append(eps, fmt.Sprintf("%s:%d %s x%d", sa.GetAddress(), sa.GetPortValue(), e.HealthStatus, e.GetLoadBalancingWeight().GetValue()))
		}
		parts = append(parts, fmt.Sprintf("%s(%d): %s", l.GetLocality().GetZone(), l.GetLoadBalancingWeight().GetValue(), strings.Join(eps, ", ")))
	}
	return strings.Join(parts, "; ")
}

// Endpoints grouped by locality with weights over 0, health from the
// EndpointSlice conditions, each address once, subsets by Pod labels.
func TestEndpoints(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	for _, p := range []*envoy.Proxy{sidecar, grpcApp} {
		r := envoy.BuildEndpoints(p, m, []string{reviewsC, reviewsV1, reviewsV2, reviewsV3, apiC, "outbound|9080||nope.x"})
		want := map[string]string{
			reviewsC:  "zone-a(3): 127.0.0.11:50051 HEALTHY x1, 127.0.0.14:50051 UNHEALTHY x1, 127.0.0.15:50051 DRAINING x1; zone-b(2): 127.0.0.12:50051 HEALTHY x1, 127.0.0.13:50051 HEALTHY x1",
			reviewsV1: "zone-a(2): 127.0.0.11:50051 HEALTHY x1, 127.0.0.14:50051 UNHEALTHY x1",
			reviewsV2: "zone-a(1): 127.0.0.15:50051 DRAINING x1; zone-b(1): 127.0.0.12:50051 HEALTHY x1",
			reviewsV3: "zone-b(1): 127.0.0.13:50051 HEALTHY x1",
		}
		if len(r.Resources) != len(want) {
			t.Errorf("%s: assignments %v, want those of %d EDS clusters (none for the DNS one)", p.Kind, r.Names(), len(want))
		}
		for name, w := range want {
			cla, ok := r.ByName(name).(*endpointv3.ClusterLoadAssignment)
			if !ok {
				t.Errorf("%s: no assignment %s", p.Kind, name)
				continue
			}
			if got := render(cla); got != w || cla.ClusterName != name {
				t.Errorf("%s %s:\n got %s\nwant %s", p.Kind, name, got, w)
			}
		}
	}
	// Without names: every EDS cluster of the proxy.
	if got := envoy.BuildEndpoints(sidecar, m, nil).Names(); len(got) != 8 {
		t.Errorf("wildcard EDS = %v", got)
	}
}
