package xds

import (
	"context"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// FuzzRequests feeds arbitrary request sequences to both protocols'
// handlers: whatever a client sends, the server answers with well-formed
// responses or a clean stream error, and never panics.
func FuzzRequests(f *testing.F) {
	seed := func(m proto.Message) []byte {
		b, _ := proto.Marshal(m)
		return b
	}
	f.Add(seed(&discoveryv3.DiscoveryRequest{Node: node("a"), TypeUrl: vsType}), seed(&discoveryv3.DiscoveryRequest{TypeUrl: vsType, ResponseNonce: "1"}), []byte{})
	f.Add(seed(&discoveryv3.DiscoveryRequest{TypeUrl: vsType, ResourceNames: []string{"*", "bookinfo/reviews"}}),
		seed(&discoveryv3.DiscoveryRequest{TypeUrl: vsType, ResponseNonce: "1", ErrorDetail: &rpcstatus.Status{}}), seed(&discoveryv3.DiscoveryRequest{TypeUrl: vsType, ResponseNonce: "7"}))
	f.Add(seed(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType, ResourceNamesSubscribe: []string{"*"}, InitialResourceVersions: map[string]string{"x": ""}}),
		seed(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: vsType, ResourceNamesUnsubscribe: []string{"*", "x"}, ResponseNonce: "1"}),
		seed(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: "", ResourceNamesSubscribe: []string{""}}))

	srv := startServer(f, bookinfo(), nil)
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		sotw := fuzzConnection(srv.Server, protocolSotW)
		delta := fuzzConnection(srv.Server, protocolDelta)
		var sent int
		sotw.sotwSend = func(m any) error {
			sent++
			r := decodeSent(t, m)
			if r.Nonce == "" || r.TypeUrl == "" {
				t.Fatalf("malformed response %v", r)
			}
			return nil
		}
		delta.deltaSend = func(r *deltaResponse) error {
			sent++
			if r.Nonce == "" || r.TypeUrl == "" {
				t.Fatalf("malformed response %v", r)
			}
			return nil
		}
		for _, data := range [][]byte{a, b, c} {
			var sr discoveryv3.DiscoveryRequest
			if proto.Unmarshal(data, &sr) == nil {
				_ = sotw.handleSotW(&sr)
			}
			var dr discoveryv3.DeltaDiscoveryRequest
			if proto.Unmarshal(data, &dr) == nil {
				_ = delta.handleDelta(&dr)
			}
		}
		sotw.push(&PushRequest{Full: true, Generation: 1})
		delta.push(&PushRequest{Full: true, Generation: 1})
		_ = sotw.status(true)
		_ = delta.status(true)
	})
}

func fuzzConnection(s *Server, protocol string) *connection {
	proxy, err := ProxyFromNode(node("fuzz"))
	if err != nil {
		panic(err)
	}
	proxy.ConnectedAt = time.Now()
	return &connection{
		id: "fuzz", proxy: proxy, protocol: protocol,
		ctx: context.Background(), srv: s, watches: map[string]*watchState{},
	}
}

// decodeSent decodes what the server hands to gRPC, as a client would.
func decodeSent(t *testing.T, m any) *discoveryv3.DiscoveryResponse {
	t.Helper()
	data, err := newCodec().Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var r discoveryv3.DiscoveryResponse
	if err := proto.Unmarshal(data.Materialize(), &r); err != nil {
		t.Fatalf("the server sent bytes that are no DiscoveryResponse: %v", err)
	}
	return &r
}
