package envoy

import (
	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/registry"
)

// InputsFrom reads what the builders need as it is now: the registry's
// services (endpoints are read through the registry's index when a
// builder asks), the accepted VirtualServices, DestinationRules and
// Gateways of src, and the mesh config in force. The wiring calls it on
// each push and appends derived configs (Gateway API output) to the
// routing lists before NewModel.
func InputsFrom(reg *registry.Registry, src *sources.Sources, meshConfig krt.Singleton[mesh.MeshConfigResource]) Inputs {
	in := Inputs{
		Services:         reg.SortedServices(),
		Endpoints:        reg,
		VirtualServices:  configsOf(src, schema.VirtualService),
		DestinationRules: configsOf(src, schema.DestinationRule),
		Gateways:         configsOf(src, schema.Gateway),
	}
	if meshConfig != nil {
		if mc := meshConfig.Get(); mc != nil {
			in.Mesh = mc.MeshConfig
		}
	}
	return in
}

func configsOf(src *sources.Sources, gvk config.GroupVersionKind) []config.Config {
	if k := src.Kind(gvk); k != nil {
		return k.Configs.List()
	}
	return nil
}
