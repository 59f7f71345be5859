package xds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

var errMissingTypeURL = status.Error(codes.InvalidArgument, "xds: a request on an aggregated stream must carry type_url")

// Server is the ADS server: config feeds and generators in, pushes out.
type Server struct {
	opts       Options
	log        *slog.Logger
	metrics    *metrics
	debug      *krt.DebugHandler
	generators *Generators
	feed       feed
	queue      *pushQueue
	ledger     *ledger
	encoded    encodedCache
	once       onceLog
	admit      *rate.Limiter
	changes    chan *PushRequest
	stop       <-chan struct{}

	// beforePush run, in order, at the start of every push; syncers are
	// what new streams wait for besides the feeds. Both are set before
	// Start.
	beforePush []func(*PushRequest)
	syncers    []krt.Syncer

	mu          sync.Mutex
	generation  uint64
	connections map[*connection]struct{}
	connSeq     uint64
	started     bool

	grpcServers []*grpc.Server
	listeners   []net.Listener
	wg          sync.WaitGroup
}

// NewServer returns a server that is not serving yet: add feeds and
// generators, then Start it. reg receives the server's metrics (nil for
// none); debug registers the collections the server builds (nil for none).
func NewServer(opts Options, log *slog.Logger, reg prometheus.Registerer, debug *krt.DebugHandler) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("xds metrics: %w", err)
	}
	s := &Server{
		opts:        opts,
		log:         log,
		metrics:     m,
		debug:       debug,
		generators:  NewGenerators(),
		queue:       newPushQueue(),
		ledger:      newLedger(),
		changes:     make(chan *PushRequest, 1024),
		connections: map[*connection]struct{}{},
	}
	if opts.MaxNewStreamsPerSecond > 0 {
		s.admit = rate.NewLimiter(rate.Limit(opts.MaxNewStreamsPerSecond), max(1, int(opts.MaxNewStreamsPerSecond)))
	}
	m.server = s
	return s, nil
}

// AddConfigs distributes the Configs of a collection under the type URL of
// their kind (gvk.String()). Calling it again for a kind adds another
// collection whose Configs are served beside the first's (the first added
// wins a name held by several), for example derived Gateway API
// VirtualServices beside the ones read from the API server. Call it before
// Start.
func (s *Server) AddConfigs(gvk config.GroupVersionKind, c krt.Collection[config.Config]) {
	k := s.feed.add(gvk, c)
	s.generators.Register(gvk.String(), k)
}

// Generators is where generators of other type URLs (Envoy's CDS, EDS,
// LDS, RDS) are registered, before Start.
func (s *Server) Generators() *Generators { return s.generators }

// BeforePush registers f to run once for every debounced push, with its
// request (its generation set), before any connection is pushed: where
// generators build what every connection of the push shares, as istiod
// builds its push context. Call it before Start.
func (s *Server) BeforePush(f func(*PushRequest)) { s.beforePush = append(s.beforePush, f) }

// WaitForSync makes new streams wait, as they wait for the config feeds,
// until syncer holds its initial state: for inputs that generators read
// outside AddConfigs (the service registry). Call it before Start.
func (s *Server) WaitForSync(syncer krt.Syncer) { s.syncers = append(s.syncers, syncer) }

// Push asks for a push of changes that did not come through AddConfigs
// (such as the service registry's). It is debounced with the rest, and
// dropped once the server stopped.
func (s *Server) Push(req *PushRequest) {
	if req.Start.IsZero() {
		req.Start = time.Now()
	}
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	select {
	case s.changes <- req:
	case <-stop: // nil before Start: the request waits in the buffer
	}
}

// Start starts the feeds, the push pipeline and the listeners; it returns
// once they listen. Everything stops when stop is closed (see Wait).
func (s *Server) Start(stop <-chan struct{}) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("xds: server started twice")
	}
	s.started = true
	s.stop = stop
	s.mu.Unlock()

	grpcOpts, err := s.grpcOptions()
	if err != nil {
		return err
	}
	if err := s.listen(grpcOpts); err != nil {
		s.stopServing()
		return err
	}
	s.feed.start(stop, s.debug, s.log, func(r *PushRequest) {
		select {
		case s.changes <- r:
		case <-stop:
		}
	})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		debounce(s.changes, s.pushAll, s.opts.Debounce, stop)
	}()
	for range s.opts.PushConcurrency {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				c, req, ok := s.queue.next()
				if !ok {
					return
				}
				c.push(req)
				s.queue.done(c)
			}
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		<-stop
		s.stopServing()
		s.queue.close()
	}()
	return nil
}

