package envoy

import (
	"cmp"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/meshcp/meshcp/pkg/registry"
)

// BuildEndpoints generates the EDS resources (ClusterLoadAssignments) of
// the named clusters, or of every EDS cluster the proxy sees when names is
// empty; a gateway's SNI-DNAT clusters ("outbound_.port_.subset_.host",
// see BuildClusters) have the endpoints of the outbound cluster of the
// same port and subset. For each, the service's endpoints that serve the port, and for a
// subset only those whose labels the subset selects; grouped by locality
// (sorted, weight the sum of the endpoints' weights, so never 0), each
// address once (gRPC refuses an address twice), with health from
// EndpointSlice conditions: HEALTHY, UNHEALTHY or DRAINING. A cluster with
// no endpoints has an assignment with none: the client knows it is empty.
func BuildEndpoints(p *Proxy, m *Model, names []string) Result {
	b := newBuild(p, m)
	if len(names) == 0 {
		names = edsClusterNames(BuildClusters(p, m, nil))
	}
	var out []Resource
	for _, name := range names {
		ref, err := ParseClusterName(name)
		if err != nil {
			continue
		}
		svc, port, dr, ok := b.clusterOf(ref)
		if !ok || !usesEDS(svc, p.Kind, ref.SNI) {
			continue
		}
		var selector map[string]string
		if ref.Subset != "" {
			selector = dr.subset(ref.Subset).Labels
		}
		out = append(out, Resource{Name: name, Message: b.loadAssignment(name, svc, port, selector)})
	}
	return b.result(out)
}

// usesEDS reports whether a service's clusters read endpoints over EDS
// (see BuildClusters): DNS services resolve names themselves, and a
// sidecar passes headless traffic through to the address the client
// dialed; gateways and gRPC clients, which have no such address (a
// gateway's own would loop back to it), read a headless service's
// endpoints, as SNI-DNAT clusters (sniDNAT) do.
func usesEDS(svc *registry.Service, f Flavour, sniDNAT bool) bool {
	switch svc.Resolution {
	case registry.DNS, registry.DNSRoundRobin:
		return false
	case registry.Passthrough:
		return f != Sidecar || sniDNAT
	}
	return true
}

// edsClusterNames are the names of the EDS clusters among generated ones.
func edsClusterNames(r Result) []string {
	var out []string
	for _, res := range r.Resources {
		if _, err := ParseClusterName(res.Name); err == nil && clusterIsEDS(res.Message) {
			out = append(out, res.Name)
		}
	}
	return out
}

func (b *build) loadAssignment(name string, svc *registry.Service, port registry.Port, selector map[string]string) *endpointv3.ClusterLoadAssignment {
	groups := map[registry.Locality][]*endpointv3.LbEndpoint{}
	weights := map[registry.Locality]uint32{}
	seen := map[string]bool{}
	eps := b.m.endpoints(svc)
	slices.SortStableFunc(eps, func(a, c registry.Endpoint) int { return strings.Compare(a.Address, c.Address) })
	for _, e := range eps {
		n, ok := e.PortFor(port)
		if !ok || !e.Selected(selector) {
			continue
		}
		if !isIP(e.Address) {
			b.w.add(e.Origin, "", "endpoint %s of %s is not an IP address; EDS carries addresses only", e.Address, svc.Hostname)
			continue
		}
		addr := e.Address + ":" + itoa(n)
		if seen[addr] {
			continue
		}
		seen[addr] = true
		w := max(e.Weight, 1)
		groups[e.Locality] = append(groups[e.Locality], &endpointv3.LbEndpoint{
			HostIdentifier:      &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socketAddress(e.Address, n)}},
			HealthStatus:        healthStatus(e.Health),
			LoadBalancingWeight: wrapUInt32(w),
		})
		weights[e.Locality] += w
	}
	localities := make([]registry.Locality, 0, len(groups))
	for l := range groups {
		localities = append(localities, l)
	}
	slices.SortFunc(localities, func(a, c registry.Locality) int {
		return cmp.Or(strings.Compare(a.Region, c.Region), strings.Compare(a.Zone, c.Zone), strings.Compare(a.SubZone, c.SubZone))
	})
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: name}
	for _, l := range localities {
		cla.Endpoints = append(cla.Endpoints, &endpointv3.LocalityLbEndpoints{
			Locality:            &corev3.Locality{Region: l.Region, Zone: l.Zone, SubZone: l.SubZone},
			LbEndpoints:         groups[l],
			LoadBalancingWeight: wrapUInt32(weights[l]),
		})
	}
	return cla
}

func healthStatus(h registry.Health) corev3.HealthStatus {
	switch h {
	case registry.Unhealthy:
		return corev3.HealthStatus_UNHEALTHY
	case registry.Draining:
		return corev3.HealthStatus_DRAINING
	}
	return corev3.HealthStatus_HEALTHY
}
