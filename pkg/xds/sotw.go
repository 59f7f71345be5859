package xds

import (
	"slices"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
)

// StreamAggregatedResources serves a state-of-the-world ADS stream.
func (s *Server) StreamAggregatedResources(stream grpc.BidiStreamingServer[discoveryv3.DiscoveryRequest, discoveryv3.DiscoveryResponse]) error {
	return serveStream(s, stream, protocolSotW, func(c *connection) { c.sotwSend = stream.SendMsg }, (*connection).handleSotW)
}

// handleSotW applies one request of a state-of-the-world stream.
//
// The rules, from the xDS protocol: a request with no nonce is a new
// subscription (or a client that reconnected) and always gets a full
// answer; a request whose nonce is not the one last sent for its type is
// stale and ignored; otherwise it ACKs (no error_detail) or NACKs the last
// response, and it carries the complete list of names the client wants, so
// a changed list is answered with the resources of the new list. Empty
// names on the first request are the legacy spelling of a wildcard, which
// stays until the client names resources; "*" is the explicit wildcard.
func (c *connection) handleSotW(req *discoveryv3.DiscoveryRequest) error {
	typeURL := req.GetTypeUrl()
	if typeURL == "" {
		return errMissingTypeURL
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.publish()
	w, created, err := c.watch(typeURL)
	if err != nil {
		return err
	}
	nonce := req.GetResponseNonce()
	switch {
	case nonce == "" || created:
		// A new subscription, or a client starting over on a new stream.
		w.legacyWildcard = false
		setSotWNames(w, req.GetResourceNames(), true)
	case nonce != w.sent.Nonce:
		c.srv.metrics.staleNonces.WithLabelValues(c.srv.typeLabel(typeURL)).Inc()
		c.srv.log.Debug("xds: ignoring a request with a stale nonce", "connection", c.id, "type", typeURL, "nonce", nonce, "current", w.sent.Nonce)
		return nil
	default:
		c.recordAnswer(w, req.GetVersionInfo(), nackMessage(req.GetErrorDetail()))
		if !setSotWNames(w, req.GetResourceNames(), false) {
			return nil // an ACK or NACK, nothing more
		}
	}
	return c.respond(w, c.srv.generators.For(c.proxy.Kind, typeURL), c.requestTriggered(), true)
}

// setSotWNames replaces the names of a SotW watch and reports whether they
// changed. first allows the legacy wildcard (no names at all).
func setSotWNames(w *watchState, names []string, first bool) bool {
	wildcard, legacy := false, false
	set := make(map[string]struct{}, len(names))
	for _, n := range names {
		if n == "*" {
			wildcard = true
			continue
		}
		set[n] = struct{}{}
	}
	if len(names) == 0 && (first || w.legacyWildcard) {
		wildcard, legacy = true, true
	}
	changed := wildcard != w.Wildcard || !sameNames(set, w.Names)
	w.Wildcard, w.legacyWildcard, w.Names = wildcard, legacy, set
	return changed
}

func sameNames(a, b map[string]struct{}) bool {
	if len(a) != len(b) {
		return false
	}
	for n := range a {
		if _, ok := b[n]; !ok {
			return false
		}
	}
	return true
}

// respondSotW sends the resources the watch covers, unless the client
// holds them already, whether it ACKed or NACKed them: a NACKed config is
// not sent again, only a changed one (force sends it anyway, to answer a
// request). Listeners, clusters and config kinds go whole; a push of
// endpoints or routes carries only the resources that changed (see
// sendsChangesOnly), so an endpoint change re-sends the clusters it
// concerns and no others. The version is that of the whole set either
// way. Answers over the size limit are split where only changes go, and
// not sent where the whole set must (see sendable).
func (c *connection) respondSotW(w *watchState, resources []*Resource, req *PushRequest, force bool) error {
	version := versionOf(resources)
	changesOnly := sendsChangesOnly(w.TypeURL)
	send := resources
	if !force && w.sent.Nonce != "" {
		if changesOnly {
			if send = changedSince(w.held, resources); len(send) == 0 {
				return nil
			}
		} else if version == w.sent.Version {
			return nil
		}
	}
	parts, tooBig := c.sendable(w, send, !changesOnly)
	for _, part := range parts {
		// A response carrying the whole set is the same for every client
		// that holds the same set; a part is named by its own content.
		subset := ""
		if len(part) != len(resources) {
			subset = versionOf(part)
		}
		body, err := c.srv.encoded.get(w.TypeURL, version, subset, part)
		if err != nil {
			c.fail(w, err.Error())
			return nil
		}
		nonce := c.nextNonce()
		if err := c.sotwSend(&preEncoded{body: body, nonce: nonce}); err != nil {
			return err
		}
		c.recordSent(w, nonce, version, req.Generation, len(part), req.Start)
		c.srv.metrics.pushes.WithLabelValues(c.srv.typeLabel(w.TypeURL)).Inc()
	}
	if len(parts) > 0 {
		w.held = without(resources, tooBig)
	}
	return nil
}

// sortedNames lists a name set, for display.
func sortedNames(names map[string]struct{}) []string {
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
