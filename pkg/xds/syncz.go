package xds

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// syncz is the answer of /debug/syncz.
type syncz struct {
	// Generation is the generation of the last push.
	Generation  uint64           `json:"generation"`
	Connections []connectionSync `json:"connections"`
}

type connectionSync struct {
	ID          string     `json:"id"`
	NodeID      string     `json:"nodeId"`
	Kind        ClientKind `json:"kind"`
	Protocol    string     `json:"protocol"`
	Peer        string     `json:"peer"`
	ConnectedAt time.Time  `json:"connectedAt"`
	// SyncedGeneration is the generation up to which the client has ACKed
	// every change pushed to it.
	SyncedGeneration uint64 `json:"syncedGeneration"`
	// Busy is set when the connection was in the middle of a send (a
	// client not reading) for longer than syncz waits; its types are left
	// out then.
	Busy  bool       `json:"busy,omitempty"`
	Types []typeSync `json:"types,omitempty"`
}

type typeSync struct {
	TypeURL  string      `json:"typeUrl"`
	Wildcard bool        `json:"wildcard"`
	Names    []string    `json:"names,omitempty"`
	Sent     *sentRecord `json:"sent,omitempty"`
	Acked    *ackRecord  `json:"acked,omitempty"`
	LastNACK *nackRecord `json:"lastNack,omitempty"`
	// Warnings are the generator's about the configuration it could not
	// generate as written, as of the last generation for this client.
	Warnings []string `json:"warnings,omitempty"`
	// LastError is what kept the last response from being sent as
	// generated (too big, a generator error), if anything did.
	LastError *failureRecord `json:"lastError,omitempty"`
}

// waitResult is the answer of /debug/syncz?generation=N&wait=D.
type waitResult struct {
	Generation  uint64 `json:"generation"`
	Synced      bool   `json:"synced"`
	Connections int    `json:"connections"`
	// Behind lists the connections that had not ACKed the generation when
	// the wait ended.
	Behind []connectionSync `json:"behind,omitempty"`
}

// SyncHandler serves /debug/syncz: every connection with its node id, the
// types and names it watches, what it was sent and what it ACKed or NACKed
// (with the client's error). ?node=ID narrows it to one node.
// ?generation=N&wait=10s instead answers once every connected client has
// ACKed generation N (200, "synced": true) or when the wait runs out (504,
// with the connections still behind).
func (s *Server) SyncHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Has("generation") || q.Has("wait") {
			s.serveWait(w, r)
			return
		}
		conns, gen := s.snapshot()
		out := syncz{Generation: gen, Connections: []connectionSync{}}
		node := q.Get("node")
		for _, c := range conns {
			if node == "" || c.proxy.ID == node {
				out.Connections = append(out.Connections, c.status(true))
			}
		}
		slices.SortFunc(out.Connections, func(a, b connectionSync) int { return strings.Compare(a.ID, b.ID) })
		writeJSON(w, http.StatusOK, out)
	})
}

func (s *Server) serveWait(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	gen, err := strconv.ParseUint(q.Get("generation"), 10, 64)
	if err != nil {
		http.Error(w, fmt.Sprintf("generation: want a push generation number, got %q", q.Get("generation")), http.StatusBadRequest)
		return
	}
	wait := time.Duration(0)
	if v := q.Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 {
			http.Error(w, fmt.Sprintf("wait: want a duration such as 10s, got %q", v), http.StatusBadRequest)
			return
		}
	}
	changed, cancel := s.ledger.subscribe()
	defer cancel()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		res := s.syncedTo(gen)
		if res.Synced {
			writeJSON(w, http.StatusOK, res)
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			writeJSON(w, http.StatusGatewayTimeout, res)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// syncedTo reports whether every connection has ACKed generation gen. It
// reads each connection's last published state, never waiting for a
// connection busy sending.
func (s *Server) syncedTo(gen uint64) waitResult {
	conns, current := s.snapshot()
	res := waitResult{Generation: gen, Connections: len(conns), Synced: gen <= current}
	for _, c := range conns {
		if c.synced.Load() < gen {
			res.Synced = false
			if len(res.Behind) < 100 {
				res.Behind = append(res.Behind, c.status(false))
			}
		}
	}
	slices.SortFunc(res.Behind, func(a, b connectionSync) int { return strings.Compare(a.ID, b.ID) })
	return res
}

// statusLockWait bounds how long syncz waits for a connection that is
// sending.
const statusLockWait = time.Second

// status describes a connection; withTypes adds its watches, waiting at
// most statusLockWait for a connection in the middle of a send.
func (c *connection) status(withTypes bool) connectionSync {
	out := connectionSync{
		ID: c.id, NodeID: c.proxy.ID, Kind: c.proxy.Kind, Protocol: c.protocol, Peer: c.proxy.Peer,
		ConnectedAt: c.proxy.ConnectedAt, SyncedGeneration: c.synced.Load(),
	}
	if !withTypes {
		return out
	}
	if !c.lockWithin(statusLockWait) {
		out.Busy = true
		return out
	}
	defer c.mu.Unlock()
	for _, typeURL := range c.types {
		w := c.watches[typeURL]
		t := typeSync{TypeURL: typeURL, Wildcard: w.Wildcard, Names: sortedNames(w.Names), LastNACK: w.nack,
			Warnings: w.warnings, LastError: w.failure}
		if w.sent.Nonce != "" {
			sent := w.sent
			t.Sent = &sent
		}
		if w.acked.Nonce != "" {
			acked := w.acked
			t.Acked = &acked
		}
		out.Types = append(out.Types, t)
	}
	return out
}

// lockWithin takes c.mu, waiting at most d for a connection in the middle
// of a send; it reports whether it got it.
func (c *connection) lockWithin(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !c.mu.TryLock() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