// Wait blocks until the server stopped after its stop channel closed.
func (s *Server) Wait() { s.wg.Wait() }

// Addr is the address the plaintext listener is bound to, or "".
func (s *Server) Addr() string { return s.listenerAddr("plaintext") }

// TLSAddr is the address the TLS listener is bound to, or "".
func (s *Server) TLSAddr() string { return s.listenerAddr("tls") }

// HasSynced reports whether every config feed, and everything passed to
// WaitForSync, holds its initial state.
func (s *Server) HasSynced() bool {
	for _, sy := range s.syncers {
		if !sy.HasSynced() {
			return false
		}
	}
	return s.feed.hasSynced()
}

// waitUntilSynced blocks until HasSynced, or stop.
func (s *Server) waitUntilSynced(stop <-chan struct{}) bool {
	for _, sy := range s.syncers {
		if !sy.WaitUntilSynced(stop) {
			return false
		}
	}
	return s.feed.waitUntilSynced(stop)
}

// currentGeneration is the generation of the last push.
func (s *Server) currentGeneration() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.generation
}

// pushAll numbers a debounced request and queues it for every connection;
// each works out on its own whether the change concerns it.
func (s *Server) pushAll(req *PushRequest) {
	// Only the debounce loop pushes, so the generation read here is still
	// the last one when it is set below. The shared state of the push is
	// ready before the generation is: a connection opening meanwhile is
	// either pushed below or starts with that state.
	s.mu.Lock()
	req.Generation = s.generation + 1
	s.mu.Unlock()
	for _, f := range s.beforePush {
		f(req)
	}
	s.mu.Lock()
	s.generation = req.Generation
	conns := make([]*connection, 0, len(s.connections))
	for c := range s.connections {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.metrics.generation.Set(float64(req.Generation))
	for _, c := range conns {
		s.queue.enqueue(c, req)
	}
	s.ledger.notify()
}

// openConnection admits a new stream whose first request named node, lets
// bind give it its send function, and registers it; done unregisters it.
func (s *Server) openConnection(ctx context.Context, protocol string, node *corev3.Node, bind func(*connection)) (*connection, func(), error) {
	if node.GetId() == "" {
		s.metrics.refused.WithLabelValues("no-node-id").Inc()
		return nil, nil, status.Error(codes.InvalidArgument, "xds: the first request of a stream must carry node.id")
	}
	proxy, err := ProxyFromNode(node)
	if err != nil {
		s.metrics.refused.WithLabelValues("bad-node").Inc()
		return nil, nil, status.Errorf(codes.InvalidArgument, "xds: %v", err)
	}
	if s.admit != nil {
		wait, cancel := context.WithTimeout(ctx, s.opts.StreamAdmitTimeout)
		err := s.admit.Wait(wait)
		cancel()
		if err != nil {
			s.metrics.refused.WithLabelValues("rate-limited").Inc()
			return nil, nil, status.Errorf(codes.ResourceExhausted, "xds: too many new streams; retry later (%v)", err)
		}
	}
	if !s.waitUntilSynced(ctx.Done()) {
		return nil, nil, status.Error(codes.Unavailable, "xds: stream closed before the configuration was loaded")
	}
	addr := ""
	if p, ok := peer.FromContext(ctx); ok {
		addr = p.Addr.String()
	}
	proxy.Peer, proxy.ConnectedAt = addr, time.Now()
	c := &connection{
		proxy:    proxy,
		protocol: protocol,
		ctx:      ctx,
		srv:      s,
		watches:  map[string]*watchState{},
	}
	bind(c)
	s.mu.Lock()
	s.connSeq++
	c.id = node.GetId() + "-" + strconv.FormatUint(s.connSeq, 10)
	c.seq = s.connSeq
	c.processedGen = s.generation
	c.synced.Store(s.generation)
	s.connections[c] = struct{}{}
	s.mu.Unlock()
	s.metrics.connections.WithLabelValues(protocol).Inc()
	s.log.Debug("xds: connection opened", "connection", c.id, "kind", c.proxy.Kind, "protocol", protocol, "peer", addr)
	return c, func() {
		s.mu.Lock()
		delete(s.connections, c)
		s.mu.Unlock()
		s.queue.remove(c)
		s.metrics.connections.WithLabelValues(protocol).Dec()
		s.ledger.notify()
		s.log.Debug("xds: connection closed", "connection", c.id)
	}, nil
}

// typeLabel is the metrics label of a type URL: "unknown" for types no
// generator serves, so clients cannot grow the label set.
func (s *Server) typeLabel(typeURL string) string {
	if !s.generators.Known(typeURL) {
		return "unknown"
	}
	return metricType(typeURL)
}

// snapshot returns the open connections.
func (s *Server) snapshot() ([]*connection, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*connection, 0, len(s.connections))
	for c := range s.connections {
		out = append(out, c)
	}
	return out, s.generation
}

