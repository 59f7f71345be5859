package envoy_test

import (
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

func TestProxyFromNode(t *testing.T) {
	md := func(m map[string]any) *structpb.Struct {
		s, err := structpb.NewStruct(m)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		node    *corev3.Node
		want    envoy.Proxy
		wantErr bool
	}{
		{"sidecar by id", &corev3.Node{Id: "sidecar~10.1.0.5~reviews-v1-0.bookinfo~bookinfo.svc.cluster.local"},
			envoy.Proxy{Flavour: envoy.Sidecar, Namespace: "bookinfo", IPs: []string{"10.1.0.5"}}, false},
		{"gateway by id, labels from metadata", &corev3.Node{Id: "router~10.1.0.6~ingress-0.istio-system~istio-system.svc.cluster.local",
			Metadata: md(map[string]any{"LABELS": map[string]any{"istio": "ingressgateway"}})},
			envoy.Proxy{Flavour: envoy.Gateway, Namespace: "istio-system", IPs: []string{"10.1.0.6"}, Labels: map[string]string{"istio": "ingressgateway"}}, false},
		{"proxyless gRPC, Istio's bootstrap", &corev3.Node{Id: "sidecar~10.1.0.7~app-0.default~default.svc.cluster.local",
			Metadata: md(map[string]any{"GENERATOR": "grpc", "NAMESPACE": "prod", "INSTANCE_IPS": "10.1.0.7,fd00::7"})},
			envoy.Proxy{Flavour: envoy.ProxylessGRPC, Namespace: "prod", IPs: []string{"10.1.0.7", "fd00::7"}}, false},
		{"proxyless gRPC, any id", &corev3.Node{Id: "client-1", Metadata: md(map[string]any{"GENERATOR": "grpc"})},
			envoy.Proxy{Flavour: envoy.ProxylessGRPC, Namespace: "default"}, false},
		{"no id", &corev3.Node{}, envoy.Proxy{}, true},
		{"unknown type", &corev3.Node{Id: "waypoint~1~a.b~b.svc"}, envoy.Proxy{}, true},
	} {
		got, err := envoy.ProxyFromNode(tc.node)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		if err != nil {
			continue
		}
		if got.ID != tc.node.Id || got.Flavour != tc.want.Flavour || got.Namespace != tc.want.Namespace ||
			!slices.Equal(got.IPs, tc.want.IPs) || len(got.Labels) != len(tc.want.Labels) || got.Labels["istio"] != tc.want.Labels["istio"] {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
