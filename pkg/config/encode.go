package config

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// ObjectMeta returns the metadata as Kubernetes writes it.
func (m Meta) ObjectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              m.Name,
		Namespace:         m.Namespace,
		UID:               types.UID(m.UID),
		ResourceVersion:   m.ResourceVersion,
		Generation:        m.Generation,
		CreationTimestamp: metav1.NewTime(m.CreationTimestamp),
		Labels:            m.Labels,
		Annotations:       m.Annotations,
		OwnerReferences:   m.OwnerReferences,
	}
}

// MetaFromObject takes the metadata of a Kubernetes object; the kind and
// domain come from the caller.
func MetaFromObject(gvk GroupVersionKind, o metav1.Object, domain string) Meta {
	m := Meta{
		GroupVersionKind:  gvk,
		UID:               string(o.GetUID()),
		Name:              o.GetName(),
		Namespace:         o.GetNamespace(),
		Domain:            domain,
		Labels:            o.GetLabels(),
		Annotations:       o.GetAnnotations(),
		ResourceVersion:   o.GetResourceVersion(),
		OwnerReferences:   o.GetOwnerReferences(),
		Generation:        o.GetGeneration(),
		CreationTimestamp: o.GetCreationTimestamp().Time,
	}
	return m
}

// jsonObject is the Kubernetes shape of a Config. Domain, which Kubernetes
// objects do not carry, is kept beside the metadata so a round trip keeps
// it.
type jsonObject struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Domain     string            `json:"domain,omitempty"`
	Spec       json.RawMessage   `json:"spec,omitempty"`
	Status     json.RawMessage   `json:"status,omitempty"`
}

// MarshalJSON writes the Config as a Kubernetes object (apiVersion, kind,
// metadata, spec, status). Protobuf specs are written with protojson, as
// Istio's users write them.
func (c Config) MarshalJSON() ([]byte, error) {
	spec, err := marshalValue(c.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s: writing spec: %w", c.Key(), err)
	}
	status, err := marshalValue(c.Status)
	if err != nil {
		return nil, fmt.Errorf("%s: writing status: %w", c.Key(), err)
	}
	obj := jsonObject{
		APIVersion: c.GroupVersionKind.APIVersion(),
		Kind:       c.GroupVersionKind.Kind,
		Metadata:   c.ObjectMeta(),
		Domain:     c.Domain,
		Spec:       spec,
		Status:     status,
	}
	if _, inline := c.Spec.(InlineSpec); !inline || len(spec) == 0 {
		return json.Marshal(obj)
	}
	// The spec's fields go beside apiVersion, kind and metadata.
	obj.Spec = nil
	head, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(head, &fields); err != nil {
		return nil, err
	}
	var specFields map[string]json.RawMessage
	if err := json.Unmarshal(spec, &specFields); err != nil {
		return nil, fmt.Errorf("%s: an inline spec must be a JSON object: %w", c.Key(), err)
	}
	for k, v := range specFields {
		if _, taken := fields[k]; taken {
			return nil, fmt.Errorf("%s: inline spec field %q collides with the object's own", c.Key(), k)
		}
		fields[k] = v
	}
	return json.Marshal(fields)
}

// InlineSpec is implemented by the specs of kinds whose Kubernetes objects
// keep their fields at the top level, not under "spec" (an EndpointSlice's
// addressType, endpoints and ports), so a Config of such a kind is written
// in the shape the API server and kubectl use, and reads back the same.
type InlineSpec interface {
	// InlineInObject marks the spec; it does nothing.
	InlineInObject()
}

// MarshalYAML writes the Config as Kubernetes YAML.
func (c Config) MarshalYAML() ([]byte, error) {
	j, err := c.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

func marshalValue(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if m, ok := v.(proto.Message); ok {
		return protojson.Marshal(m)
	}
	return json.Marshal(v)
}
