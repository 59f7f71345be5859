package registry

import (
	"maps"
	"strings"
)

// Locality is where an endpoint runs, as region, zone and sub-zone.
type Locality struct {
	Region  string `json:"region,omitempty"`
	Zone    string `json:"zone,omitempty"`
	SubZone string `json:"subZone,omitempty"`
}

// String is "region/zone/subzone", as Istio writes localities.
func (l Locality) String() string {
	return strings.TrimRight(l.Region+"/"+l.Zone+"/"+l.SubZone, "/")
}

// ParseLocality reads "region/zone/subzone" (a WorkloadEntry's locality)
// or "region.zone.subzone" (the istio-locality label, where "/" is not
// allowed); missing parts are empty.
func ParseLocality(s string) Locality {
	sep := "/"
	if !strings.Contains(s, "/") {
		sep = "."
	}
	parts := strings.SplitN(s, sep, 3)
	var l Locality
	for i, p := range parts {
		switch i {
		case 0:
			l.Region = p
		case 1:
			l.Zone = p
		case 2:
			l.SubZone = p
		}
	}
	return l
}

// Health is whether an endpoint should get traffic.
type Health int

const (
	// Healthy endpoints get traffic.
	Healthy Health = iota
	// Unhealthy endpoints are known but get no traffic: not ready.
	Unhealthy
	// Draining endpoints are terminating but still serving: they finish
	// what they have and get no new traffic.
	Draining
)

// String names the health as Envoy does.
func (h Health) String() string {
	switch h {
	case Healthy:
		return "HEALTHY"
	case Unhealthy:
		return "UNHEALTHY"
	case Draining:
		return "DRAINING"
	}
	return "UNKNOWN"
}

// MarshalText writes the health by name in debug dumps.
func (h Health) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// Endpoint is one address that serves a service.
type Endpoint struct {
	// Service is the key of the service it serves (see ServiceKey), and
	// Hostname that service's host name.
	Service  string `json:"service"`
	Hostname string `json:"hostname"`
	// Address is an IP address, or a host name for DNS-resolved services.
	Address string `json:"address"`
	// Ports maps the service's port names to the port on this endpoint. A
	// service port missing from it is not served by this endpoint.
	Ports map[string]uint32 `json:"ports"`
	// Labels are those of the workload behind the endpoint; subsets select
	// endpoints by them.
	Labels         map[string]string `json:"labels,omitempty"`
	ServiceAccount string            `json:"serviceAccount,omitempty"`
	Locality       Locality          `json:"locality"`
	Network        string            `json:"network,omitempty"`
	Health         Health            `json:"health"`
	// Weight is the endpoint's share of traffic relative to the others of
	// its locality; at least 1.
	Weight uint32 `json:"weight"`
	// Workload is the key of the workload behind the endpoint
	// ("Pod/namespace/name"), empty for an address given inline.
	Workload string `json:"workload,omitempty"`
	// Origin is the object it was read from: "EndpointSlice ns/name",
	// "ServiceEntry ns/name", "Service ns/name" (a selected WorkloadEntry).
	Origin string `json:"origin"`
}

// ResourceName identifies the endpoint among all: its origin, host and
// address. The same address from two origins is two endpoints; builders
// keep one.
func (e Endpoint) ResourceName() string {
	return e.Origin + "/" + e.Hostname + "/" + e.Address
}

// PortFor returns the endpoint's port for a service port.
func (e Endpoint) PortFor(p Port) (uint32, bool) {
	n, ok := e.Ports[p.Name]
	return n, ok
}

// Selected reports whether the endpoint's labels include every label of
// selector, as a DestinationRule subset selects endpoints.
func (e Endpoint) Selected(selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := e.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Equals compares endpoints field by field.
func (e Endpoint) Equals(o Endpoint) bool {
	return e.Service == o.Service && e.Hostname == o.Hostname && e.Address == o.Address && maps.Equal(e.Ports, o.Ports) &&
		maps.Equal(e.Labels, o.Labels) && e.ServiceAccount == o.ServiceAccount && e.Locality == o.Locality &&
		e.Network == o.Network && e.Health == o.Health && e.Weight == o.Weight && e.Workload == o.Workload && e.Origin == o.Origin
}
