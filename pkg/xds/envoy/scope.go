package envoy

import (
	"slices"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/registry"
	"github.com/meshcp/meshcp/pkg/xds"
)

// Kinds of the changes the registry reports to the xDS server (Serve
// pushes them). They are no config kinds: ServiceChange names a service
// (Namespace the declaring object's, Name its host name) whose ports,
// addresses or resolution changed; EndpointsChange names a service whose
// endpoints changed, which concerns its EDS clusters and nothing else.
var (
	ServiceChange   = config.GroupVersionKind{Group: "registry.meshcp.io", Version: "internal", Kind: "Service"}
	EndpointsChange = config.GroupVersionKind{Group: "registry.meshcp.io", Version: "internal", Kind: "Endpoints"}
)

// affects says which of a client's types a change can alter, by what each
// type is built from:
//
//   - the mesh config and services: every type;
//   - a VirtualService: routes; and the listeners of sidecars and
//     gateways when the Model of this push or the last one built has tcp
//     or tls routes (which those listeners are made from; without any,
//     they do not depend on VirtualServices at all);
//   - a DestinationRule: clusters (policies, subsets), endpoints (subset
//     selectors) and routes (hash policies);
//   - an Istio Gateway: a gateway's listeners and routes; and its
//     clusters and endpoints when the Model of this push or the last one
//     built has an AUTO_PASSTHROUGH server (the SNI-DNAT clusters follow
//     the servers' hosts);
//   - endpoints of a host: the EDS clusters of that host the client
//     watches (in either name form, a gateway's SNI-DNAT ones too), and
//     its clusters only where they carry endpoints themselves (DNS
//     services) or read them (mutual TLS identities).
//
// Other kinds (Sidecar, policies, the Kubernetes objects the registry is
// derived from) change nothing the builders make: the registry's own
// changes stand for Services, EndpointSlices and Pods.
func (g *Generator) affects(typeURL string, p *Proxy, w *xds.Watch, req *xds.PushRequest) bool {
	for key := range req.Changed {
		switch key.Kind {
		case schema.MeshConfig, ServiceChange:
			return true
		case schema.VirtualService:
			switch {
			case typeURL == RouteType:
				return true
			case typeURL == ListenerType && p.Kind != ProxylessGRPC:
				if g.current().traits().l4Routes {
					return true
				}
			}
		case schema.DestinationRule:
			if typeURL != ListenerType {
				return true
			}
		case schema.Gateway:
			switch {
			case p.Kind != Gateway:
			case typeURL == ListenerType || typeURL == RouteType:
				return true
			case g.current().traits().autoPassthrough:
				return true
			}
		case EndpointsChange:
			switch typeURL {
			case EndpointType:
				if watchesHost(w, key.Name) {
					return true
				}
			case ClusterType:
				if g.current().model().clustersReadEndpoints(key.Name) && watchesHost(w, key.Name) {
					return true
				}
			}
		}
	}
	return false
}

// watchesHost reports whether a watch of clusters (or their endpoints)
// covers a cluster of host, outbound or SNI-DNAT.
func watchesHost(w *xds.Watch, host string) bool {
	if w.Wildcard {
		return true
	}
	for name := range w.Names {
		if ref, err := ParseClusterName(name); err == nil && ref.Host == host {
			return true
		}
	}
	return false
}

// clustersReadEndpoints reports whether the clusters of a host are made
// from its endpoints: DNS services list them in the cluster, and mutual
// TLS without configured identities trusts the endpoints' service
// accounts.
func (m *Model) clustersReadEndpoints(host string) bool {
	for _, s := range m.byHost[host] {
		switch s.Resolution {
		case registry.DNS, registry.DNSRoundRobin:
			return true
		}
		if len(s.SubjectAltNames) > 0 {
			continue
		}
		for _, d := range slices.Concat(m.drByHost[host], m.drWildcard) {
			if registry.HostMatches(d.host, host) && usesIstioMutual(d.spec) {
				return true
			}
		}
	}
	return false
}

// usesIstioMutual reports whether a DestinationRule asks for ISTIO_MUTUAL
// anywhere: its policy, a port's, a subset's.
func usesIstioMutual(dr *networking.DestinationRule) bool {
	policies := []*networking.TrafficPolicy{dr.GetTrafficPolicy()}
	for _, s := range dr.GetSubsets() {
		policies = append(policies, s.GetTrafficPolicy())
	}
	for _, p := range policies {
		if p.GetTls().GetMode() == networking.ClientTLSSettings_ISTIO_MUTUAL {
			return true
		}
		for _, pl := range p.GetPortLevelSettings() {
			if pl.GetTls().GetMode() == networking.ClientTLSSettings_ISTIO_MUTUAL {
				return true
			}
		}
	}
	return false
}

// rebuildsModel reports whether a push needs a new Model: anything the
// Model indexes changed. Endpoints are read through the registry when a
// builder asks, so a push of endpoint changes alone keeps the Model (and
// only drops the outputs of the last push).
func rebuildsModel(req *xds.PushRequest) bool {
	if req.Full {
		return true
	}
	for key := range req.Changed {
		switch key.Kind {
		case schema.MeshConfig, ServiceChange, schema.VirtualService, schema.DestinationRule, schema.Gateway:
			return true
		}
	}
	return false
}

// concernsBuilders reports whether a push changes anything the builders
// read.
func concernsBuilders(req *xds.PushRequest) bool {
	return rebuildsModel(req) || req.HasKind(EndpointsChange)
}
