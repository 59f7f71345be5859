package xds

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

func TestFanOutReachesOnlyAffectedWatchers(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	cc := dial(t, srv.Addr())
	watchers := map[string]*sotwStream{}
	for _, name := range []string{"bookinfo/reviews", "bookinfo/ratings"} {
		s := openSotW(t, cc)
		s.send(&discoveryv3.DiscoveryRequest{Node: node(name), TypeUrl: vsType, ResourceNames: []string{name}})
		s.send(ack(s.recv(), name))
		watchers[name] = s
	}
	d := openDelta(t, cc)
	d.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("delta-cart"), TypeUrl: vsType, ResourceNamesSubscribe: []string{"shop/cart"}})
	d.send(deltaAck(d.recv()))

	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v2"))
	resp := watchers["bookinfo/reviews"].recv()
	if got := decodeMCP(t, resp.Resources); got["bookinfo/reviews"] != "reviews.v2" {
		t.Fatalf("the reviews watcher got %v", got)
	}
	watchers["bookinfo/reviews"].send(ack(resp, "bookinfo/reviews"))
	// Every client is synced to that push, the ones it did not concern
	// included, and those got nothing.
	var res waitResult
	if code := getJSON(t, srv, fmt.Sprintf("/debug/syncz?generation=%d&wait=10s", srv.currentGeneration()), &res); code != http.StatusOK || !res.Synced || res.Connections != 3 {
		t.Fatalf("wait answered %d %+v", code, res)
	}
	sentinel(t, watchers["bookinfo/ratings"], "example.com/Unknown")
	deltaSentinel(t, d, "example.com/Unknown")
}

func TestSynczWaitsForEveryACK(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("slow"), TypeUrl: vsType})
	s.send(ack(s.recv()))
	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v2"))
	pushed := s.recv() // not ACKed yet
	gen := srv.currentGeneration()

	var res waitResult
	if code := getJSON(t, srv, fmt.Sprintf("/debug/syncz?generation=%d&wait=50ms", gen), &res); code != http.StatusGatewayTimeout || res.Synced ||
		len(res.Behind) != 1 || res.Behind[0].NodeID != "slow" || res.Behind[0].SyncedGeneration >= gen {
		t.Fatalf("before the ACK: %d %+v", code, res)
	}
	// The waiter answers as soon as the ACK arrives.
	done := make(chan int, 1)
	go func() {
		var r waitResult
		done <- getJSON(t, srv, fmt.Sprintf("/debug/syncz?generation=%d&wait=%s", gen, recvTimeout), &r)
	}()
	time.Sleep(20 * time.Millisecond)
	s.send(ack(pushed))
	if code := <-done; code != http.StatusOK {
		t.Fatalf("after the ACK the wait answered %d", code)
	}
	var dump syncz
	getJSON(t, srv, "/debug/syncz", &dump)
	if dump.Generation != gen || dump.Connections[0].SyncedGeneration != gen {
		t.Fatalf("syncz: %+v", dump)
	}
	// A generation not pushed yet is not synced; bad parameters are errors.
	if code := getJSON(t, srv, fmt.Sprintf("/debug/syncz?generation=%d", gen+1), &res); code != http.StatusGatewayTimeout {
		t.Errorf("a future generation answered %d", code)
	}
	rec := getStatus(srv, "/debug/syncz?generation=x")
	if rec != http.StatusBadRequest {
		t.Errorf("a bad generation answered %d", rec)
	}
}

func TestDebounceMergesABurstIntoOnePush(t *testing.T) {
	srv := startServer(t, bookinfo(), func(o *Options) { o.Debounce = DebounceOptions{Quiet: 300 * time.Millisecond, Max: 10 * time.Second} })
	s := openDelta(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("a"), TypeUrl: vsType})
	s.send(deltaAck(s.recv()))
	before := srv.currentGeneration()
	for i := range 5 {
		srv.vs.UpdateObject(virtualService("bookinfo", "reviews", fmt.Sprintf("reviews.v%d", i)))
		srv.vs.UpdateObject(virtualService("bookinfo", "ratings", fmt.Sprintf("ratings.v%d", i)))
	}
	resp := s.recv()
	if got := decodeDelta(t, resp.Resources); got["bookinfo/reviews"] != "reviews.v4" || got["bookinfo/ratings"] != "ratings.v4" {
		t.Fatalf("the push carried %v", got)
	}
	if after := srv.currentGeneration(); after != before+1 {
		t.Errorf("a burst of 10 changes made %d pushes", after-before)
	}
}

func TestDebounceMaxDelayBoundsAStream(t *testing.T) {
	in := make(chan *PushRequest)
	pushed := make(chan *PushRequest, 10)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		debounce(in, func(r *PushRequest) { pushed <- r }, DebounceOptions{Quiet: 50 * time.Millisecond, Max: 150 * time.Millisecond}, stop)
	}()
	defer func() { close(stop); <-done }()
	// A change every 10ms never leaves 50ms of quiet, yet pushes happen.
	deadline := time.After(recvTimeout)
	for i := 0; ; i++ {
		select {
		case r := <-pushed:
			if len(r.Changed) < 2 {
				t.Errorf("a push carried %d changes, want the merged stream", len(r.Changed))
			}
			return
		case in <- NewPushRequest(ConfigKey{Kind: vsGVK, Name: fmt.Sprint(i)}):
			time.Sleep(10 * time.Millisecond)
		case <-deadline:
			t.Fatal("a steady stream of changes was never pushed")
		}
	}
}

