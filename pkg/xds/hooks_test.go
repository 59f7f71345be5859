package xds

import (
	"sync/atomic"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// BeforePush runs once per push, before any connection is pushed: what
// the push generates sees what the hook prepared.
func TestBeforePushRunsBeforeConnectionsArePushed(t *testing.T) {
	g := newMapGenerator(map[string]string{"r": "r=0"})
	var calls atomic.Int32
	srv := startServer(t, nil, nil, func(s *Server) {
		s.Generators().Register(ClusterType, g)
		s.BeforePush(func(req *PushRequest) {
			n := calls.Add(1)
			if req.Generation == 0 {
				t.Error("the hook ran before the push had a generation")
			}
			g.set("r", "r="+string(rune('0'+n)))
		})
	})
	var streams []*sotwStream
	for _, id := range []string{"a", "b", "c"} {
		s := openSotW(t, dial(t, srv.Addr()))
		s.send(&discoveryv3.DiscoveryRequest{Node: node(id), TypeUrl: ClusterType})
		s.send(ack(s.recv()))
		streams = append(streams, s)
	}
	srv.Push(&PushRequest{Full: true})
	for _, s := range streams {
		if got := bodiesOfResponse(t, s.recv())["r"]; got != "r=1" {
			t.Errorf("the push carried %q, want what the hook prepared", got)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the hook ran %d times for one push", n)
	}
}

// A stream waits for what WaitForSync names, as for the config feeds.
func TestStreamsWaitForSyncers(t *testing.T) {
	gate := krttest.NewSyncGate()
	srv := startServer(t, nil, nil, func(s *Server) { s.WaitForSync(gate) })
	if srv.HasSynced() {
		t.Fatal("synced before the gate")
	}
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("early"), TypeUrl: vsType})
	time.Sleep(50 * time.Millisecond)
	s.none()
	gate.MarkSynced()
	s.recv()
	if !srv.HasSynced() {
		t.Error("not synced after the gate")
	}
}

// Warnings of a generator are shown per connection on /debug/syncz and
// logged once for every client; so is a NACK two clients send alike.
func TestWarningsAndNACKsShownAndLoggedOnce(t *testing.T) {
	g := newMapGenerator(map[string]string{"r": "r=1"})
	g.warnings = []string{"VirtualService/default/reviews spec.http[0].mirror: gRPC clients do not implement mirror; left out"}
	srv := startServer(t, nil, nil, func(s *Server) { s.Generators().Register(RouteType, g) })
	for _, id := range []string{"a", "b"} {
		s := openSotW(t, dial(t, srv.Addr()))
		s.send(&discoveryv3.DiscoveryRequest{Node: grpcNode(id), TypeUrl: RouteType, ResourceNames: []string{"r"}})
		resp := s.recv()
		nack := ack(resp, "r")
		nack.ErrorDetail = &rpcstatus.Status{Code: int32(codes.InvalidArgument), Message: "route r: unrecognized path specifier"}
		s.send(nack)
		sentinel(t, s, "example.com/Unknown")
	}
	var dump syncz
	getJSON(t, srv, "/debug/syncz", &dump)
	for _, c := range dump.Connections {
		ts := findType(t, c, RouteType)
		if len(ts.Warnings) != 1 || ts.LastNACK == nil || ts.LastNACK.Error != "route r: unrecognized path specifier" {
			t.Errorf("%s: warnings %v, NACK %+v", c.NodeID, ts.Warnings, ts.LastNACK)
		}
	}
	for what, n := range map[string]int{
		"configuration not generated as written": srv.logs.Count("level=WARN", "configuration not generated as written"),
		"NACK":                                   srv.logs.Count("level=WARN", "client rejected a response (NACK)"),
	} {
		if n != 1 {
			t.Errorf("%s logged %d times at warning level, want once", what, n)
		}
	}
}

// A node whose Istio-form id names no known proxy type is refused.
func TestUnknownNodeTypeRefused(t *testing.T) {
	srv := startServer(t, nil, nil)
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: "waypoint~10.0.0.1~w.default~default.svc.cluster.local"}, TypeUrl: vsType})
	if err := s.closed(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("stream ended with %v, want InvalidArgument", err)
	}
}
