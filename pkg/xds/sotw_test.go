package xds

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshcp/meshcp/pkg/config"
)

func bookinfo() []config.Config {
	return []config.Config{
		virtualService("bookinfo", "reviews", "reviews"),
		virtualService("bookinfo", "ratings", "ratings"),
		virtualService("shop", "cart", "cart"),
	}
}

func TestSotWWildcardGetsEveryConfigAndEveryChange(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("a"), TypeUrl: vsType})
	resp := s.recv()
	if resp.TypeUrl != vsType || resp.Nonce == "" || resp.VersionInfo == "" {
		t.Fatalf("response %v lacks type, nonce or version", resp)
	}
	if got := decodeMCP(t, resp.Resources); keys(got) != "[bookinfo/ratings bookinfo/reviews shop/cart]" || got["bookinfo/reviews"] != "reviews" {
		t.Fatalf("wildcard got %v", got)
	}
	s.send(ack(resp))

	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v2"))
	next := s.recv()
	if next.VersionInfo == resp.VersionInfo || next.Nonce == resp.Nonce {
		t.Errorf("a change kept version %q / nonce %q", next.VersionInfo, next.Nonce)
	}
	if got := decodeMCP(t, next.Resources); len(got) != 3 || got["bookinfo/reviews"] != "reviews.v2" {
		t.Errorf("after the change got %v", got)
	}
	s.send(ack(next))

	srv.vs.DeleteObject("shop/cart")
	if got := decodeMCP(t, s.recv().Resources); keys(got) != "[bookinfo/ratings bookinfo/reviews]" {
		t.Errorf("after a delete got %v", got)
	}
}

func TestSotWNamedSubscriptionAndUnsubscribe(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("a"), TypeUrl: vsType, ResourceNames: []string{"bookinfo/reviews", "shop/cart", "shop/missing"}})
	resp := s.recv()
	if got := decodeMCP(t, resp.Resources); keys(got) != "[bookinfo/reviews shop/cart]" {
		t.Fatalf("named got %v", got)
	}
	// Dropping a name is answered with the smaller set.
	s.send(ack(resp, "bookinfo/reviews"))
	resp = s.recv()
	if got := decodeMCP(t, resp.Resources); keys(got) != "[bookinfo/reviews]" {
		t.Fatalf("after unsubscribing cart got %v", got)
	}
	s.send(ack(resp, "bookinfo/reviews"))
	// Changes to names not watched are not pushed; a change to the watched
	// one is.
	srv.vs.UpdateObject(virtualService("shop", "cart", "cart.v2"))
	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v2"))
	resp = s.recv()
	if got := decodeMCP(t, resp.Resources); keys(got) != "[bookinfo/reviews]" || got["bookinfo/reviews"] != "reviews.v2" {
		t.Fatalf("push got %v", got)
	}
	s.send(ack(resp, "bookinfo/reviews"))
	// An empty list after named ones unsubscribes from everything (it is
	// the legacy wildcard only on a first request).
	s.send(ack(resp))
	if resp = s.recv(); len(resp.Resources) != 0 {
		t.Fatalf("after unsubscribing everything got %d resources", len(resp.Resources))
	}
	s.send(ack(resp))
	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v3"))
	waitForFeed(t, srv, func(list []*Resource) bool { return decodeMCP(t, bodiesOf(list))["bookinfo/reviews"] == "reviews.v3" })
	// "*" subscribes to everything again.
	s.send(ack(resp, "*"))
	if got := decodeMCP(t, s.recv().Resources); len(got) != 3 || got["bookinfo/reviews"] != "reviews.v3" {
		t.Fatalf("explicit wildcard got %v", got)
	}
}

