package load

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// clientBDPEnv, set to anything, makes the synthetic clients grpc-go
// clients with default settings, which probe the bandwidth with a PING
// after data arrives (so every push costs the server a PING ACK too).
// Unset, they keep fixed flow-control windows as Envoy does.
const clientBDPEnv = "MESHCP_LOAD_CLIENT_BDP"

// fleet is N synthetic ADS clients, each on its own connection, watching
// every VirtualService over state of the world or delta and ACKing every
// response at once. A client counts a change as received when a response
// carries the marker of the current operation, after it has sent its ACK.
type fleet struct {
	n       int
	typeURL string
	delta   bool

	connected atomic.Int64
	allUp     chan struct{}
	errs      chan error

	op atomic.Pointer[operation]

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// operation is one change being waited for.
type operation struct {
	marker   []byte
	received atomic.Int64
	done     chan struct{}
}

// newFleet connects n clients to addr, all at once, and returns when each
// has its first response or one failed.
func newFleet(addr, typeURL string, n int, delta bool) (*fleet, time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{n: n, typeURL: typeURL, delta: delta, allUp: make(chan struct{}), errs: make(chan error, n), cancel: cancel}
	start := time.Now()
	for i := range n {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			if err := f.run(ctx, addr, fmt.Sprintf("load-%d", i)); err != nil && ctx.Err() == nil {
				f.errs <- err
			}
		}()
	}
	select {
	case <-f.allUp:
		return f, time.Since(start), nil
	case err := <-f.errs:
		f.close()
		return nil, 0, err
	case <-time.After(5 * time.Minute):
		f.close()
		return nil, 0, fmt.Errorf("only %d of %d clients connected within 5m", f.connected.Load(), n)
	}
}

// expect starts waiting for a change carrying marker.
func (f *fleet) expect(marker string) *operation {
	op := &operation{marker: []byte(marker), done: make(chan struct{})}
	f.op.Store(op)
	return op
}

// wait blocks until every client received op, or fails.
func (f *fleet) wait(op *operation, timeout time.Duration) error {
	select {
	case <-op.done:
		return nil
	case err := <-f.errs:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("%d of %d clients received the change within %s", op.received.Load(), f.n, timeout)
	}
}

func (f *fleet) close() {
	f.cancel()
	f.wg.Wait()
}

// seen counts a client that received op.
func (f *fleet) seen(op *operation) {
	if op.received.Add(1) == int64(f.n) {
		close(op.done)
	}
}

func (f *fleet) up() {
	if f.connected.Add(1) == int64(f.n) {
		close(f.allUp)
	}
}

func (f *fleet) run(ctx context.Context, addr, id string) error {
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithReadBufferSize(8 << 10), grpc.WithWriteBufferSize(8 << 10), grpc.WithSharedWriteBuffer(true)}
	if os.Getenv(clientBDPEnv) == "" {
		// Fixed windows, as Envoy keeps them: no bandwidth-probing PINGs
		// (grpc-go's default) for the server to answer on every push.
		opts = append(opts, grpc.WithInitialWindowSize(1<<20), grpc.WithInitialConnWindowSize(1<<20))
	}
	cc, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		return err
	}
	defer cc.Close()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(cc)
	node := &corev3.Node{Id: id}
	if f.delta {
		return f.runDelta(ctx, ads, node)
	}
	return f.runSotW(ctx, ads, node)
}

func (f *fleet) runSotW(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, node *corev3.Node) error {
	s, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return err
	}
	return watch(f, s, &discoveryv3.DiscoveryRequest{Node: node, TypeUrl: f.typeURL, ResourceNames: []string{"*"}},
		func(resp *discoveryv3.DiscoveryResponse) (*discoveryv3.DiscoveryRequest, [][]byte) {
			values := make([][]byte, len(resp.Resources))
			for i, r := range resp.Resources {
				values[i] = r.Value
			}
			return &discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: []string{"*"}}, values
		})
}

func (f *fleet) runDelta(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, node *corev3.Node) error {
	s, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		return err
	}
	return watch(f, s, &discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: f.typeURL, ResourceNamesSubscribe: []string{"*"}},
		func(resp *discoveryv3.DeltaDiscoveryResponse) (*discoveryv3.DeltaDiscoveryRequest, [][]byte) {
			values := make([][]byte, len(resp.Resources))
			for i, r := range resp.Resources {
				values[i] = r.GetResource().GetValue()
			}
			return &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}, values
		})
}

// watch runs one client's stream of either protocol: subscribe, then ACK
// every response (ack builds the ACK and lists the resources' bytes) and
// count the current operation when a response carries its marker.
func watch[Req, Resp any](f *fleet, s grpc.BidiStreamingClient[Req, Resp], subscribe *Req, ack func(*Resp) (*Req, [][]byte)) error {
	if err := s.Send(subscribe); err != nil {
		return err
	}
	var last *operation
	for first := true; ; first = false {
		resp, err := s.Recv()
		if err != nil {
			return err
		}
		req, values := ack(resp)
		if err := s.Send(req); err != nil {
			return err
		}
		if first {
			f.up()
		}
		if op := f.op.Load(); op != nil && op != last {
			for _, v := range values {
				if bytes.Contains(v, op.marker) {
					last = op
					f.seen(op)
					break
				}
			}
		}
	}
}
