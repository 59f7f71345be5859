package xds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	mcp "istio.io/api/mcp/v1alpha1"
	networkingv1 "istio.io/api/networking/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/xds/xdstest"
)

func TestMain(m *testing.M) { krttest.Main(m) }

var (
	vsGVK  = config.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}
	vsType = vsGVK.String()
	// recvTimeout bounds every wait for a response that must come.
	recvTimeout = krttest.Timeout
)

// virtualService is a VirtualService for host, in namespace ns.
func virtualService(ns, name, host string) config.Config {
	return config.Config{
		Meta: config.Meta{GroupVersionKind: vsGVK, Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
		Spec: &networkingv1.VirtualService{Hosts: []string{host}},
	}
}

// testServer is a Server on a loopback port serving a static collection
// of VirtualServices.
type testServer struct {
	*Server
	vs   krt.StaticCollection[config.Config]
	stop chan struct{}
	logs *krttest.Logs
}

// startServer starts a server with the given VirtualServices; edit
// changes the options first, setup (registering generators, hooks) runs
// before Start.
func startServer(t testing.TB, vss []config.Config, edit func(*Options), setup ...func(*Server)) *testServer {
	t.Helper()
	opts := DefaultOptions()
	opts.Addr, opts.TLSAddr = "127.0.0.1:0", ""
	opts.Debounce = DebounceOptions{Quiet: 5 * time.Millisecond, Max: 50 * time.Millisecond}
	if edit != nil {
		edit(&opts)
	}
	stop := make(chan struct{})
	vs := krt.NewStaticCollection[config.Config](nil, vss, krt.WithStop(stop), krt.WithName("test/VirtualService"))
	kept := &krttest.Logs{}
	var logs slog.Handler = slog.NewTextHandler(io.MultiWriter(testWriter{t}, kept), &slog.HandlerOptions{Level: slog.LevelDebug})
	if _, fuzzing := t.(*testing.F); fuzzing {
		logs = slog.DiscardHandler // a fuzz target may not log through f
	}
	srv, err := NewServer(opts, slog.New(logs), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.AddConfigs(vsGVK, vs)
	for _, f := range setup {
		f(srv)
	}
	if err := srv.Start(stop); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(stop)
		srv.Wait()
	})
	return &testServer{Server: srv, vs: vs, stop: stop, logs: kept}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	if w.t.Context().Err() == nil {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// dial connects a gRPC client to addr.
func dial(t *testing.T, addr string) *grpc.ClientConn { return xdstest.Dial(t, addr) }

// stream is one ADS stream of either protocol, with received messages
// buffered so a test can wait for one with a deadline.
type stream[Req, Resp any] struct {
	*xdstest.Stream[Req, Resp]
	t *testing.T
}

func newStream[Req, Resp any](t *testing.T, open func(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[Req, Resp], error)) *stream[Req, Resp] {
	t.Helper()
	return &stream[Req, Resp]{Stream: xdstest.Open(t, open), t: t}
}

func (s *stream[Req, Resp]) send(req *Req) {
	s.t.Helper()
	s.Send(req)
}

// recv returns the next response, failing the test if none comes.
func (s *stream[Req, Resp]) recv() *Resp {
	s.t.Helper()
	return s.Recv(recvTimeout)
}

// closed returns the error the stream ended with.
func (s *stream[Req, Resp]) closed() error {
	s.t.Helper()
	m, err := s.Next(recvTimeout)
	if err == nil {
		s.t.Fatalf("got a response, want the stream closed: %v", m)
	}
	return err
}

// none checks that nothing arrived so far.
func (s *stream[Req, Resp]) none() {
	s.t.Helper()
	if m, err, ok := s.Poll(); ok {
		s.t.Fatalf("unexpected response or end: %v %v", m, err)
	}
}

type sotwStream = stream[discoveryv3.DiscoveryRequest, discoveryv3.DiscoveryResponse]
type deltaStream = stream[discoveryv3.DeltaDiscoveryRequest, discoveryv3.DeltaDiscoveryResponse]

func openSotW(t *testing.T, cc *grpc.ClientConn) *sotwStream {
	return newStream(t, discoveryv3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources)
}

func openDelta(t *testing.T, cc *grpc.ClientConn) *deltaStream {
	return newStream(t, discoveryv3.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources)
}

func node(id string) *corev3.Node { return &corev3.Node{Id: id} }

// grpcNode is a proxyless gRPC client's node.
func grpcNode(id string) *corev3.Node {
	md, _ := structpb.NewStruct(map[string]any{GeneratorMetadataKey: "grpc"})
	return &corev3.Node{Id: id, Metadata: md}
}

// ack answers a SotW response with an ACK.
func ack(resp *discoveryv3.DiscoveryResponse, names ...string) *discoveryv3.DiscoveryRequest {
	return &discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: names}
}

// decodeMCP unpacks the config distribution resources of a response:
// "namespace/name" -> hosts of the VirtualService.
func decodeMCP(t *testing.T, bodies []*anypb.Any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, b := range bodies {
		var r mcp.Resource
		if err := b.UnmarshalTo(&r); err != nil {
			t.Fatalf("not an MCP resource: %v", err)
		}
		var vs networkingv1.VirtualService
		if err := r.Body.UnmarshalTo(&vs); err != nil {
			t.Fatalf("%s: body is not a VirtualService: %v", r.Metadata.Name, err)
		}
		out[r.Metadata.Name] = strings.Join(vs.Hosts, ",")
	}
	return out
}

// decodeDelta is decodeMCP for delta resources, checking names.
func decodeDelta(t *testing.T, rs []*discoveryv3.Resource) map[string]string {
	t.Helper()
	bodies := make([]*anypb.Any, len(rs))
	for i, r := range rs {
		bodies[i] = r.Resource
	}
	out := decodeMCP(t, bodies)
	for _, r := range rs {
		if _, ok := out[r.Name]; !ok || r.Version == "" {
			t.Fatalf("delta resource %q (version %q) does not match its body", r.Name, r.Version)
		}
	}
	return out
}

func keys[V any](m map[string]V) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}

// waitForFeed waits until the VirtualServices the server distributes
// satisfy cond.
func waitForFeed(t *testing.T, srv *testServer, cond func([]*Resource) bool) {
	t.Helper()
	deadline := time.Now().Add(recvTimeout)
	for {
		got, _ := srv.feed.kind(vsGVK).Generate(nil, &Watch{Wildcard: true}, nil)
		if cond(got.Resources) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the feed never reached the expected state")
		}
		time.Sleep(time.Millisecond)
	}
}

func bodiesOf(list []*Resource) []*anypb.Any {
	out := make([]*anypb.Any, len(list))
	for i, r := range list {
		out[i] = r.Body()
	}
	return out
}

// waitForPush waits until the server pushed generation gen.
func waitForPush(t *testing.T, srv *testServer, gen uint64) {
	t.Helper()
	deadline := time.Now().Add(recvTimeout)
	for srv.currentGeneration() < gen {
		if time.Now().After(deadline) {
			t.Fatalf("generation %d was never pushed", gen)
		}
		time.Sleep(time.Millisecond)
	}
}
