package xds

import (
	"testing"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
)

func deltaAck(resp *discoveryv3.DeltaDiscoveryResponse) *discoveryv3.DeltaDiscoveryRequest {
	return &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}
}

// deltaSentinel subscribes to an unknown type and checks that its (empty)
// answer is the next response.
func deltaSentinel(t *testing.T, s *deltaStream, typeURL string) {
	t.Helper()
	s.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: typeURL, ResourceNamesSubscribe: []string{"x"}})
	resp := s.recv()
	if resp.TypeUrl != typeURL || len(resp.Resources) != 0 {
		t.Fatalf("want the answer for %s first, got %s with %d resources", typeURL, resp.TypeUrl, len(resp.Resources))
	}
	s.send(deltaAck(resp))
}

func TestDeltaWildcardSendsOnlyWhatChanged(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openDelta(t, dial(t, srv.Addr()))
	// No names on the first request: the legacy wildcard.
	s.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("a"), TypeUrl: vsType})
	resp := s.recv()
	if got := decodeDelta(t, resp.Resources); keys(got) != "[bookinfo/ratings bookinfo/reviews shop/cart]" {
		t.Fatalf("wildcard got %v", got)
	}
	s.send(deltaAck(resp))

	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v2"))
	resp = s.recv()
	if got := decodeDelta(t, resp.Resources); keys(got) != "[bookinfo/reviews]" || got["bookinfo/reviews"] != "reviews.v2" || len(resp.RemovedResources) != 0 {
		t.Fatalf("a change sent %v, removed %v", got, resp.RemovedResources)
	}
	s.send(deltaAck(resp))

	// An object re-written unchanged sends nothing; a delete is a removal.
	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v2"))
	srv.vs.DeleteObject("shop/cart")
	resp = s.recv()
	if len(resp.Resources) != 0 || len(resp.RemovedResources) != 1 || resp.RemovedResources[0] != "shop/cart" {
		t.Fatalf("delete sent %d resources, removed %v", len(resp.Resources), resp.RemovedResources)
	}
	s.send(deltaAck(resp))

	// Leaving the wildcard: nothing more is pushed.
	s.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType, ResourceNamesUnsubscribe: []string{"*"}})
	deltaSentinel(t, s, "example.com/Sync")
	srv.vs.UpdateObject(virtualService("bookinfo", "ratings", "ratings.v2"))
	deltaSentinel(t, s, "example.com/Unknown")
}

func TestDeltaNamedSubscribeUnsubscribe(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openDelta(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("a"), TypeUrl: vsType, ResourceNamesSubscribe: []string{"bookinfo/reviews", "shop/missing"}})
	resp := s.recv()
	if got := decodeDelta(t, resp.Resources); keys(got) != "[bookinfo/reviews]" {
		t.Fatalf("named got %v", got)
	}
	// A subscribed name that does not exist is reported removed.
	if len(resp.RemovedResources) != 1 || resp.RemovedResources[0] != "shop/missing" {
		t.Fatalf("removed = %v, want the missing name", resp.RemovedResources)
	}
	s.send(deltaAck(resp))

	// Subscribing to one more sends that one alone.
	s.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType, ResourceNamesSubscribe: []string{"shop/cart"}})
	resp = s.recv()
	if got := decodeDelta(t, resp.Resources); keys(got) != "[shop/cart]" || len(resp.RemovedResources) != 0 {
		t.Fatalf("second subscribe got %v, removed %v", got, resp.RemovedResources)
	}
	s.send(deltaAck(resp))

	// The missing one appears: it is sent.
	srv.vs.UpdateObject(virtualService("shop", "missing", "found"))
	resp = s.recv()
	if got := decodeDelta(t, resp.Resources); keys(got) != "[shop/missing]" {
		t.Fatalf("the created resource: %v", got)
	}
	s.send(deltaAck(resp))

	// After unsubscribing, changes to it are not pushed; others still are.
	s.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType, ResourceNamesUnsubscribe: []string{"bookinfo/reviews"}})
	deltaSentinel(t, s, "example.com/Sync")
	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v2"))
	srv.vs.UpdateObject(virtualService("shop", "cart", "cart.v2"))
	resp = s.recv()
	if got := decodeDelta(t, resp.Resources); keys(got) != "[shop/cart]" {
		t.Fatalf("after unsubscribing reviews got %v", got)
	}
	s.send(deltaAck(resp))
	deltaSentinel(t, s, "example.com/Unknown")
}

