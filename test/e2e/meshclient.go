package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshcp/meshcp/test/grpctraffic"
)

// DialMesh connects a proxyless gRPC client to xds:///target through
// grpc-go's own xDS resolver, as an application of the mesh does, with a
// bootstrap of its own: the daemon's plaintext xDS address, and node id
// as its identity (GENERATOR=grpc, namespace "default"). The connection
// closes when the test ends.
func DialMesh(t testing.TB, xdsAddr, nodeID, target string) *grpc.ClientConn {
	t.Helper()
	return grpctraffic.Dial(t, grpctraffic.Bootstrap(xdsAddr, nodeID, "default"), target)
}

// Call makes one RPC and returns the name of the backend that answered
// (see grpctraffic.Call).
func Call(ctx context.Context, conn *grpc.ClientConn, md ...string) (string, error) {
	return grpctraffic.Call(ctx, conn, md...)
}

// WaitServed waits until what the daemon at xdsAddr serves a proxyless
// gRPC client of typeURL and names (the resources it holds, as protojson,
// in name order) satisfies cond: the point from which a client that
// starts gets that configuration. It watches over its own ADS stream,
// ACKing as a client does, and fails the test after WaitTimeout.
func WaitServed(t testing.TB, xdsAddr, typeURL string, names []string, what string, cond func(resources string) bool) {
	t.Helper()
	cc, err := grpc.NewClient(xdsAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := structpb.NewStruct(map[string]any{"GENERATOR": "grpc", "NAMESPACE": "default"})
	req := &discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: "e2e-probe", Metadata: md}, TypeUrl: typeURL, ResourceNames: names}
	held := map[string]string{}
	last := ""
	for {
		if err := stream.Send(req); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("%s not served within %s (%v); last served:\n%s", what, WaitTimeout, err, last)
		}
		for _, a := range resp.Resources {
			m, err := a.UnmarshalNew()
			if err != nil {
				t.Fatal(err)
			}
			js, _ := protojson.Marshal(m)
			name := m.ProtoReflect().Descriptor().Fields().ByName("name")
			if name == nil {
				name = m.ProtoReflect().Descriptor().Fields().ByName("cluster_name")
			}
			held[m.ProtoReflect().Get(name).String()] = string(js)
		}
		var all []string
		for _, n := range slices.Sorted(maps.Keys(held)) {
			all = append(all, held[n])
		}
		last = strings.Join(all, "\n")
		if cond(last) {
			return
		}
		req = &discoveryv3.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: names, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce}
	}
}
