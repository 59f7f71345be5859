package envoy

import (
	"time"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Sent is what a client was last sent of one type: for
// /debug/config_dump, which the xDS server answers from what it keeps per
// connection.
type Sent struct {
	TypeURL   string
	Version   string
	At        time.Time
	Resources []Resource
}

// ConfigDump renders what a client was sent in the layout of Envoy's own
// /config_dump: one ClustersConfigDump, EndpointsConfigDump,
// ListenersConfigDump and RoutesConfigDump, in that order, each resource a
// dynamic entry with its version and time. Types not sent are left out.
func ConfigDump(sent []Sent) *adminv3.ConfigDump {
	byType := map[string]Sent{}
	for _, s := range sent {
		byType[s.TypeURL] = s
	}
	out := &adminv3.ConfigDump{}
	add := func(m proto.Message) { out.Configs = append(out.Configs, mustAny(m)) }
	for _, typ := range Types() {
		s, ok := byType[typ]
		if !ok {
			continue
		}
		at := timestamppb.New(s.At)
		switch typ {
		case ClusterType:
			d := &adminv3.ClustersConfigDump{VersionInfo: s.Version}
			for _, r := range s.Resources {
				d.DynamicActiveClusters = append(d.DynamicActiveClusters, &adminv3.ClustersConfigDump_DynamicCluster{
					VersionInfo: s.Version, Cluster: packed(r.Message), LastUpdated: at})
			}
			add(d)
		case EndpointType:
			d := &adminv3.EndpointsConfigDump{}
			for _, r := range s.Resources {
				d.DynamicEndpointConfigs = append(d.DynamicEndpointConfigs, &adminv3.EndpointsConfigDump_DynamicEndpointConfig{
					VersionInfo: s.Version, EndpointConfig: packed(r.Message), LastUpdated: at})
			}
			add(d)
		case ListenerType:
			d := &adminv3.ListenersConfigDump{VersionInfo: s.Version}
			for _, r := range s.Resources {
				d.DynamicListeners = append(d.DynamicListeners, &adminv3.ListenersConfigDump_DynamicListener{
					Name:        r.Name,
					ActiveState: &adminv3.ListenersConfigDump_DynamicListenerState{VersionInfo: s.Version, Listener: packed(r.Message), LastUpdated: at},
				})
			}
			add(d)
		case RouteType:
			d := &adminv3.RoutesConfigDump{}
			for _, r := range s.Resources {
				d.DynamicRouteConfigs = append(d.DynamicRouteConfigs, &adminv3.RoutesConfigDump_DynamicRouteConfig{
					VersionInfo: s.Version, RouteConfig: packed(r.Message), LastUpdated: at})
			}
			add(d)
		}
	}
	return out
}

// packed packs a resource, reusing it when it already is an Any.
func packed(m proto.Message) *anypb.Any {
	if a, ok := m.(*anypb.Any); ok {
		return a
	}
	return mustAny(m)
}
