package envoy

import (
	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/registry"
)

// Sources are the live collections the builders' inputs come from: the
// service registry, the configuration read, configs derived in the graph,
// and the mesh config.
type Sources struct {
	Registry *registry.Registry
	// Configs is the configuration read (accepted objects of each kind).
	Configs *sources.Sources
	// Derived are collections of Istio configs derived inside the graph,
	// of any of the kinds the builders read: the Gateway API translation's
	// Gateways and VirtualServices. They are read beside Configs; a config
	// read wins a kind and name both hold, as in config distribution.
	Derived []krt.Collection[config.Config]
	// Mesh is the mesh config in force; nil means Istio's defaults.
	Mesh krt.Singleton[mesh.MeshConfigResource]
	// Domain resolves short host names in routing config (see Inputs).
	Domain string
}

// routingKinds are the config kinds the builders read.
var routingKinds = []config.GroupVersionKind{schema.VirtualService, schema.DestinationRule, schema.Gateway}

// InputsFrom reads what the builders need as it is now: the registry's
// services (endpoints are read through the registry's index when a
// builder asks), the accepted VirtualServices, DestinationRules and
// Gateways, read and derived, and the mesh config in force. The wiring
// (Serve) calls it once per push.
func InputsFrom(src Sources) Inputs {
	in := Inputs{Domain: src.Domain}
	if src.Registry != nil {
		in.Services = src.Registry.SortedServices()
		in.Endpoints = src.Registry
	}
	byKind := map[config.GroupVersionKind][]config.Config{}
	seen := map[string]bool{}
	add := func(c config.Config) {
		key := c.GroupVersionKind.String() + "/" + c.ResourceName()
		if seen[key] {
			return
		}
		seen[key] = true
		byKind[c.GroupVersionKind] = append(byKind[c.GroupVersionKind], c)
	}
	for _, gvk := range routingKinds {
		if src.Configs == nil {
			break
		}
		if k := src.Configs.Kind(gvk); k != nil {
			for _, c := range k.Configs.List() {
				add(c)
			}
		}
	}
	for _, d := range src.Derived {
		for _, c := range d.List() {
			add(c)
		}
	}
	in.VirtualServices = byKind[schema.VirtualService]
	in.DestinationRules = byKind[schema.DestinationRule]
	in.Gateways = byKind[schema.Gateway]
	if src.Mesh != nil {
		if mc := src.Mesh.Get(); mc != nil {
			in.Mesh = mc.MeshConfig
		}
	}
	return in
}
