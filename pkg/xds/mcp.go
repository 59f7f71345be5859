package xds

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	mcp "istio.io/api/mcp/v1alpha1"

	"github.com/meshcp/meshcp/pkg/config"
)

// MCPResource converts a Config into what config distribution sends: an
// istio.io/api/mcp/v1alpha1.Resource whose metadata is the object's
// (name "namespace/name", labels, annotations, creation time, resource
// version) and whose body is the spec. A protobuf spec (the Istio kinds)
// is packed as itself; a Go struct spec (Gateway API, Kubernetes kinds),
// which has no protobuf form, as a google.protobuf.Struct of its JSON.
func MCPResource(c config.Config) (*mcp.Resource, error) {
	body, err := specAny(c.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s: packing the spec: %w", c.Key(), err)
	}
	meta := &mcp.Metadata{
		Name:        c.ResourceName(),
		Version:     c.ResourceVersion,
		Labels:      c.Labels,
		Annotations: c.Annotations,
	}
	if !c.CreationTimestamp.IsZero() {
		meta.CreateTime = timestamppb.New(c.CreationTimestamp)
	}
	return &mcp.Resource{Metadata: meta, Body: body}, nil
}

func specAny(spec config.Spec) (*anypb.Any, error) {
	switch s := spec.(type) {
	case nil:
		return nil, nil
	case proto.Message:
		return marshalAny(s)
	default:
		raw, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		var fields map[string]any
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("a %T is not a JSON object: %w", s, err)
		}
		st, err := structpb.NewStruct(fields)
		if err != nil {
			return nil, err
		}
		return marshalAny(st)
	}
}

// marshalAny packs a message deterministically (map fields in key order),
// so equal content always has equal bytes and so an equal version.
func marshalAny(m proto.Message) (*anypb.Any, error) {
	value, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &anypb.Any{TypeUrl: "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName()), Value: value}, nil
}

// mcpResourceOf builds the shared Resource of a Config: marshalled once,
// sent to every client that watches it.
func mcpResourceOf(c config.Config) (*Resource, error) {
	r, err := MCPResource(c)
	if err != nil {
		return nil, err
	}
	body, err := marshalAny(r)
	if err != nil {
		return nil, fmt.Errorf("%s: marshalling: %w", c.Key(), err)
	}
	return NewResource(c.ResourceName(), body), nil
}
