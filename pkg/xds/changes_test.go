package xds

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// mapGenerator serves named resources whose bodies are strings, changed
// by the test, with warnings of its choosing.
type mapGenerator struct {
	mu       sync.Mutex
	bodies   map[string]string
	warnings []string
	calls    int
}

func newMapGenerator(bodies map[string]string) *mapGenerator {
	return &mapGenerator{bodies: maps.Clone(bodies)}
}

func (g *mapGenerator) set(name, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bodies[name] = body
}

func (g *mapGenerator) Generate(_ *Proxy, w *Watch, _ *PushRequest) (Generated, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	var out []*Resource
	for _, name := range slices.Sorted(maps.Keys(g.bodies)) {
		if !w.Wants(name) {
			continue
		}
		body, err := anypb.New(structpb.NewStringValue(g.bodies[name]))
		if err != nil {
			return Generated{}, err
		}
		out = append(out, NewResource(name, body))
	}
	return Generated{Resources: out, Warnings: slices.Clone(g.warnings)}, nil
}

// bodiesOfResponse decodes a response into name -> body.
func bodiesOfResponse(t *testing.T, resp *discoveryv3.DiscoveryResponse) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range resp.Resources {
		var v structpb.Value
		if err := a.UnmarshalTo(&v); err != nil {
			t.Fatal(err)
		}
		out[v.GetStringValue()[:strings.IndexByte(v.GetStringValue()+"=", '=')]] = v.GetStringValue()
	}
	return out
}

// A state-of-the-world push of endpoints or routes carries only what
// changed (the protocol lets a response name a subset of them); clusters
// and listeners go whole, and a client's own request is answered whole.
func TestSotWPushesOfEndpointsAndRoutesCarryOnlyChanges(t *testing.T) {
	names := []string{"a", "b", "c"}
	initial := map[string]string{}
	for _, n := range names {
		initial[n] = n + "=1"
	}
	gens := map[string]*mapGenerator{}
	srv := startServer(t, nil, nil, func(s *Server) {
		for _, typeURL := range []string{ClusterType, EndpointType, RouteType} {
			gens[typeURL] = newMapGenerator(initial)
			s.Generators().Register(typeURL, gens[typeURL])
		}
	})
	s := openSotW(t, dial(t, srv.Addr()))
	last := map[string]*discoveryv3.DiscoveryResponse{}
	for i, typeURL := range []string{ClusterType, EndpointType, RouteType} {
		req := &discoveryv3.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: names}
		if i == 0 {
			req.Node = node("client")
		}
		s.send(req)
		resp := s.recv()
		if got := keys(bodiesOfResponse(t, resp)); got != "[a b c]" {
			t.Fatalf("%s: first answer carries %s", typeURL, got)
		}
		last[typeURL] = resp
		s.send(ack(resp, names...))
	}
	for _, g := range gens {
		g.set("b", "b=2")
	}
	srv.Push(&PushRequest{Full: true})
	want := map[string]string{ClusterType: "[a b c]", EndpointType: "[b]", RouteType: "[b]"}
	for range 3 {
		resp := s.recv()
		if got := keys(bodiesOfResponse(t, resp)); got != want[resp.TypeUrl] {
			t.Errorf("a push of %s carries %s, want %s", resp.TypeUrl, got, want[resp.TypeUrl])
		}
		last[resp.TypeUrl] = resp
		s.send(ack(resp, names...))
	}
	// Nothing changed: nothing is sent.
	srv.Push(&PushRequest{Full: true})
	sentinel(t, s, "example.com/Unknown")
	// The client's own request (a new name) is answered with all it asks.
	s.send(ack(last[EndpointType], "a", "b"))
	resp := s.recv()
	if resp.TypeUrl != EndpointType {
		t.Fatalf("got %s, want the EDS answer", resp.TypeUrl)
	}
	s.send(ack(resp, "a", "b"))
	if got := keys(bodiesOfResponse(t, resp)); got != "[a b]" {
		t.Errorf("a changed subscription is answered with %s", got)
	}
	// What the client holds is what it was sent, whole.
	sent, ok := srv.SentTo("client")
	if !ok || len(sent) != 4 {
		t.Fatalf("SentTo: %v %+v", ok, sent)
	}
	for _, st := range sent {
		if st.TypeURL == EndpointType && fmt.Sprint(resourceNames(st.Resources)) != "[a b]" {
			t.Errorf("the client holds %v of EDS", resourceNames(st.Resources))
		}
		if st.TypeURL == RouteType && fmt.Sprint(resourceNames(st.Resources)) != "[a b c]" {
			t.Errorf("the client holds %v of RDS", resourceNames(st.Resources))
		}
	}
}

func resourceNames(rs []*Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name()
	}
	return out
}
