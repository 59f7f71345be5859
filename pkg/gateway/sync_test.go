package gateway_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/gateway"
	"github.com/meshcp/meshcp/pkg/krt"
)

// Synced means complete: when the VirtualServices are synced, every route
// is in them, although the routes were first translated before the
// listeners they attach to existed. The daemon's /ready and the xDS
// server's first push rely on it. The race it guards against shows in
// some runs only, so it is tried a number of times.
func TestSyncedMeansComplete(t *testing.T) {
	const routes = 10
	for run := range 20 {
		stop := make(chan struct{})
		opts := func(name string) []krt.CollectionOption {
			return []krt.CollectionOption{krt.WithName(name), krt.WithStop(stop)}
		}
		in := gateway.Inputs{
			Gateways: krt.NewStaticCollection[config.Config](nil, []config.Config{{
				Meta: config.Meta{GroupVersionKind: schema.KubernetesGateway, Name: "gw", Namespace: "infra"},
				Spec: &gatewayv1.GatewaySpec{GatewayClassName: "meshcp", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
			}}, opts("gateways")...),
			Services: krt.NewStaticCollection[config.Config](nil, []config.Config{{
				Meta: config.Meta{GroupVersionKind: schema.Service, Name: "v1", Namespace: "infra"},
				Spec: &corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
			}}, opts("services")...),
		}
		var rs []config.Config
		for i := range routes {
			rs = append(rs, benchRoute(i, "v1"))
		}
		in.HTTPRoutes = krt.NewStaticCollection[config.Config](nil, rs, opts("routes")...)
		c, err := gateway.New(in, stop, gateway.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !c.VirtualServices.WaitUntilSynced(stop) {
			t.Fatal("never synced")
		}
		n := len(c.VirtualServices.List())
		close(stop)
		if n != routes {
			t.Fatalf("run %d: %d VirtualServices when synced, want %d", run, n, routes)
		}
	}
}
