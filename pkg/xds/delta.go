package xds

import (
	"slices"
	"strconv"
	"strings"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
)

type deltaResponse = discoveryv3.DeltaDiscoveryResponse

// DeltaAggregatedResources serves an incremental (delta) ADS stream.
func (s *Server) DeltaAggregatedResources(stream grpc.BidiStreamingServer[discoveryv3.DeltaDiscoveryRequest, discoveryv3.DeltaDiscoveryResponse]) error {
	return serveStream(s, stream, protocolDelta, func(c *connection) { c.deltaSend = stream.Send }, (*connection).handleDelta)
}

// handleDelta applies one request of a delta stream.
//
// The rules, from the xDS protocol: the first request of a type may name
// the resources the client already holds (initial_resource_versions, after
// a reconnect), which are not sent again unless they changed, and are
// reported removed if they are gone. Subscriptions change by difference:
// resource_names_subscribe adds names, resource_names_unsubscribe drops
// them ("*" is the wildcard; a first request that subscribes to nothing is
// the legacy wildcard). A response_nonce ACKs or NACKs the response it
// names; a stale one is ignored, but the subscription changes of its
// request still apply, since delta requests carry no full state.
func (c *connection) handleDelta(req *discoveryv3.DeltaDiscoveryRequest) error {
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
	if nonce := req.GetResponseNonce(); nonce != "" && !created {
		if nonce == w.sent.Nonce {
			c.recordAnswer(w, w.sent.Version, nackMessage(req.GetErrorDetail()))
		} else {
			c.srv.metrics.staleNonces.WithLabelValues(c.srv.typeLabel(typeURL)).Inc()
			c.srv.log.Debug("xds: stale nonce in a delta request; its ACK is ignored", "connection", c.id, "type", typeURL, "nonce", nonce, "current", w.sent.Nonce)
		}
	}
	if created {
		w.have = make(map[string]string, len(req.GetInitialResourceVersions()))
		for name, version := range req.GetInitialResourceVersions() {
			w.have[name] = version
		}
		if len(req.GetResourceNamesSubscribe()) == 0 {
			w.Wildcard, w.legacyWildcard = true, true
		}
	}
	changed := created
	for _, name := range req.GetResourceNamesSubscribe() {
		if name == "*" {
			changed = changed || !w.Wildcard
			w.Wildcard = true
			continue
		}
		if _, ok := w.Names[name]; !ok {
			w.Names[name] = struct{}{}
			changed = true
		}
	}
	for _, name := range req.GetResourceNamesUnsubscribe() {
		if name == "*" {
			if w.Wildcard {
				w.Wildcard, w.legacyWildcard = false, false
				changed = true
				// The client forgets what only the wildcard gave it.
				for held := range w.have {
					if _, named := w.Names[held]; !named {
						delete(w.have, held)
					}
				}
			}
			continue
		}
		if _, ok := w.Names[name]; ok {
			delete(w.Names, name)
			changed = true
		}
		// The client drops it; if a wildcard still covers it, the client
		// expects it again, so it counts as not held.
		delete(w.have, name)
	}
	if !changed {
		return nil
	}
	return c.respond(w, c.srv.generators.For(c.proxy.Kind, typeURL), c.requestTriggered(), created)
}

// respondDelta sends the resources the client does not hold at their
// current version, and the names it holds that are gone. Names subscribed
// to that do not exist are reported removed once, which is how the delta
// protocol tells a client that a resource does not exist. Nothing is sent
// when nothing differs, unless force. An answer over the size limit goes
// in several responses, the removals in the first.
func (c *connection) respondDelta(w *watchState, resources []*Resource, req *PushRequest, force bool) error {
	var updated []*Resource
	for _, r := range resources {
		if v, ok := w.have[r.name]; !ok || v != r.version {
			updated = append(updated, r)
		}
	}
	var removed []string
	exists := func(name string) bool {
		_, found := slices.BinarySearchFunc(resources, name, func(r *Resource, n string) int { return strings.Compare(r.name, n) })
		return found
	}
	for name, v := range w.have {
		if v != "" && !exists(name) {
			removed = append(removed, name)
		}
	}
	for name := range w.Names {
		if _, held := w.have[name]; !held && !exists(name) {
			removed = append(removed, name)
		}
	}
	if len(updated) == 0 && len(removed) == 0 && !force {
		return nil
	}
	slices.Sort(removed)
	parts, tooBig := c.sendable(w, updated, false)
	for i, part := range parts {
		nonce := c.nextNonce()
		resp := &discoveryv3.DeltaDiscoveryResponse{
			TypeUrl:           w.TypeURL,
			Nonce:             nonce,
			SystemVersionInfo: strconv.FormatUint(req.Generation, 10),
		}
		for _, r := range part {
			resp.Resources = append(resp.Resources, r.delta)
		}
		if i == 0 {
			resp.RemovedResources = removed
		}
		if err := c.deltaSend(resp); err != nil {
			return err
		}
		for _, r := range part {
			w.have[r.name] = r.version
		}
		for _, name := range resp.RemovedResources {
			if _, named := w.Names[name]; named {
				w.have[name] = "" // told it does not exist
			} else {
				delete(w.have, name)
			}
		}
		c.recordSent(w, nonce, resp.SystemVersionInfo, req.Generation, len(part)+len(resp.RemovedResources), req.Start)
		c.srv.metrics.pushes.WithLabelValues(c.srv.typeLabel(w.TypeURL)).Inc()
	}
	w.held = without(resources, tooBig)
	return nil
}
