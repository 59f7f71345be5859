package xds

import "time"

// SentType is what a client holds of one type URL, as the server last
// sent it: for /debug/config_dump.
type SentType struct {
	TypeURL string
	// Version is the version of the last response; At when it was sent.
	Version string
	At      time.Time
	// Resources are the resources the client holds, sorted by name.
	// Shared: read them, never change them.
	Resources []*Resource
}

// SentTo returns what the newest open connection of node nodeID holds,
// type by type in push order (types never answered left out). ok is false
// when the node has no open connection, or when it stayed in the middle of
// a send for longer than syncz waits.
func (s *Server) SentTo(nodeID string) (sent []SentType, ok bool) {
	conns, _ := s.snapshot()
	var newest *connection
	for _, c := range conns {
		if c.proxy.ID == nodeID && (newest == nil || c.seq > newest.seq) {
			newest = c
		}
	}
	if newest == nil || !newest.lockWithin(statusLockWait) {
		return nil, false
	}
	defer newest.mu.Unlock()
	for _, typeURL := range newest.types {
		w := newest.watches[typeURL]
		if w.sent.Nonce == "" {
			continue
		}
		sent = append(sent, SentType{TypeURL: typeURL, Version: w.sent.Version, At: w.sent.At, Resources: w.held})
	}
	return sent, true
}
