package xds

import (
	"fmt"
	"sync"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/encoding"
	protoenc "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// A state-of-the-world push sends the same response, but for its nonce, to
// every connection that watches the same resources: thousands of copies of
// the same bytes. So a response is marshalled once per (type URL, version)
// and each connection appends its own nonce field (protobuf fields may come
// in any order), through a gRPC codec that passes such pre-encoded
// responses through untouched and marshals everything else as usual.

// nonceField is DiscoveryResponse.nonce's field number.
const nonceField = 5

// preEncoded is a DiscoveryResponse marshalled but for its nonce.
type preEncoded struct {
	body  []byte // shared, read-only
	nonce string
}

// codec is the server's gRPC codec: protobuf, plus preEncoded.
type codec struct{ proto encoding.CodecV2 }

func newCodec() codec { return codec{proto: encoding.GetCodecV2(protoenc.Name)} }

// Marshal hands a preEncoded body over without copying it.
func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if p, ok := v.(*preEncoded); ok {
		nonce := protowire.AppendString(protowire.AppendTag(nil, nonceField, protowire.BytesType), p.nonce)
		return mem.BufferSlice{mem.SliceBuffer(p.body), mem.SliceBuffer(nonce)}, nil
	}
	return c.proto.Marshal(v)
}

// Unmarshal decodes protobuf.
func (c codec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }

// Name is the protobuf codec's, so clients see nothing different.
func (c codec) Name() string { return protoenc.Name }

// encodedCache keeps the last few encoded responses of each type URL.
type encodedCache struct {
	mu     sync.Mutex
	byType map[string][]*encodedEntry
}

type encodedEntry struct {
	version string
	subset  string
	once    sync.Once
	body    []byte
	err     error
}

// encodedPerType is how many versions of a type stay encoded: enough for
// a push in progress while the next one starts, and for a few distinct
// sets of names.
const encodedPerType = 8

// get returns the encoding of a response of typeURL at version with
// resources, marshalling it once however many connections ask at once.
// subset is "" for a response carrying the whole set of that version, and
// names the resources of a response carrying part of it.
func (c *encodedCache) get(typeURL, version, subset string, resources []*Resource) ([]byte, error) {
	c.mu.Lock()
	if c.byType == nil {
		c.byType = map[string][]*encodedEntry{}
	}
	var e *encodedEntry
	entries := c.byType[typeURL]
	for _, x := range entries {
		if x.version == version && x.subset == subset {
			e = x
			break
		}
	}
	if e == nil {
		e = &encodedEntry{version: version, subset: subset}
		if len(entries) >= encodedPerType {
			entries = entries[1:]
		}
		c.byType[typeURL] = append(entries, e)
	}
	c.mu.Unlock()
	e.once.Do(func() {
		bodies := make([]*anypb.Any, len(resources))
		for i, r := range resources {
			bodies[i] = r.body
		}
		e.body, e.err = proto.MarshalOptions{Deterministic: true}.Marshal(&discoveryv3.DiscoveryResponse{VersionInfo: version, TypeUrl: typeURL, Resources: bodies})
		if e.err != nil {
			e.err = fmt.Errorf("encoding a %s response: %w", typeURL, e.err)
		}
	})
	return e.body, e.err
}