// grpcOptions are the server options shared by both listeners.
func (s *Server) grpcOptions() ([]grpc.ServerOption, error) {
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(newCodec()),
		grpc.MaxRecvMsgSize(s.opts.MaxRecvMessageSize),
		grpc.MaxSendMsgSize(s.opts.MaxSendMessageSize),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			Time: s.opts.KeepaliveTime, Timeout: s.opts.KeepaliveTimeout,
			MaxConnectionAge: s.opts.MaxConnectionAge, MaxConnectionAgeGrace: s.opts.MaxConnectionAgeGrace,
		}),
		// Clients may ping as often as every 10s (grpc-go's minimum), even
		// without an active stream, without being disconnected.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		// Small per-connection buffers, given back between writes: a server
		// holding thousands of mostly idle streams pays for what they use.
		grpc.ReadBufferSize(4 << 10),
		grpc.WriteBufferSize(16 << 10),
		grpc.SharedWriteBuffer(true),
		// Fixed flow-control windows turn off grpc-go's bandwidth
		// estimation, which answers every ACK a client sends with a PING
		// (a write and a read per ACK, on every connection).
		grpc.InitialWindowSize(1 << 20),
		grpc.InitialConnWindowSize(1 << 20),
	}, nil
}

// listen opens the listeners and serves ADS on them.
func (s *Server) listen(opts []grpc.ServerOption) error {
	if s.opts.Addr != "" {
		if err := s.serve("plaintext", s.opts.Addr, opts); err != nil {
			return err
		}
	}
	if s.opts.TLSCertFile != "" && s.opts.TLSAddr != "" {
		creds, err := tlsCredentials(s.opts)
		if err != nil {
			return err
		}
		if err := s.serve("tls", s.opts.TLSAddr, append(append([]grpc.ServerOption(nil), opts...), grpc.Creds(creds))); err != nil {
			return err
		}
	} else if s.opts.TLSAddr != "" {
		s.log.Info("xds: TLS listener off (no --xds-tls-cert / --xds-tls-key)", "addr", s.opts.TLSAddr)
	}
	return nil
}

func (s *Server) serve(name, addr string, opts []grpc.ServerOption) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("xds %s listener: %w", name, err)
	}
	gs := grpc.NewServer(opts...)
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(gs, s)
	s.mu.Lock()
	s.grpcServers = append(s.grpcServers, gs)
	s.listeners = append(s.listeners, namedListener{Listener: l, name: name})
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := gs.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.log.Error("xds: server failed", "listener", name, "addr", l.Addr().String(), "error", err)
		}
	}()
	s.log.Info("xds: serving ADS", "listener", name, "addr", l.Addr().String())
	return nil
}

type namedListener struct {
	net.Listener
	name string
}

func (s *Server) listenerAddr(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		if l.(namedListener).name == name {
			return l.Addr().String()
		}
	}
	return ""
}

// stopServing closes the listeners and every stream.
func (s *Server) stopServing() {
	s.mu.Lock()
	servers := s.grpcServers
	s.mu.Unlock()
	for _, gs := range servers {
		gs.Stop()
	}
}
