package mesh

import (
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	meshconfig "istio.io/api/mesh/v1alpha1"
)

// MeshConfigResource is the mesh config as a krt object: the value of the
// Watcher's singleton, read by transformations with
// krt.FetchOne(ctx, watcher.AsCollection()). The embedded message is shared
// by every reader and must not be modified.
type MeshConfigResource struct {
	*meshconfig.MeshConfig
}

// ResourceName is the singleton's fixed key.
func (MeshConfigResource) ResourceName() string { return "MeshConfig" }

// Equals compares the configs with proto.Equal, so that a file rewritten
// with the same effective content does not recompute anything downstream.
// krt needs it: it refuses to compare structs embedding protobuf messages
// without one.
func (m MeshConfigResource) Equals(other MeshConfigResource) bool {
	return proto.Equal(m.MeshConfig, other.MeshConfig)
}

// MarshalJSON renders the config with protojson, as it is written in a
// mesh config file.
func (m MeshConfigResource) MarshalJSON() ([]byte, error) {
	if m.MeshConfig == nil {
		return []byte("null"), nil
	}
	return protojson.Marshal(m.MeshConfig)
}