// sentinel sends a request for an unknown type and checks that its empty
// answer is the next response: nothing else was sent before it.
func sentinel(t *testing.T, s *sotwStream, typeURL string) *discoveryv3.DiscoveryResponse {
	t.Helper()
	s.send(&discoveryv3.DiscoveryRequest{TypeUrl: typeURL})
	resp := s.recv()
	if resp.TypeUrl != typeURL || len(resp.Resources) != 0 {
		t.Fatalf("want the empty answer for %s first, got a response of %s with %d resources", typeURL, resp.TypeUrl, len(resp.Resources))
	}
	return resp
}

func TestSotWNackIsRecordedAndNotAnsweredWithTheSameConfig(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("nacker"), TypeUrl: vsType})
	resp := s.recv()
	s.send(&discoveryv3.DiscoveryRequest{TypeUrl: vsType, ResponseNonce: resp.Nonce, ErrorDetail: &rpcstatus.Status{Code: int32(codes.InvalidArgument), Message: "reviews: bad host"}})
	sentinel(t, s, "example.com/Unknown1")
	// A push that changes nothing the client watches does not resend the
	// config it refused.
	gen := srv.currentGeneration()
	srv.Push(&PushRequest{Full: true})
	waitForPush(t, srv, gen+1)
	sentinel(t, s, "example.com/Unknown1b")

	var dump syncz
	getJSON(t, srv, "/debug/syncz?node=nacker", &dump)
	if len(dump.Connections) != 1 {
		t.Fatalf("syncz: %+v", dump)
	}
	vs := findType(t, dump.Connections[0], vsType)
	if vs.LastNACK == nil || vs.LastNACK.Error != "reviews: bad host" || vs.LastNACK.Nonce != resp.Nonce || vs.Acked != nil {
		t.Fatalf("syncz does not show the NACK: %+v", vs)
	}

	// A change is pushed again, and its ACK clears the way.
	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.fixed"))
	resp = s.recv()
	s.send(ack(resp))
	sentinel(t, s, "example.com/Unknown2")
	getJSON(t, srv, "/debug/syncz?node=nacker", &dump)
	vs = findType(t, dump.Connections[0], vsType)
	if vs.Acked == nil || vs.Acked.Nonce != resp.Nonce || vs.Acked.Version != resp.VersionInfo || vs.LastNACK == nil {
		t.Fatalf("syncz after the ACK: %+v", vs)
	}
}

func TestSotWStaleNonceIsIgnored(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("a"), TypeUrl: vsType, ResourceNames: []string{"bookinfo/reviews"}})
	first := s.recv()
	s.send(ack(first, "bookinfo/reviews", "shop/cart"))
	second := s.recv()
	if len(second.Resources) != 2 {
		t.Fatalf("got %d resources", len(second.Resources))
	}
	// A request answering the older response is stale: its names are not
	// applied and it gets no answer.
	s.send(ack(first, "bookinfo/ratings"))
	sentinel(t, s, "example.com/Unknown")
	s.send(ack(second, "bookinfo/reviews", "shop/cart"))
	sentinel(t, s, "example.com/Unknown")
}

func TestSotWReconnectGetsAFullAnswer(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	cc := dial(t, srv.Addr())
	s := openSotW(t, cc)
	s.send(&discoveryv3.DiscoveryRequest{Node: node("a"), TypeUrl: vsType})
	resp := s.recv()
	s.send(ack(resp))
	s.Cancel()

	// The client comes back knowing the version, but with no nonce: it
	// still gets everything.
	again := openSotW(t, cc)
	again.send(&discoveryv3.DiscoveryRequest{Node: node("a"), TypeUrl: vsType, VersionInfo: resp.VersionInfo})
	r := again.recv()
	if len(r.Resources) != 3 || r.VersionInfo != resp.VersionInfo {
		t.Fatalf("reconnect got %d resources at version %q, want 3 at %q", len(r.Resources), r.VersionInfo, resp.VersionInfo)
	}
	// So does a request with no nonce on the same stream.
	again.send(&discoveryv3.DiscoveryRequest{TypeUrl: vsType})
	if r = again.recv(); len(r.Resources) != 3 {
		t.Fatalf("a second empty-nonce request got %d resources", len(r.Resources))
	}
}

