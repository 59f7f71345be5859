// Package grpctraffic is real gRPC traffic for tests: backends that
// answer every RPC with their own name, and proxyless clients that reach
// them through grpc-go's own xDS resolver, each with a bootstrap of its
// own, so that clients of one test process share nothing.
package grpctraffic

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/xds"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Method is the one method backends serve.
const Method = "/reviews.Reviews/Get"

// TallyTimeout bounds a Tally: generous, since suites run with the race
// detector on shared cores.
const TallyTimeout = 30 * time.Second

// IdentityService answers Method with name.
func IdentityService(name string) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "reviews.Reviews",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Get",
			Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				if err := dec(new(wrapperspb.StringValue)); err != nil {
					return nil, err
				}
				return wrapperspb.String(name), nil
			},
		}},
	}
}

// Serve serves IdentityService(name) on lis until the server is stopped.
func Serve(lis net.Listener, name string) *grpc.Server {
	s := grpc.NewServer()
	s.RegisterService(IdentityService(name), nil)
	go func() { _ = s.Serve(lis) }()
	return s
}

// Bootstrap is a grpc-go xDS bootstrap: the plaintext xDS server at
// xdsAddr, and node id announcing a proxyless client (GENERATOR=grpc) of
// namespace, as Istio's gRPC bootstrap writes them. extra are more
// top-level fields, each starting with a comma (certificate providers).
func Bootstrap(xdsAddr, nodeID, namespace string, extra ...string) []byte {
	return fmt.Appendf(nil, `{
		"xds_servers": [{"server_uri": %q, "channel_creds": [{"type": "insecure"}], "server_features": ["xds_v3"]}],
		"node": {"id": %q, "metadata": {"GENERATOR": "grpc", "NAMESPACE": %q}}%s
	}`, xdsAddr, nodeID, namespace, strings.Join(extra, ""))
}

// Dial connects to xds:///target with grpc-go's xDS resolver over
// bootstrap; the connection closes when the test ends.
func Dial(t testing.TB, bootstrap []byte, target string) *grpc.ClientConn {
	t.Helper()
	resolver, err := xds.NewXDSResolverWithConfigForTesting(bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("xds:///"+target, grpc.WithResolvers(resolver), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// Call makes one RPC, waiting for the client to be ready, and returns the
// name of the backend that answered. md are header pairs to send.
func Call(ctx context.Context, conn *grpc.ClientConn, md ...string) (string, error) {
	if len(md) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, md...)
	}
	out := new(wrapperspb.StringValue)
	err := conn.Invoke(ctx, Method, wrapperspb.String("hi"), out, grpc.WaitForReady(true))
	return out.GetValue(), err
}

// Tally makes n RPCs one after the other and counts who answered; a
// failed RPC fails the test.
func Tally(t testing.TB, conn *grpc.ClientConn, n int, md ...string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), TallyTimeout)
	defer cancel()
	got := map[string]int{}
	for i := range n {
		who, err := Call(ctx, conn, md...)
		if err != nil {
			t.Fatalf("RPC %d of %d failed: %v (answers so far %v)", i+1, n, err, got)
		}
		got[who]++
	}
	return got
}
