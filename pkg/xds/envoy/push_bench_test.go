package envoy_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/xds"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// proxylessFleet is n proxyless gRPC clients of namespace ns, each
// watching, as grpc-go does, one of targets services of bigMesh: its
// listener and route "host:9090", and the clusters the route names (the
// service and its subsets v1 and v2) and their endpoints.
func proxylessFleet(n, targets int) (proxies []*xds.Proxy, watches []map[string]*xds.Watch) {
	for i := range n {
		host := fmt.Sprintf("svc%d.ns.svc.cluster.local", i%targets)
		listener := host + ":9090"
		clusters := []string{"outbound|9090||" + host, "outbound|9090|v1|" + host, "outbound|9090|v2|" + host}
		named := func(names ...string) *xds.Watch {
			w := &xds.Watch{Names: map[string]struct{}{}}
			for _, n := range names {
				w.Names[n] = struct{}{}
			}
			return w
		}
		proxies = append(proxies, &xds.Proxy{ID: fmt.Sprintf("grpc-%d", i), Kind: xds.ClientGRPC, Namespace: "ns"})
		watches = append(watches, map[string]*xds.Watch{
			envoy.ListenerType: named(listener), envoy.RouteType: named(listener),
			envoy.ClusterType: named(clusters...), envoy.EndpointType: named(clusters...),
		})
	}
	return proxies, watches
}

// BenchmarkProxylessPush is one push of a VirtualService change to 1000
// proxyless gRPC clients watching 10 services of a 100-service mesh: the
// Model built and every type generated and packed for every client.
//
//   - shared: the Generator as the daemon runs it, one Model per push and
//     each distinct request generated once;
//   - per-connection: one Model per push, but every client's types
//     generated and packed for it alone;
//   - model-per-connection: a Model built for every client too.
//
// generations/op counts the builder runs; the ratio of ns/op between the
// variants is what sharing saves.
func BenchmarkProxylessPush(b *testing.B) {
	const clients, targets = 1000, 10
	in := bigMeshInputs(100)
	proxies, watches := proxylessFleet(clients, targets)
	change := xds.NewPushRequest(xds.ConfigKey{Kind: schema.VirtualService, Namespace: "ns", Name: "svc0"})
	b.Run("shared", func(b *testing.B) {
		g, err := envoy.NewGenerator(func() envoy.Inputs { return in }, envoy.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		before := g.Stats()
		for range b.N {
			g.Prepare(change)
			for i, p := range proxies {
				for _, typ := range envoy.Types() {
					if _, err := g.For(typ).Generate(p, watches[i][typ], change); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		after := g.Stats()
		b.ReportMetric(float64(after.Generations-before.Generations)/float64(b.N), "generations/op")
		b.ReportMetric(float64(after.ModelBuilds-before.ModelBuilds)/float64(b.N), "models/op")
	})
	unshared := func(b *testing.B, modelPerClient bool) {
		b.ReportAllocs()
		for range b.N {
			m := envoy.NewModel(in)
			for i, p := range proxies {
				if modelPerClient {
					m = envoy.NewModel(in)
				}
				for _, typ := range envoy.Types() {
					var names []string
					for n := range watches[i][typ].Names {
						names = append(names, n)
					}
					for _, r := range (envoy.Builders{}).Generate(envoy.Request{Proxy: p, TypeURL: typ, Names: names}, m).Resources {
						body := &anypb.Any{}
						if err := anypb.MarshalFrom(body, r.Message, proto.MarshalOptions{Deterministic: true}); err != nil {
							b.Fatal(err)
						}
						_ = xds.NewResource(r.Name, body)
					}
				}
			}
		}
		b.ReportMetric(float64(clients*len(envoy.Types())), "generations/op")
	}
	b.Run("per-connection", func(b *testing.B) { unshared(b, false) })
	b.Run("model-per-connection", func(b *testing.B) { unshared(b, true) })
}
