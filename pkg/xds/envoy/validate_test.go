package envoy_test

import (
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// maxResponse is gRPC's default limit on a received message.
const maxResponse = 4 << 20

// Every resource every flavour gets, for every type, passes
// go-control-plane's validation, including what Any fields pack, and each
// response fits in 4 MiB.
func TestEveryResourceValidates(t *testing.T) {
	w := loadWorld(t, "mesh", nil)
	m := w.model()
	grpcNames := map[string][]string{
		envoy.ListenerType: {"reviews.default.svc.cluster.local:9080", "ratings:9080", "productpage.web:9080", "db.default.svc:5432"},
		envoy.RouteType:    {"reviews.default.svc.cluster.local:9080", "ratings:9080", "productpage.web:9080"},
	}
	for _, p := range []*envoy.Proxy{sidecar, grpcApp, ingress} {
		for _, typ := range envoy.Types() {
			req := envoy.Request{Proxy: p, TypeURL: typ, Names: grpcNames[typ]}
			if p.Kind != envoy.ProxylessGRPC {
				req.Names = nil
			}
			if p.Kind == envoy.ProxylessGRPC && (typ == envoy.ClusterType || typ == envoy.EndpointType) {
				req.Names = envoy.BuildClusters(p, m, nil).Names()
			}
			res := envoy.Builders{}.Generate(req, m)
			if len(res.Resources) == 0 {
				t.Errorf("%s %s: nothing generated", p.Kind, typ)
			}
			for _, r := range res.Resources {
				if err := envoy.Validate(r.Message); err != nil {
					t.Errorf("%s %s %s is invalid: %v\n%s", p.Kind, typ, r.Name, err, asJSON(r.Message))
				}
			}
			if size := res.Size(); size > maxResponse {
				t.Errorf("%s %s: %d bytes, over 4 MiB", p.Kind, typ, size)
			}
			for _, warn := range res.Warnings {
				t.Logf("%s %s: %s", p.Kind, typ, warn)
			}
		}
	}
}

// Validate looks inside Any fields: a listener whose packed connection
// manager breaks a rule fails, and so does an Any of an unknown type.
func TestValidateUnpacksAny(t *testing.T) {
	bad := &hcmv3.HttpConnectionManager{} // no stat_prefix, no route specifier
	packed, err := anypb.New(bad)
	if err != nil {
		t.Fatal(err)
	}
	l := &listenerv3.Listener{Name: "x:1", ApiListener: &listenerv3.ApiListener{ApiListener: packed}}
	if err := l.ValidateAll(); err != nil {
		t.Fatalf("the listener alone should pass: %v", err)
	}
	err = envoy.Validate(l)
	if err == nil || !strings.Contains(err.Error(), "HttpConnectionManager") || !strings.Contains(err.Error(), "StatPrefix") {
		t.Errorf("Validate = %v, want the packed HttpConnectionManager's StatPrefix error", err)
	}
	c := &clusterv3.Cluster{Name: "c", TypedExtensionProtocolOptions: map[string]*anypb.Any{"x": {TypeUrl: "type.googleapis.com/no.such.Type"}}}
	if err := envoy.Validate(c); err == nil || !strings.Contains(err.Error(), "no.such.Type") {
		t.Errorf("Validate = %v, want an unknown-type error", err)
	}
	s, _ := structpb.NewStruct(map[string]any{"a": 1})
	if err := envoy.Validate(s); err != nil {
		t.Errorf("a message without rules: %v", err)
	}
}
