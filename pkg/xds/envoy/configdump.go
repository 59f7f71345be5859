package envoy

import (
	"fmt"
	"net/http"
	"time"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/meshcp/meshcp/pkg/xds"
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

// SentSource tells what the newest connection of a node holds:
// *xds.Server is one.
type SentSource interface {
	SentTo(nodeID string) ([]xds.SentType, bool)
}

// ConfigDumpHandler serves /debug/config_dump?proxyID=ID: what the newest
// connection of node ID was sent of CDS, EDS, LDS and RDS and holds now,
// as ConfigDump lays it out, in the JSON of Envoy's admin /config_dump
// (proto field names, "@type" on every packed message). 400 without a
// proxyID, 404 when that node has no open connection.
func ConfigDumpHandler(src SentSource) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("proxyID")
		if id == "" {
			http.Error(w, "proxyID: name the node id of a connected client (see /debug/syncz)", http.StatusBadRequest)
			return
		}
		held, ok := src.SentTo(id)
		if !ok {
			http.Error(w, fmt.Sprintf("no client with node id %q is connected (or it is busy sending); /debug/syncz lists them", id), http.StatusNotFound)
			return
		}
		sent := make([]Sent, 0, len(held))
		for _, h := range held {
			s := Sent{TypeURL: h.TypeURL, Version: h.Version, At: h.At, Resources: make([]Resource, len(h.Resources))}
			for i, res := range h.Resources {
				s.Resources[i] = Resource{Name: res.Name(), Message: res.Body()}
			}
			sent = append(sent, s)
		}
		body, err := protojson.MarshalOptions{Multiline: true, Indent: "  ", UseProtoNames: true}.Marshal(ConfigDump(sent))
		if err != nil {
			http.Error(w, fmt.Sprintf("rendering the config dump of %s: %v", id, err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
