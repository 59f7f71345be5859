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

// clientBDPEnv, set to anything, makes the grpc-go synthetic clients (see
// clientKindEnv) grpc-go
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
	kind    string // "wire" or "grpc", see clientKindEnv

	creditAt uint32

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

// fleetConfig says what clients a fleet has.
type fleetConfig struct {
	addr    string // the daemon's xDS address
	typeURL string // what every client watches, all names
	n       int
	delta   bool
	kind    string        // "wire" or "grpc", see clientKindEnv
	connect time.Duration // how long the n clients may take to connect
	// creditAt is how many received bytes a wire client credits back to
	// the server at once (0: half its window).
	creditAt uint32
}

// newFleet connects the clients, all at once, and returns when each has
// its first response or one failed.
func newFleet(cfg fleetConfig) (*fleet, time.Duration, error) {
	addr, n := cfg.addr, cfg.n
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{n: n, typeURL: cfg.typeURL, delta: cfg.delta, kind: cfg.kind, creditAt: cfg.creditAt, allUp: make(chan struct{}), errs: make(chan error, n), cancel: cancel}
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
	case <-time.After(cfg.connect):
		f.close()
		return nil, 0, fmt.Errorf("only %d of %d clients connected within %s", f.connected.Load(), n, cfg.connect)
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
	node := &corev3.Node{Id: id}
	if f.kind != "grpc" {
		return f.runWire(ctx, addr, node)
	}
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
	return watch(f, s, f.subscribeSotW(node), ackSotW)
}

func (f *fleet) runDelta(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, node *corev3.Node) error {
	s, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		return err
	}
	return watch(f, s, f.subscribeDelta(node), ackDelta)
}

// runWire runs one client as a wireStream.
func (f *fleet) runWire(ctx context.Context, addr string, node *corev3.Node) error {
	if f.delta {
		s, err := dialWire[*discoveryv3.DeltaDiscoveryRequest](ctx, addr, adsMethod(true), f.creditAt, func() *discoveryv3.DeltaDiscoveryResponse { return new(discoveryv3.DeltaDiscoveryResponse) })
		if err != nil {
			return err
		}
		defer s.close()
		return watch(f, s, f.subscribeDelta(node), ackDelta)
	}
	s, err := dialWire[*discoveryv3.DiscoveryRequest](ctx, addr, adsMethod(false), f.creditAt, func() *discoveryv3.DiscoveryResponse { return new(discoveryv3.DiscoveryResponse) })
	if err != nil {
		return err
	}
	defer s.close()
	return watch(f, s, f.subscribeSotW(node), ackSotW)
}

func (f *fleet) subscribeSotW(node *corev3.Node) *discoveryv3.DiscoveryRequest {
	return &discoveryv3.DiscoveryRequest{Node: node, TypeUrl: f.typeURL, ResourceNames: []string{"*"}}
}

// ackSotW builds the ACK of a state-of-the-world response and lists its
// resources' bytes.
func ackSotW(resp *discoveryv3.DiscoveryResponse) (*discoveryv3.DiscoveryRequest, [][]byte) {
	values := make([][]byte, len(resp.Resources))
	for i, r := range resp.Resources {
		values[i] = r.Value
	}
	return &discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: []string{"*"}}, values
}

func (f *fleet) subscribeDelta(node *corev3.Node) *discoveryv3.DeltaDiscoveryRequest {
	return &discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: f.typeURL, ResourceNamesSubscribe: []string{"*"}}
}

// ackDelta builds the ACK of a delta response and lists its resources'
// bytes.
func ackDelta(resp *discoveryv3.DeltaDiscoveryResponse) (*discoveryv3.DeltaDiscoveryRequest, [][]byte) {
	values := make([][]byte, len(resp.Resources))
	for i, r := range resp.Resources {
		values[i] = r.GetResource().GetValue()
	}
	return &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}, values
}

// bidiStream is a client's side of a bidirectional stream, grpc-go's or a
// wireStream.
type bidiStream[Req, Resp any] interface {
	Send(Req) error
	Recv() (Resp, error)
}

// watch runs one client's stream of either protocol: subscribe, then ACK
// every response (ack builds the ACK and lists the resources' bytes) and
// count the current operation when a response carries its marker.
func watch[Req, Resp any](f *fleet, s bidiStream[Req, Resp], subscribe Req, ack func(Resp) (Req, [][]byte)) error {
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
