package registry_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshcp/meshcp/pkg/registry"
)

func TestKubernetesPortProtocol(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		kube        corev1.Protocol
		appProtocol *string
		name        string
		want        registry.Protocol
	}{
		{"", nil, "http", registry.HTTP},
		{"TCP", nil, "http-api", registry.HTTP},
		{"TCP", nil, "HTTP2-x", registry.HTTP2},
		{"TCP", nil, "grpc", registry.GRPC},
		{"TCP", nil, "grpc-web", registry.GRPCWeb},
		{"TCP", nil, "grpc-web-ui", registry.GRPCWeb},
		{"TCP", nil, "grpc-api", registry.GRPC},
		{"TCP", nil, "tcp-db", registry.TCP},
		{"TCP", nil, "https", registry.HTTPS},
		{"TCP", nil, "tls-x", registry.TLS},
		{"TCP", nil, "mongo", registry.Mongo},
		{"TCP", nil, "redis", registry.Redis},
		{"TCP", nil, "mysql", registry.MySQL},
		{"TCP", nil, "web", registry.Unsupported},
		{"TCP", nil, "", registry.Unsupported},
		{"TCP", str("grpc"), "web", registry.GRPC},  // appProtocol wins over the name
		{"TCP", str("HTTP"), "grpc", registry.HTTP}, // whatever the case
		{"TCP", str("kubernetes.io/h2c"), "", registry.HTTP2},
		{"TCP", str("kubernetes.io/ws"), "", registry.HTTP},
		{"TCP", str("kubernetes.io/wss"), "", registry.HTTPS},
		{"TCP", str("example.com/custom"), "http", registry.HTTP}, // unknown appProtocol: the name decides
		{"UDP", nil, "http", registry.UDP},
		{"SCTP", nil, "http", registry.Unsupported},
	} {
		if got := registry.KubernetesPortProtocol(tc.kube, tc.appProtocol, tc.name); got != tc.want {
			app := "<nil>"
			if tc.appProtocol != nil {
				app = *tc.appProtocol
			}
			t.Errorf("protocol %s, appProtocol %s, name %q = %s, want %s", tc.kube, app, tc.name, got, tc.want)
		}
	}
}

func TestHosts(t *testing.T) {
	for _, tc := range []struct{ host, ns, want string }{
		{"reviews", "bookinfo", "reviews.bookinfo.svc.cluster.local"},
		{"reviews.bookinfo.svc.cluster.local", "x", "reviews.bookinfo.svc.cluster.local"},
		{"api.example.com", "x", "api.example.com"},
		{"*", "x", "*"},
	} {
		if got := registry.ResolveHost(tc.host, tc.ns, "cluster.local"); got != tc.want {
			t.Errorf("ResolveHost(%q, %q) = %q, want %q", tc.host, tc.ns, got, tc.want)
		}
	}
	for _, tc := range []struct {
		pattern, host string
		want          bool
	}{
		{"*", "a.b", true},
		{"a.b", "a.b", true},
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "example.com", false},
		{"api.example.com", "web.example.com", false},
	} {
		if got := registry.HostMatches(tc.pattern, tc.host); got != tc.want {
			t.Errorf("HostMatches(%q, %q) = %v", tc.pattern, tc.host, got)
		}
	}
	if got := registry.ParseLocality("us-east/zone-1/rack"); got != (registry.Locality{Region: "us-east", Zone: "zone-1", SubZone: "rack"}) {
		t.Errorf("ParseLocality = %+v", got)
	}
	if got := registry.ParseLocality("eu.z"); got != (registry.Locality{Region: "eu", Zone: "z"}) {
		t.Errorf("ParseLocality(label) = %+v", got)
	}
}