func TestStreamsRefused(t *testing.T) {
	srv := startServer(t, nil, nil)
	cc := dial(t, srv.Addr())
	for _, tc := range []struct {
		name string
		req  *discoveryv3.DiscoveryRequest
		code codes.Code
		msg  string
	}{
		{"no node", &discoveryv3.DiscoveryRequest{TypeUrl: vsType}, codes.InvalidArgument, "must carry node.id"},
		{"empty node id", &discoveryv3.DiscoveryRequest{Node: node(""), TypeUrl: vsType}, codes.InvalidArgument, "must carry node.id"},
		{"no type", &discoveryv3.DiscoveryRequest{Node: node("a")}, codes.InvalidArgument, "type_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openSotW(t, cc)
			s.send(tc.req)
			err := s.closed()
			if st, _ := status.FromError(err); st.Code() != tc.code || !strings.Contains(st.Message(), tc.msg) {
				t.Errorf("stream ended with %v, want %s with %q", err, tc.code, tc.msg)
			}
		})
	}
	d := openDelta(t, cc)
	d.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType})
	if st, _ := status.FromError(d.closed()); st.Code() != codes.InvalidArgument {
		t.Errorf("delta without node: %v", st)
	}
}

func TestTooManyTypesEndTheStream(t *testing.T) {
	srv := startServer(t, nil, nil)
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("greedy"), TypeUrl: "example.com/0"})
	var err error
	for i := 0; err == nil; i++ {
		if _, err = s.Next(recvTimeout); err == nil {
			s.send(&discoveryv3.DiscoveryRequest{TypeUrl: fmt.Sprintf("example.com/%d", i+1)})
		}
		if i > 2*maxTypesPerConnection {
			t.Fatal("no limit on the type URLs of a stream")
		}
	}
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "at most") {
		t.Errorf("stream ended with %v", err)
	}
}

func TestOversizedRequestIsRefused(t *testing.T) {
	srv := startServer(t, bookinfo(), func(o *Options) { o.MaxRecvMessageSize = 1024 })
	cc := dial(t, srv.Addr())
	s := openSotW(t, cc)
	s.send(&discoveryv3.DiscoveryRequest{Node: node("big"), TypeUrl: vsType, ResourceNames: []string{strings.Repeat("x", 2000)}})
	if st, _ := status.FromError(s.closed()); st.Code() != codes.ResourceExhausted {
		t.Errorf("an oversized request ended the stream with %v, want ResourceExhausted", st)
	}
	// Other streams are served as before.
	ok := openSotW(t, cc)
	ok.send(&discoveryv3.DiscoveryRequest{Node: node("small"), TypeUrl: vsType})
	if len(ok.recv().Resources) != 3 {
		t.Error("a normal client got nothing after an oversized request")
	}
}

func TestUnknownTypeGetsAnEmptyAnswer(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("a"), TypeUrl: "example.com/v1/Nothing", ResourceNames: []string{"x"}})
	resp := s.recv()
	if len(resp.Resources) != 0 || resp.Nonce == "" {
		t.Fatalf("unknown type answered %v", resp)
	}
	s.send(ack(resp, "x"))
	// The stream still works.
	s.send(&discoveryv3.DiscoveryRequest{TypeUrl: vsType})
	if len(s.recv().Resources) != 3 {
		t.Fatal("the stream stopped serving after an unknown type")
	}
}

func getJSON(t *testing.T, srv *testServer, path string, v any) int {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.SyncHandler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	body, _ := io.ReadAll(rec.Body)
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	return rec.Code
}

func findType(t *testing.T, c connectionSync, typeURL string) typeSync {
	t.Helper()
	for _, ts := range c.Types {
		if ts.TypeURL == typeURL {
			return ts
		}
	}
	t.Fatalf("connection %s does not watch %s: %+v", c.ID, typeURL, c)
	return typeSync{}
}
