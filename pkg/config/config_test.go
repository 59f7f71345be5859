package config_test

import (
	"strings"
	"testing"
	"time"

	istioapi "istio.io/api/networking/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
)

func virtualService() config.Config {
	controller := true
	return config.Config{
		Meta: config.Meta{
			GroupVersionKind:  schema.VirtualService,
			UID:               "1234-5678",
			Name:              "reviews",
			Namespace:         "bookinfo",
			Domain:            "cluster.local",
			Labels:            map[string]string{"app": "reviews"},
			Annotations:       map[string]string{"note": "x"},
			ResourceVersion:   "42",
			CreationTimestamp: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u", Controller: &controller}},
			Generation:        7,
		},
		Spec: &istioapi.VirtualService{
			Hosts: []string{"reviews"},
			Http:  []*istioapi.HTTPRoute{{Route: []*istioapi.HTTPRouteDestination{{Destination: &istioapi.Destination{Host: "reviews", Subset: "v1"}, Weight: 100}}}},
		},
	}
}

func httpRoute() config.Config {
	return config.Config{
		Meta: config.Meta{GroupVersionKind: schema.HTTPRoute, Name: "web", Namespace: "default", Generation: 3, UID: "abc"},
		Spec: &gatewayv1.HTTPRouteSpec{Hostnames: []gatewayv1.Hostname{"web.example.com"}},
		Status: &gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{{
			ControllerName: "meshcp.io/gateway-controller",
		}}}},
	}
}

func TestKeys(t *testing.T) {
	c := virtualService()
	if c.Key() != "networking.istio.io/v1/VirtualService/bookinfo/reviews" || c.ResourceName() != "bookinfo/reviews" {
		t.Errorf("Key = %s, ResourceName = %s", c.Key(), c.ResourceName())
	}
	ns := config.Config{Meta: config.Meta{GroupVersionKind: schema.Namespace, Name: "bookinfo"}}
	if ns.Key() != "core/v1/Namespace/bookinfo" || ns.ResourceName() != "bookinfo" {
		t.Errorf("cluster-scoped: Key = %s, ResourceName = %s", ns.Key(), ns.ResourceName())
	}
}

func TestEqualsAndDeepCopy(t *testing.T) {
	for _, c := range []config.Config{virtualService(), httpRoute()} {
		cp := c.DeepCopy()
		if !c.Equals(cp) {
			t.Fatalf("%s: a deep copy is not equal", c.Key())
		}
		// Changing the copy leaves the original alone.
		cp.Labels = map[string]string{"changed": "1"}
		switch spec := cp.Spec.(type) {
		case *istioapi.VirtualService:
			spec.Hosts[0] = "changed"
		case *gatewayv1.HTTPRouteSpec:
			spec.Hostnames[0] = "changed.example.com"
		}
		if c.Equals(cp) {
			t.Errorf("%s: a changed copy is still equal", c.Key())
		}
		if again := c.DeepCopy(); !again.Equals(c) {
			t.Errorf("%s: the original changed with its copy", c.Key())
		}
	}
	a, b := virtualService(), virtualService()
	b.OwnerReferences[0].UID = "other"
	if a.Equals(b) {
		t.Error("owner references are not compared")
	}
	b = virtualService()
	b.Spec = &istioapi.VirtualService{Hosts: []string{"reviews"}}
	if a.Equals(b) {
		t.Error("specs are not compared")
	}
}

// A Config written as JSON or YAML reads back equal, UID, generation, owner
// references and domain included.
func TestRoundTrips(t *testing.T) {
	r := schema.Builtin()
	svc := config.Config{
		Meta:   config.Meta{GroupVersionKind: schema.Service, Name: "reviews", Namespace: "bookinfo", UID: "s"},
		Spec:   &corev1.ServiceSpec{Selector: map[string]string{"app": "reviews"}, Ports: []corev1.ServicePort{{Name: "http", Port: 9080}}},
		Status: &corev1.ServiceStatus{},
	}
	// EndpointSlices keep their fields at the top level, not under spec.
	ready := true
	slice := config.Config{
		Meta: config.Meta{GroupVersionKind: schema.EndpointSlice, Name: "reviews-1", Namespace: "bookinfo", Labels: map[string]string{"kubernetes.io/service-name": "reviews"}},
		Spec: &schema.EndpointSliceSpec{AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}},
	}
	if data, err := slice.MarshalJSON(); err != nil || !strings.Contains(string(data), `"addressType":"IPv4"`) || strings.Contains(string(data), `"spec"`) {
		t.Errorf("an EndpointSlice is written as %s (%v), want its fields at the top level", data, err)
	}
	for _, c := range []config.Config{virtualService(), httpRoute(), svc, slice} {
		for name, encode := range map[string]func() ([]byte, error){"json": c.MarshalJSON, "yaml": c.MarshalYAML} {
			data, err := encode()
			if err != nil {
				t.Fatalf("%s %s: %v", c.Key(), name, err)
			}
			decoded := r.DecodeDocuments("roundtrip."+name, data, "ignored.local")
			if len(decoded) != 1 || decoded[0].Err != nil {
				t.Fatalf("%s %s: decoded %+v", c.Key(), name, decoded)
			}
			got := decoded[0].Config
			want := c
			if want.Domain == "" {
				want.Domain = "ignored.local"
			}
			if want.Status == nil {
				want.Status = got.Status // the kind's empty status
			}
			if !got.Equals(want) {
				t.Errorf("%s %s: round trip changed it:\n got %+v\nwant %+v\n%s", c.Key(), name, got, want, data)
			}
		}
	}
}
