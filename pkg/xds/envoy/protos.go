package envoy

import (
	"fmt"
	"strconv"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// mustAny packs a message the builders made, deterministically (map
// entries in key order), so that equal configuration always has equal
// bytes and so an equal version: a rebuilt resource that did not change is
// not sent again. Packing only fails for a message that cannot be
// marshalled, which would be a bug here.
func mustAny(m proto.Message) *anypb.Any {
	a := &anypb.Any{}
	if err := anypb.MarshalFrom(a, m, proto.MarshalOptions{Deterministic: true}); err != nil {
		panic(fmt.Sprintf("envoy: packing %T: %v", m, err))
	}
	return a
}

func wrapUInt32(n uint32) *wrapperspb.UInt32Value { return wrapperspb.UInt32(n) }

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// cloneRoute copies a route, so one translated action can serve several
// matches.
func cloneRoute(r *routev3.Route) *routev3.Route { return proto.Clone(r).(*routev3.Route) }

func boolFalse() *wrapperspb.BoolValue { return wrapperspb.Bool(false) }

func zeroDuration() *durationpb.Duration { return durationpb.New(0) }
