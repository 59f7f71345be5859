package registry

import (
	"maps"
	"slices"
)

// ServiceKind says which object declared a service.
type ServiceKind string

// The kinds of object that declare services.
const (
	KubernetesService ServiceKind = "Service"
	ServiceEntryKind  ServiceKind = "ServiceEntry"
)

// Resolution is how a client finds the endpoints of a service.
type Resolution int

const (
	// ClientSideLB: the control plane sends the endpoints (EDS) and the
	// client balances over them.
	ClientSideLB Resolution = iota
	// DNS: the client resolves every endpoint's host name and balances over
	// all the addresses (Envoy's STRICT_DNS).
	DNS
	// DNSRoundRobin: the client resolves one host name and uses the first
	// address (Envoy's LOGICAL_DNS).
	DNSRoundRobin
	// Passthrough: the client sends traffic to the address it was given
	// (headless services, ServiceEntry resolution NONE).
	Passthrough
)

// String names the resolution as ServiceEntry does.
func (r Resolution) String() string {
	switch r {
	case ClientSideLB:
		return "STATIC"
	case DNS:
		return "DNS"
	case DNSRoundRobin:
		return "DNS_ROUND_ROBIN"
	case Passthrough:
		return "NONE"
	}
	return "UNKNOWN"
}

// Port is one port of a service.
type Port struct {
	// Name is the port's name; it links the port to the endpoints' ports.
	// A Kubernetes Service with a single port may leave it empty.
	Name string `json:"name,omitempty"`
	// Number is the port clients connect to.
	Number uint32 `json:"number"`
	// Protocol is what the port speaks (see KubernetesPortProtocol).
	Protocol Protocol `json:"protocol"`
	// TargetPort is the port on the endpoints when it is a number; zero
	// when it is named (EndpointSlices then say) or the same as Number.
	TargetPort uint32 `json:"targetPort,omitempty"`
}

// Service is a host name that clients call and the ports it serves, from a
// Kubernetes Service or one host of a ServiceEntry.
type Service struct {
	// Hostname is what clients call: name.namespace.svc.<domain> for a
	// Kubernetes Service, the host itself for a ServiceEntry (possibly a
	// wildcard such as *.example.com).
	Hostname string `json:"hostname"`
	// Namespace and Name are those of the object that declares it.
	Namespace string      `json:"namespace"`
	Name      string      `json:"name"`
	Kind      ServiceKind `json:"kind"`
	// Ports are sorted by number.
	Ports []Port `json:"ports"`
	// Addresses are the virtual IPs of the service (cluster IPs, a
	// ServiceEntry's addresses).
	Addresses  []string   `json:"addresses,omitempty"`
	Resolution Resolution `json:"resolution"`
	// Selector picks the workloads behind the service: the Service's pod
	// selector, or the ServiceEntry's workloadSelector.
	Selector map[string]string `json:"selector,omitempty"`
	// Labels are those of the declaring object.
	Labels map[string]string `json:"labels,omitempty"`
	// MeshExternal marks a service outside the mesh (ServiceEntry location
	// MESH_EXTERNAL): no mutual TLS to it.
	MeshExternal bool `json:"meshExternal,omitempty"`
	// ExportTo lists the namespaces that see the service; empty means all
	// ("*"), "." the service's own namespace.
	ExportTo []string `json:"exportTo,omitempty"`
	// SubjectAltNames are the identities its endpoints' certificates may
	// present (ServiceEntry subjectAltNames).
	SubjectAltNames []string `json:"subjectAltNames,omitempty"`
}

// ServiceKey identifies a service: "namespace/hostname". Two namespaces may
// declare the same host; within one namespace a host is one service.
func ServiceKey(namespace, hostname string) string { return namespace + "/" + hostname }

// ResourceName is the service's key (see ServiceKey).
func (s Service) ResourceName() string { return ServiceKey(s.Namespace, s.Hostname) }

// GetLabelSelector is the selector, so that krt.FilterSelectsNonEmpty finds
// the services that select a workload through the collection's selector
// index.
func (s Service) GetLabelSelector() map[string]string { return s.Selector }

// Port returns the port with the given number.
func (s Service) Port(number uint32) (Port, bool) {
	for _, p := range s.Ports {
		if p.Number == number {
			return p, true
		}
	}
	return Port{}, false
}

// VisibleTo reports whether a proxy in namespace may see the service.
func (s Service) VisibleTo(namespace string) bool {
	return Visible(s.ExportTo, s.Namespace, namespace)
}

// Visible applies Istio's exportTo rules: an empty list or "*" exports to
// every namespace, "." to the object's own, and a name to that namespace.
func Visible(exportTo []string, owner, viewer string) bool {
	if len(exportTo) == 0 {
		return true
	}
	for _, e := range exportTo {
		if e == "*" || e == viewer || (e == "." && owner == viewer) {
			return true
		}
	}
	return false
}

// Equals compares services field by field.
func (s Service) Equals(o Service) bool {
	return s.Hostname == o.Hostname && s.Namespace == o.Namespace && s.Name == o.Name && s.Kind == o.Kind &&
		slices.Equal(s.Ports, o.Ports) && slices.Equal(s.Addresses, o.Addresses) && s.Resolution == o.Resolution &&
		maps.Equal(s.Selector, o.Selector) && maps.Equal(s.Labels, o.Labels) && s.MeshExternal == o.MeshExternal &&
		slices.Equal(s.ExportTo, o.ExportTo) && slices.Equal(s.SubjectAltNames, o.SubjectAltNames)
}