// counterGenerator serves one resource whose content is its counter, and
// is affected by the requests scope accepts.
type counterGenerator struct {
	value atomic.Int64
	scope func(*PushRequest) bool
}

func (g *counterGenerator) Generate(_ *Proxy, _ *Watch, _ *PushRequest) (Generated, error) {
	body, err := anypb.New(structpb.NewStringValue(fmt.Sprint(g.value.Load())))
	if err != nil {
		return Generated{}, err
	}
	return Generated{Resources: []*Resource{NewResource("r", body)}}, nil
}

func (g *counterGenerator) Affects(_ *Proxy, _ *Watch, req *PushRequest) bool {
	return g.scope == nil || g.scope(req)
}

func TestPushOrderClientKindAndScopedPushes(t *testing.T) {
	endpointSlice := config.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}
	srv := startServer(t, nil, nil)
	gens := map[string]*counterGenerator{}
	for _, typeURL := range []string{ClusterType, EndpointType, ListenerType, RouteType} {
		g := &counterGenerator{}
		if typeURL == EndpointType {
			g.scope = func(r *PushRequest) bool { return r.HasKind(endpointSlice) }
		} else {
			g.scope = func(r *PushRequest) bool { return !r.HasKind(endpointSlice) || len(r.Changed) > 1 }
		}
		gens[typeURL] = g
		srv.Generators().RegisterFor(ClientGRPC, typeURL, g)
	}
	s := openSotW(t, dial(t, srv.Addr()))
	// Subscribed in reverse order; a sidecar would get nothing: the
	// generators are registered for proxyless gRPC clients only.
	for i, typeURL := range []string{RouteType, ListenerType, EndpointType, ClusterType} {
		req := &discoveryv3.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: []string{"r"}}
		if i == 0 {
			req.Node = grpcNode("proxyless")
		}
		s.send(req)
		resp := s.recv()
		if len(resp.Resources) != 1 {
			t.Fatalf("%s: the grpc generator did not serve the proxyless client", typeURL)
		}
		s.send(ack(resp, "r"))
	}
	for _, g := range gens {
		g.value.Add(1)
	}
	srv.Push(&PushRequest{Full: true})
	var order []string
	for range 4 {
		resp := s.recv()
		order = append(order, resp.TypeUrl)
		s.send(ack(resp, "r"))
	}
	if fmt.Sprint(order) != fmt.Sprint([]string{ClusterType, EndpointType, ListenerType, RouteType}) {
		t.Errorf("push order %v, want CDS, EDS, LDS, RDS", order)
	}
	// An endpoint-only change re-sends EDS alone.
	for _, g := range gens {
		g.value.Add(1)
	}
	srv.Push(NewPushRequest(ConfigKey{Kind: endpointSlice, Namespace: "default", Name: "reviews-abc"}))
	if resp := s.recv(); resp.TypeUrl != EndpointType {
		t.Fatalf("an endpoint change sent %s first", resp.TypeUrl)
	}
	sentinel(t, s, "example.com/Unknown")

	sidecar := openSotW(t, dial(t, srv.Addr()))
	sidecar.send(&discoveryv3.DiscoveryRequest{Node: node("sidecar~10.0.0.1~a.default~default.svc.cluster.local"), TypeUrl: ClusterType})
	if resp := sidecar.recv(); len(resp.Resources) != 0 {
		t.Errorf("a sidecar got the proxyless generator's output")
	}
}

func TestSeveralCollectionsOfAKindAreServedAsOne(t *testing.T) {
	stop := make(chan struct{})
	opts := DefaultOptions()
	opts.Addr, opts.TLSAddr = "127.0.0.1:0", ""
	opts.Debounce = DebounceOptions{Quiet: time.Millisecond, Max: 10 * time.Millisecond}
	two, err := NewServer(opts, slog.New(slog.NewTextHandler(testWriter{t}, nil)), nil, krt.NewDebugHandler())
	if err != nil {
		t.Fatal(err)
	}
	fromAPI := krt.NewStaticCollection(nil, []config.Config{virtualService("bookinfo", "reviews", "api")}, krt.WithStop(stop))
	derived := krt.NewStaticCollection(nil, []config.Config{virtualService("bookinfo", "reviews", "derived"), virtualService("gateway", "route", "gw")}, krt.WithStop(stop))
	two.AddConfigs(vsGVK, fromAPI)
	two.AddConfigs(vsGVK, derived)
	if err := two.Start(stop); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(stop)
		two.Wait()
	})
	s := openSotW(t, dial(t, two.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("a"), TypeUrl: vsType})
	resp := s.recv()
	if got := decodeMCP(t, resp.Resources); keys(got) != "[bookinfo/reviews gateway/route]" || got["bookinfo/reviews"] != "api" {
		t.Fatalf("union got %v", got)
	}
	s.send(ack(resp))
	derived.UpdateObject(virtualService("gateway", "route", "gw.v2"))
	if got := decodeMCP(t, s.recv().Resources); got["gateway/route"] != "gw.v2" {
		t.Fatalf("a change of the second collection: %v", got)
	}
}

func getStatus(srv *testServer, path string) int {
	rec := httptest.NewRecorder()
	srv.SyncHandler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code
}