func TestDeltaReconnectWithInitialVersions(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	cc := dial(t, srv.Addr())
	s := openDelta(t, cc)
	s.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("a"), TypeUrl: vsType, ResourceNamesSubscribe: []string{"*"}})
	resp := s.recv()
	versions := map[string]string{}
	for _, r := range resp.Resources {
		versions[r.Name] = r.Version
	}
	s.send(deltaAck(resp))
	s.Cancel()

	// While the client is away, one object changes and one goes away.
	srv.vs.UpdateObject(virtualService("bookinfo", "reviews", "reviews.v2"))
	srv.vs.DeleteObject("shop/cart")
	waitForFeed(t, srv, func(list []*Resource) bool {
		return len(list) == 2 && list[1].Name() == "bookinfo/reviews" && list[1].Version() != versions["bookinfo/reviews"]
	})
	versions["shop/stale"] = "1" // something the server never had
	again := openDelta(t, cc)
	again.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("a"), TypeUrl: vsType, ResourceNamesSubscribe: []string{"*"}, InitialResourceVersions: versions})
	resp = again.recv()
	if got := decodeDelta(t, resp.Resources); keys(got) != "[bookinfo/reviews]" {
		t.Errorf("reconnect resent %v, want only the changed object", got)
	}
	if keys(setOf(resp.RemovedResources)) != "[shop/cart shop/stale]" {
		t.Errorf("reconnect removed %v", resp.RemovedResources)
	}
	// Nothing changed at all: the first request still gets an (empty)
	// answer, so the client knows it is up to date.
	third := openDelta(t, cc)
	third.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("b"), TypeUrl: vsType, ResourceNamesSubscribe: []string{"bookinfo/ratings"},
		InitialResourceVersions: map[string]string{"bookinfo/ratings": versions["bookinfo/ratings"]}})
	if resp = third.recv(); len(resp.Resources) != 0 || len(resp.RemovedResources) != 0 || resp.Nonce == "" {
		t.Errorf("an up-to-date client got %v", resp)
	}
}

func TestDeltaNackAndStaleNonce(t *testing.T) {
	srv := startServer(t, bookinfo(), nil)
	s := openDelta(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("d"), TypeUrl: vsType, ResourceNamesSubscribe: []string{"bookinfo/reviews"}})
	first := s.recv()
	s.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType, ResponseNonce: first.Nonce, ErrorDetail: &rpcstatus.Status{Code: int32(codes.InvalidArgument), Message: "nope"}})
	// Neither a push that changes nothing nor a later subscription change
	// sends the NACKed resource again.
	gen := srv.currentGeneration()
	srv.Push(&PushRequest{Full: true})
	waitForPush(t, srv, gen+1)
	s.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType, ResourceNamesSubscribe: []string{"shop/cart"}})
	second := s.recv()
	if got := decodeDelta(t, second.Resources); keys(got) != "[shop/cart]" {
		t.Fatalf("after the NACK got %v", got)
	}
	// A stale nonce: its ACK is ignored, its subscription applies.
	s.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType, ResponseNonce: first.Nonce, ResourceNamesSubscribe: []string{"bookinfo/ratings"}})
	third := s.recv()
	if got := decodeDelta(t, third.Resources); keys(got) != "[bookinfo/ratings]" {
		t.Fatalf("a stale-nonce subscribe got %v", got)
	}
	var dump syncz
	getJSON(t, srv, "/debug/syncz?node=d", &dump)
	vs := findType(t, dump.Connections[0], vsType)
	if vs.LastNACK == nil || vs.LastNACK.Error != "nope" || vs.Acked != nil || keys(setOf(vs.Names)) != "[bookinfo/ratings bookinfo/reviews shop/cart]" {
		t.Fatalf("syncz: %+v", vs)
	}
	s.send(deltaAck(third))
	deltaSentinel(t, s, "example.com/Unknown")
	getJSON(t, srv, "/debug/syncz?node=d", &dump)
	if vs = findType(t, dump.Connections[0], vsType); vs.Acked == nil || vs.Acked.Nonce != third.Nonce {
		t.Fatalf("the ACK is not recorded: %+v", vs)
	}
}

func setOf(names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}
