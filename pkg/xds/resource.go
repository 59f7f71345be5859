package xds

import (
	"encoding/hex"
	"hash/fnv"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Resource is one named resource ready to send. It is immutable and shared:
// the same Resource goes to every connection that watches it, so building
// it (marshalling the body) happens once per change, not once per client.
type Resource struct {
	name    string
	version string
	body    *anypb.Any
	delta   *discoveryv3.Resource
	// size is about what the resource adds to a response, in bytes.
	size int
}

// NewResource wraps a marshalled resource. Its version is a hash of the
// body, so it changes exactly when the bytes do.
func NewResource(name string, body *anypb.Any) *Resource {
	h := fnv.New64a()
	_, _ = h.Write([]byte(body.GetTypeUrl()))
	_, _ = h.Write(body.GetValue())
	return NewResourceVersion(name, hex.EncodeToString(h.Sum(nil)), body)
}

// NewResourceVersion wraps a marshalled resource with a version of the
// caller's; it must change whenever the body does.
func NewResourceVersion(name, version string, body *anypb.Any) *Resource {
	return &Resource{
		name:    name,
		version: version,
		body:    body,
		delta:   &discoveryv3.Resource{Name: name, Version: version, Resource: body},
		// The body, its field tag and length, and the name and version a
		// delta response adds.
		size: proto.Size(body) + len(name) + len(version) + 16,
	}
}

// Name is the resource name clients subscribe to.
func (r *Resource) Name() string { return r.name }

// Version identifies the content.
func (r *Resource) Version() string { return r.version }

// Body is the resource as sent.
func (r *Resource) Body() *anypb.Any { return r.body }

// Size is about how many bytes the resource adds to a response.
func (r *Resource) Size() int { return r.size }
