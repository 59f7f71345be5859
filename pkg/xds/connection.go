package xds

import (
	"context"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Protocols of a connection.
const (
	protocolSotW  = "sotw"
	protocolDelta = "delta"
)

// connection is one ADS stream and everything the server knows about it.
// mu serialises every send on the stream and guards the state: a request
// answered on the stream's goroutine and a push from a worker never
// interleave, so a client never has two responses being written at once.
type connection struct {
	id       string
	seq      uint64 // order of opening, among all connections
	proxy    *Proxy
	protocol string
	ctx      context.Context
	srv      *Server

	mu      sync.Mutex
	watches map[string]*watchState
	types   []string // keys of watches, in push order
	nonces  uint64
	// processedGen is the last push generation this connection has been
	// brought up to (whether or not the push had anything for it).
	processedGen uint64
	// synced is syncedGeneration as of the last change, readable without
	// mu by /debug/syncz?wait=.
	synced atomic.Uint64
	// send writes one response of the connection's protocol.
	sotwSend  func(any) error // a *preEncoded
	deltaSend func(*deltaResponse) error
}

// watchState is one type URL of one connection: what the client asked for,
// what it was sent, and what it said about it (the ACK / NACK ledger).
type watchState struct {
	Watch
	// legacyWildcard: the first request named nothing, the protocol's old
	// spelling of a wildcard.
	legacyWildcard bool
	unknownLogged  bool

	sent  sentRecord
	acked ackRecord
	nack  *nackRecord
	// syncedThrough is the generation up to which the client held every
	// pushed change of this type, before the response now outstanding.
	syncedThrough uint64
	// have maps each resource the client holds (delta) to its version;
	// "" means the client was told the name does not exist.
	have map[string]string
	// held is what the client holds of the type, as sent, sorted by name
	// (the generator's list itself when it was sent whole, not a copy):
	// /debug/config_dump shows it, and state-of-the-world pushes of
	// endpoints and routes send only what differs from it.
	held []*Resource
	// warnings are the generator's, from the last generation; failure is
	// what kept the last response from being sent as generated, if
	// anything did.
	warnings []string
	failure  *failureRecord
}

type failureRecord struct {
	Error string    `json:"error"`
	At    time.Time `json:"at"`
}

type sentRecord struct {
	Nonce      string    `json:"nonce"`
	Version    string    `json:"version"`
	Generation uint64    `json:"generation"`
	Resources  int       `json:"resources"`
	At         time.Time `json:"at"`
	pushStart  time.Time
}

type ackRecord struct {
	Nonce      string    `json:"nonce"`
	Version    string    `json:"version"`
	Generation uint64    `json:"generation"`
	At         time.Time `json:"at"`
}

type nackRecord struct {
	Nonce   string    `json:"nonce"`
	Version string    `json:"version"`
	Error   string    `json:"error"`
	At      time.Time `json:"at"`
}

// caughtUp reports whether the client answered the last response.
func (w *watchState) caughtUp() bool { return w.sent.Nonce == "" || w.acked.Nonce == w.sent.Nonce }

// maxTypesPerConnection bounds the type URLs one stream may watch, so a
// client cannot grow the server's memory by inventing type URLs.
const maxTypesPerConnection = 64

var errTooManyTypes = status.Errorf(codes.InvalidArgument, "xds: a stream may watch at most %d type URLs", maxTypesPerConnection)

// watch returns the state of a type URL, creating it.
func (c *connection) watch(typeURL string) (*watchState, bool, error) {
	if w, ok := c.watches[typeURL]; ok {
		return w, false, nil
	}
	if len(c.watches) >= maxTypesPerConnection {
		return nil, false, errTooManyTypes
	}
	w := &watchState{Watch: Watch{TypeURL: typeURL, Names: map[string]struct{}{}}}
	c.watches[typeURL] = w
	c.types = append(c.types, typeURL)
	slices.SortFunc(c.types, comparePushOrder)
	return w, true, nil
}

// nextNonce returns a nonce unique on this stream.
func (c *connection) nextNonce() string {
	c.nonces++
	return strconv.FormatUint(c.nonces, 10)
}

// recordSent updates the ledger for a response just sent at generation gen.
func (c *connection) recordSent(w *watchState, nonce, version string, gen uint64, resources int, pushStart time.Time) {
	if w.caughtUp() && w.sent.Nonce != "" {
		// Everything before this response was held: the client was in sync
		// up to the last push this connection went through.
		w.syncedThrough = max(w.syncedThrough, c.processedGen, w.acked.Generation)
	}
	w.sent = sentRecord{Nonce: nonce, Version: version, Generation: gen, Resources: resources, At: time.Now(), pushStart: pushStart}
}

// recordAnswer takes an ACK or NACK of the response last sent.
func (c *connection) recordAnswer(w *watchState, version string, errorDetail string) {
	now := time.Now()
	if errorDetail != "" {
		w.nack = &nackRecord{Nonce: w.sent.Nonce, Version: w.sent.Version, Error: errorDetail, At: now}
		c.srv.metrics.nacks.WithLabelValues(c.srv.typeLabel(w.TypeURL)).Inc()
		// Every client of a kind rejects a bad config alike: logged once.
		c.srv.logOnce(slog.LevelWarn, "nack\x00"+w.TypeURL+"\x00"+errorDetail, "xds: client rejected a response (NACK)", "node", c.proxy.ID,
			"connection", c.id, "type", w.TypeURL, "nonce", w.sent.Nonce, "version", w.sent.Version, "error", errorDetail)
		return
	}
	w.acked = ackRecord{Nonce: w.sent.Nonce, Version: version, Generation: w.sent.Generation, At: now}
	if !w.sent.pushStart.IsZero() {
		c.srv.metrics.changeToAck.WithLabelValues(c.srv.typeLabel(w.TypeURL)).Observe(now.Sub(w.sent.pushStart).Seconds())
	}
}

// syncedGeneration is the generation up to which the client has ACKed
// every change pushed to it.
func (c *connection) syncedGeneration() uint64 {
	synced := c.processedGen
	for _, w := range c.watches {
		if w.caughtUp() {
			synced = min(synced, max(c.processedGen, w.acked.Generation))
		} else {
			synced = min(synced, w.syncedThrough)
		}
	}
	return synced
}

// push brings the connection up to a push request: each watched type the
// request can affect is generated and sent, in push order.
func (c *connection) push(req *PushRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		return
	}
	for _, typeURL := range c.types {
		w := c.watches[typeURL]
		gen := c.srv.generators.For(c.proxy.Kind, typeURL)
		if gen == nil || !affects(gen, c.proxy, &w.Watch, req) {
			continue
		}
		if err := c.respond(w, gen, req, false); err != nil {
			c.srv.log.Debug("xds: push failed", "connection", c.id, "type", typeURL, "error", err)
			return
		}
	}
	c.processedGen = max(c.processedGen, req.Generation)
	c.publish()
}

