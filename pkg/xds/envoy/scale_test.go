package envoy_test

import (
	"fmt"
	"testing"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/registry"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// bigMesh is a model of n services with two HTTP ports, ten endpoints in
// two zones and a DestinationRule with three subsets each, and a
// VirtualService splitting each between two subsets.
func bigMesh(n int) *envoy.Model { return envoy.NewModel(bigMeshInputs(n)) }

// bigMeshInputs are the inputs of bigMesh.
func bigMeshInputs(n int) envoy.Inputs {
	var in envoy.Inputs
	var eps []registry.Endpoint
	for s := range n {
		name := fmt.Sprintf("svc%d", s)
		svc := registry.Service{Hostname: registry.KubernetesHostname(name, "ns", ""), Namespace: "ns", Name: name, Kind: registry.KubernetesService,
			Addresses: []string{fmt.Sprintf("10.96.%d.%d", s/250, s%250)},
			Ports:     []registry.Port{{Name: "http", Number: 8080, Protocol: registry.HTTP}, {Name: "grpc", Number: 9090, Protocol: registry.GRPC}}}
		in.Services = append(in.Services, svc)
		for e := range 10 {
			eps = append(eps, registry.Endpoint{Service: svc.ResourceName(), Hostname: svc.Hostname, Address: fmt.Sprintf("10.%d.%d.%d", s/250, s%250, e+1),
				Ports: map[string]uint32{"http": 8080, "grpc": 9090}, Labels: map[string]string{"version": fmt.Sprintf("v%d", e%3+1)},
				Locality: registry.Locality{Region: "r", Zone: fmt.Sprintf("z%d", e%2)}, Weight: 1, Origin: "bench"})
		}
		dr := &networking.DestinationRule{Host: name}
		for v := 1; v <= 3; v++ {
			dr.Subsets = append(dr.Subsets, &networking.Subset{Name: fmt.Sprintf("v%d", v), Labels: map[string]string{"version": fmt.Sprintf("v%d", v)}})
		}
		in.DestinationRules = append(in.DestinationRules, config.Config{Meta: config.Meta{GroupVersionKind: schema.DestinationRule, Name: name, Namespace: "ns"}, Spec: dr})
		in.VirtualServices = append(in.VirtualServices, config.Config{Meta: config.Meta{GroupVersionKind: schema.VirtualService, Name: name, Namespace: "ns"},
			Spec: &networking.VirtualService{Hosts: []string{name}, Http: []*networking.HTTPRoute{{Route: []*networking.HTTPRouteDestination{
				{Destination: &networking.Destination{Host: name, Subset: "v1"}, Weight: 90},
				{Destination: &networking.Destination{Host: name, Subset: "v2"}, Weight: 10},
			}}}}})
	}
	in.Endpoints = envoy.IndexEndpoints(eps)
	return in
}

// A sidecar that sees 500 services (4000 clusters, 5000 endpoints) still
// gets each type in one response under gRPC's 4 MiB, and every resource
// validates.
func TestResponsesFitAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("scale test")
	}
	m := bigMesh(500)
	p := &envoy.Proxy{ID: "sidecar", Kind: envoy.Sidecar, Namespace: "ns"}
	for _, typ := range envoy.Types() {
		res := envoy.Builders{}.Generate(envoy.Request{Proxy: p, TypeURL: typ}, m)
		size := res.Size()
		t.Logf("%s: %d resources, %d bytes", typ, len(res.Resources), size)
		if size > maxResponse {
			t.Errorf("%s: %d bytes, over 4 MiB", typ, size)
		}
		for _, r := range res.Resources[:min(len(res.Resources), 50)] {
			if err := envoy.Validate(r.Message); err != nil {
				t.Errorf("%s %s: %v", typ, r.Name, err)
			}
		}
	}
}

// BenchmarkSidecarPush generates everything a sidecar of a 500-service
// mesh gets, one type per sub-benchmark: the cost of a full push.
func BenchmarkSidecarPush(b *testing.B) {
	m := bigMesh(500)
	p := &envoy.Proxy{ID: "sidecar", Kind: envoy.Sidecar, Namespace: "ns"}
	for _, typ := range envoy.Types() {
		b.Run(typ[len("type.googleapis.com/envoy.config."):], func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				envoy.Builders{}.Generate(envoy.Request{Proxy: p, TypeURL: typ}, m)
			}
		})
	}
}
