package xds

import (
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
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
		want    Proxy
		wantErr bool
	}{
		{"sidecar by id", &corev3.Node{Id: "sidecar~10.1.0.5~reviews-v1-0.bookinfo~bookinfo.svc.cluster.local"},
			Proxy{Kind: ClientSidecar, Namespace: "bookinfo", IPs: []string{"10.1.0.5"}}, false},
		{"gateway by id, labels from metadata", &corev3.Node{Id: "router~10.1.0.6~ingress-0.istio-system~istio-system.svc.cluster.local",
			Metadata: md(map[string]any{"LABELS": map[string]any{"istio": "ingressgateway"}})},
			Proxy{Kind: ClientRouter, Namespace: "istio-system", IPs: []string{"10.1.0.6"}, Labels: map[string]string{"istio": "ingressgateway"}}, false},
		{"proxyless gRPC, Istio's bootstrap", &corev3.Node{Id: "sidecar~10.1.0.7~app-0.default~default.svc.cluster.local",
			Metadata: md(map[string]any{"GENERATOR": "grpc", "NAMESPACE": "prod", "INSTANCE_IPS": "10.1.0.7,fd00::7"})},
			Proxy{Kind: ClientGRPC, Namespace: "prod", IPs: []string{"10.1.0.7", "fd00::7"}}, false},
		{"proxyless gRPC, any id, any case", &corev3.Node{Id: "client-1", Metadata: md(map[string]any{"GENERATOR": "GRPC"})},
			Proxy{Kind: ClientGRPC, Namespace: "default"}, false},
		{"a plain id is a sidecar", &corev3.Node{Id: "e2e-watch"}, Proxy{Kind: ClientSidecar, Namespace: "default"}, false},
		{"no id", &corev3.Node{}, Proxy{}, true},
		{"unknown type", &corev3.Node{Id: "waypoint~1~a.b~b.svc"}, Proxy{}, true},
	} {
		got, err := ProxyFromNode(tc.node)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		if err != nil {
			continue
		}
		if got.ID != tc.node.Id || got.Kind != tc.want.Kind || got.Namespace != tc.want.Namespace || got.Node != tc.node ||
			!slices.Equal(got.IPs, tc.want.IPs) || len(got.Labels) != len(tc.want.Labels) || got.Labels["istio"] != tc.want.Labels["istio"] {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// FuzzProxyFromNode reads arbitrary nodes: a node is read as a client of
// a known kind in some namespace, or refused with an error; it never
// panics.
func FuzzProxyFromNode(f *testing.F) {
	seed := func(n *corev3.Node) []byte {
		b, _ := proto.Marshal(n)
		return b
	}
	md, _ := structpb.NewStruct(map[string]any{"GENERATOR": "grpc", "NAMESPACE": "prod", "LABELS": map[string]any{"app": "x"}, "INSTANCE_IPS": "10.0.0.1,"})
	f.Add(seed(&corev3.Node{Id: "sidecar~10.1.0.5~reviews-v1-0.bookinfo~bookinfo.svc.cluster.local"}))
	f.Add(seed(&corev3.Node{Id: "router~~~", Metadata: md}))
	f.Add(seed(&corev3.Node{Id: "waypoint~1~a.b~b.svc"}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var n corev3.Node
		if proto.Unmarshal(data, &n) != nil {
			return
		}
		p, err := ProxyFromNode(&n)
		if err != nil {
			return
		}
		if p.ID != n.GetId() || p.ID == "" || p.Namespace == "" || (p.Kind != ClientSidecar && p.Kind != ClientRouter && p.Kind != ClientGRPC) {
			t.Fatalf("node %v read as %+v", &n, p)
		}
	})
}
