package gateway

import (
	"fmt"
	"slices"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// protocolFamily groups the protocols that can share a port: HTTPS and TLS
// listeners are told apart by SNI, nothing else can share.
func protocolFamily(p gatewayv1.ProtocolType) string {
	switch p {
	case gatewayv1.HTTPSProtocolType, gatewayv1.TLSProtocolType:
		return "TLS"
	}
	return string(p)
}

// markConflicts finds the listeners that are not distinct, which the
// Gateway API forbids accepting, every one of them (no winner is picked):
//
//   - listeners on one port whose protocols cannot share it (HTTP with
//     HTTPS, TCP with anything else) have a ProtocolConflict;
//   - listeners on one port that could share it but serve the same
//     hostname (an HTTPS and a TLS listener for one name, two TCP
//     listeners, which have no hostname) have a HostnameConflict.
//
// Listeners of protocols meshcp does not support are left out: they are
// rejected anyway.
func markConflicts(results []*listenerResult) {
	byPort := map[gatewayv1.PortNumber][]*listenerResult{}
	var ports []gatewayv1.PortNumber
	for _, r := range results {
		if !r.supported {
			continue
		}
		if _, seen := byPort[r.l.Port]; !seen {
			ports = append(ports, r.l.Port)
		}
		byPort[r.l.Port] = append(byPort[r.l.Port], r)
	}
	for _, port := range ports {
		group := byPort[port]
		families := map[string]bool{}
		for _, r := range group {
			families[protocolFamily(r.l.Protocol)] = true
		}
		if len(families) > 1 {
			msg := fmt.Sprintf("port %d is shared by listeners with protocols that cannot share a port: %s", port, describeListeners(group))
			for _, r := range group {
				r.conflict, r.conflictMsg = gatewayv1.ListenerReasonProtocolConflict, msg
			}
			continue
		}
		byHost := map[string][]*listenerResult{}
		for _, r := range group {
			byHost[r.hostname] = append(byHost[r.hostname], r)
		}
		for host, same := range byHost {
			if len(same) < 2 {
				continue
			}
			what := fmt.Sprintf("hostname %q", host)
			if host == "" {
				what = "every hostname"
			}
			msg := fmt.Sprintf("listeners %s all serve %s on port %d", describeListeners(same), what, port)
			for _, r := range same {
				r.conflict, r.conflictMsg = gatewayv1.ListenerReasonHostnameConflict, msg
			}
		}
	}
}

// describeListeners names listeners with their protocols: "http (HTTP),
// tcp (TCP)", in spec order.
func describeListeners(rs []*listenerResult) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s (%s)", r.l.Name, r.l.Protocol)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
