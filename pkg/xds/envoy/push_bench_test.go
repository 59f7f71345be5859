package envoy_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	networking "istio.io/api/networking/v1alpha3"

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

// BenchmarkProxylessPushOverADS is the same push through meshcp's xDS
// server, over loopback: 1000 ADS streams of proxyless clients (on 10
// connections) subscribed as grpc-go subscribes, and one op is a
// VirtualService edit of the 10 services they watch, from the push to the
// moment every client has received its new routes. It adds to the
// generation what the server does per connection: scoping, versions,
// encoding (once per distinct response), the sends.
func BenchmarkProxylessPushOverADS(b *testing.B) {
	const clients, targets = 1000, 10
	var weight atomic.Int32
	weight.Store(90)
	base := bigMeshInputs(100)
	inputs := func() envoy.Inputs {
		in := base
		w := weight.Load()
		in.VirtualServices = slices.Clone(base.VirtualServices)
		for i := range targets {
			vs := proto.Clone(in.VirtualServices[i].Spec.(*networking.VirtualService)).(*networking.VirtualService)
			vs.Http[0].Route[0].Weight, vs.Http[0].Route[1].Weight = w, 100-w
			in.VirtualServices[i].Spec = vs
		}
		return in
	}
	g, err := envoy.NewGenerator(inputs, envoy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	opts := xds.DefaultOptions()
	opts.Addr, opts.TLSAddr = "127.0.0.1:0", ""
	opts.Debounce = xds.DebounceOptions{}
	srv, err := xds.NewServer(opts, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, typ := range envoy.Types() {
		srv.Generators().Register(typ, g.For(typ))
	}
	srv.BeforePush(g.Prepare)
	stop := make(chan struct{})
	if err := srv.Start(stop); err != nil {
		b.Fatal(err)
	}
	defer func() {
		close(stop)
		srv.Wait()
	}()

	_, watches := proxylessFleet(clients, targets)
	var routes atomic.Int64 // RDS responses received by every client
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for c := range 10 {
		cc, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Close()
		for i := c; i < clients; i += 10 {
			s, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				runBenchClient(s, fmt.Sprintf("grpc-%d", i), watches[i], &routes)
			}()
		}
	}
	waitCount(b, &routes, clients)
	b.ReportAllocs()
	b.ResetTimer()
	before := g.Stats()
	for i := range b.N {
		weight.Store(int32(10 + i%80))
		srv.Push(xds.NewPushRequest(xds.ConfigKey{Kind: schema.VirtualService, Namespace: "ns", Name: "svc0"}))
		waitCount(b, &routes, int64(clients*(i+2)))
	}
	b.StopTimer()
	after := g.Stats()
	b.ReportMetric(float64(after.Generations-before.Generations)/float64(b.N), "generations/op")
	b.ReportMetric(float64(after.ModelBuilds-before.ModelBuilds)/float64(b.N), "models/op")
}

// runBenchClient subscribes as grpc-go does and ACKs every response,
// counting the RDS responses, until the stream ends.
func runBenchClient(s grpc.BidiStreamingClient[discoveryv3.DiscoveryRequest, discoveryv3.DiscoveryResponse], id string, watches map[string]*xds.Watch, routes *atomic.Int64) {
	names := func(typ string) []string { return slices.Sorted(maps.Keys(watches[typ].Names)) }
	md, _ := structpb.NewStruct(map[string]any{"GENERATOR": "grpc", "NAMESPACE": "ns"})
	for i, typ := range []string{envoy.ListenerType, envoy.RouteType, envoy.ClusterType, envoy.EndpointType} {
		req := &discoveryv3.DiscoveryRequest{TypeUrl: typ, ResourceNames: names(typ)}
		if i == 0 {
			req.Node = &corev3.Node{Id: id, Metadata: md}
		}
		if s.Send(req) != nil {
			return
		}
	}
	for {
		resp, err := s.Recv()
		if err != nil {
			return
		}
		if resp.TypeUrl == envoy.RouteType {
			routes.Add(1)
		}
		if s.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: names(resp.TypeUrl)}) != nil {
			return
		}
	}
}

// waitCount waits until n reaches want.
func waitCount(b *testing.B, n *atomic.Int64, want int64) {
	deadline := time.Now().Add(time.Minute)
	for n.Load() < want {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d route responses arrived", n.Load(), want)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