// publish makes the connection's synced generation visible and wakes
// waiters. c.mu is held.
func (c *connection) publish() {
	if g := c.syncedGeneration(); g != c.synced.Load() {
		c.synced.Store(g)
		c.srv.ledger.notify()
	}
}

// requestTriggered is the push request of a response to a client's own
// request: everything the client asks for, as of the current generation.
func (c *connection) requestTriggered() *PushRequest {
	return &PushRequest{Full: true, Generation: c.srv.currentGeneration()}
}

// respond generates the resources of w and sends what the client lacks;
// force sends a response even when nothing changed (the answer to a
// client's first request of a type). c.mu is held.
func (c *connection) respond(w *watchState, gen Generator, req *PushRequest, force bool) error {
	var resources []*Resource
	if gen == nil {
		if !w.unknownLogged {
			w.unknownLogged = true
			c.srv.log.Info("xds: no resources of an unknown type URL; answering empty", "node", c.proxy.ID, "connection", c.id, "type", w.TypeURL)
		}
	} else {
		out, err := gen.Generate(c.proxy, &w.Watch, req)
		if err != nil {
			c.fail(w, fmt.Sprintf("generating resources failed; nothing sent: %v", err))
			return nil
		}
		resources, w.warnings, w.failure = out.Resources, out.Warnings, nil
		for _, warning := range out.Warnings {
			c.srv.logOnce(slog.LevelWarn, "warning\x00"+w.TypeURL+"\x00"+warning, "xds: configuration not generated as written",
				"type", w.TypeURL, "node", c.proxy.ID, "warning", warning)
		}
		if !slices.IsSortedFunc(resources, compareResources) {
			resources = slices.SortedFunc(slices.Values(resources), compareResources)
		}
	}
	if c.protocol == protocolDelta {
		return c.respondDelta(w, resources, req, force)
	}
	return c.respondSotW(w, resources, req, force)
}

// fail records and logs (once per distinct error and type) why a response
// was not sent as generated. c.mu is held.
func (c *connection) fail(w *watchState, msg string) {
	w.failure = &failureRecord{Error: msg, At: time.Now()}
	c.srv.logOnce(slog.LevelError, "failure\x00"+w.TypeURL+"\x00"+msg, "xds: response not sent as generated",
		"type", w.TypeURL, "node", c.proxy.ID, "connection", c.id, "error", msg)
}

// sendable splits what a response is to carry into parts under the size
// limit, recording what cannot be sent: resources too big for any
// response, or, when whole is set (the response must carry every
// resource), everything if it needs more than one part.
func (c *connection) sendable(w *watchState, resources []*Resource, whole bool) (parts [][]*Resource, tooBig []*Resource) {
	limit := c.srv.opts.MaxResponseSize
	parts, tooBig = chunk(resources, limit)
	if whole && (len(parts) > 1 || len(tooBig) > 0) {
		c.fail(w, fmt.Sprintf("the %d resources weigh %d bytes, over the response limit of %d (--xds-max-response-size), and a state-of-the-world %s response must carry them all; nothing sent",
			len(resources), totalSize(resources), limit, w.TypeURL))
		return nil, resources
	}
	if len(tooBig) > 0 {
		names := make([]string, len(tooBig))
		for i, r := range tooBig {
			names[i] = fmt.Sprintf("%s (%d bytes)", r.name, r.size)
		}
		c.fail(w, fmt.Sprintf("left out, each over the response limit of %d bytes (--xds-max-response-size): %s", limit, strings.Join(names, ", ")))
	}
	return parts, tooBig
}

// without returns resources minus those of drop (both sorted by name).
func without(resources, drop []*Resource) []*Resource {
	if len(drop) == 0 {
		return resources
	}
	out := make([]*Resource, 0, len(resources))
	for _, r := range resources {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}

// changedSince lists the resources whose version the client does not
// hold; both lists are sorted by name.
func changedSince(held, resources []*Resource) []*Resource {
	var out []*Resource
	i := 0
	for _, r := range resources {
		for i < len(held) && held[i].name < r.name {
			i++
		}
		if i < len(held) && held[i].name == r.name && held[i].version == r.version {
			continue
		}
		out = append(out, r)
	}
	return out
}

func compareResources(a, b *Resource) int { return strings.Compare(a.name, b.name) }

// versionOf is the SotW version of a set of resources: a hash of their
// names and versions, so it changes exactly when the set does.
func versionOf(resources []*Resource) string {
	h := fnv.New64a()
	for _, r := range resources {
		_, _ = h.Write([]byte(r.name))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(r.version))
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
