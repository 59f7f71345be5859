package validation

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/meshcp/meshcp/pkg/config"
)

// fuzzKind is a kind the fuzz target builds Configs of.
type fuzzKind struct {
	name     string
	newSpec  func() any
	validate Func
	// seed is a valid spec in YAML, or "".
	seed string
}

// fuzzKinds are every kind with a validator.
var fuzzKinds = []fuzzKind{
	{"VirtualService", func() any { return new(networking.VirtualService) }, VirtualService, validVirtualService},
	{"DestinationRule", func() any { return new(networking.DestinationRule) }, DestinationRule, validDestinationRule},
	{"Gateway", func() any { return new(networking.Gateway) }, Gateway, validGateway},
	{"ServiceEntry", func() any { return new(networking.ServiceEntry) }, ServiceEntry, validServiceEntryStatic},
	{"WorkloadEntry", func() any { return new(networking.WorkloadEntry) }, WorkloadEntry, validWorkloadEntry},
	{"WorkloadGroup", func() any { return new(networking.WorkloadGroup) }, WorkloadGroup, validWorkloadGroup},
	{"Sidecar", func() any { return new(networking.Sidecar) }, Sidecar, validSidecar},
	{"AuthorizationPolicy", func() any { return new(security.AuthorizationPolicy) }, AuthorizationPolicy, validAuthorizationPolicy},
	{"PeerAuthentication", func() any { return new(security.PeerAuthentication) }, PeerAuthentication, validPeerAuthentication},
	{"RequestAuthentication", func() any { return new(security.RequestAuthentication) }, RequestAuthentication, validRequestAuthentication},
	{"GatewayClass", func() any { return new(gatewayv1.GatewayClassSpec) }, GatewayClass, "controllerName: istio.io/gateway-controller"},
	{"KubernetesGateway", func() any { return new(gatewayv1.GatewaySpec) }, KubernetesGateway, validKubernetesGateway},
	{"HTTPRoute", func() any { return new(gatewayv1.HTTPRouteSpec) }, HTTPRoute, validHTTPRoute},
	{"GRPCRoute", func() any { return new(gatewayv1.GRPCRouteSpec) }, GRPCRoute, validGRPCRoute},
	{"TCPRoute", func() any { return new(gatewayv1.TCPRouteSpec) }, TCPRoute, "rules: [{backendRefs: [{name: db, port: 5432}]}]"},
	{"TLSRoute", func() any { return new(gatewayv1.TLSRouteSpec) }, TLSRoute, "hostnames: [a.example.com]\nrules: [{backendRefs: [{name: db, port: 5432}]}]"},
	{"ReferenceGrant", func() any { return new(gatewayv1.ReferenceGrantSpec) }, ReferenceGrant, "from: [{group: '', kind: Pod, namespace: a}]\nto: [{group: '', kind: Service}]"},
	{"Namespace", func() any { return new(corev1.NamespaceSpec) }, Namespace, "finalizers: [kubernetes]"},
	{"Service", func() any { return new(corev1.ServiceSpec) }, Service, validService},
	{"Pod", func() any { return new(corev1.PodSpec) }, Pod, validPod},
	{"EndpointSlice", func() any { return new(discoveryv1.EndpointSlice) }, EndpointSlice,
		"addressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\nports: [{name: http, port: 80}]"},
}

// FuzzValidate builds Configs of every kind from JSON the fuzzer makes
// and checks that no validator panics (a recovered panic shows as an
// internal error), that every finding names a path and says something,
// and that validating is deterministic.
func FuzzValidate(f *testing.F) {
	for i, k := range fuzzKinds {
		js, err := yaml.YAMLToJSON([]byte(k.seed))
		if err != nil {
			f.Fatalf("%s seed: %v", k.name, err)
		}
		f.Add(uint8(i), "test", "default", js)
		f.Add(uint8(i), "Bad_Name", "bad.ns", []byte(`{}`))
	}
	f.Fuzz(func(t *testing.T, kind uint8, name, namespace string, data []byte) {
		k := fuzzKinds[int(kind)%len(fuzzKinds)]
		spec := k.newSpec()
		var err error
		if m, ok := spec.(proto.Message); ok {
			err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, m)
		} else {
			err = json.Unmarshal(data, spec)
		}
		if err != nil {
			t.Skip("not a spec of the kind")
		}
		c := config.Config{Meta: config.Meta{
			Name: name, Namespace: namespace,
			Labels: map[string]string{name: namespace}, Annotations: map[string]string{namespace: name},
		}, Spec: spec}
		res := k.validate(c)
		for _, fd := range append(res.Errors, res.Warnings...) {
			if strings.HasPrefix(fd.Message, internalErrorPrefix) {
				t.Fatalf("%s validator panicked on %s: %s", k.name, data, fd.Message)
			}
			if fd.Path == "" || fd.Message == "" {
				t.Fatalf("%s: finding without path or message: %+v", k.name, fd)
			}
		}
		if again := k.validate(c); !reflect.DeepEqual(res, again) {
			t.Fatalf("%s: validating twice gave different results:\n%v\n%v", k.name, res, again)
		}
	})
}

// TestFuzzSeedsAreValid keeps the fuzz seeds meaningful: each seed is a
// valid object of its kind.
func TestFuzzSeedsAreValid(t *testing.T) {
	for _, k := range fuzzKinds {
		t.Run(k.name, func(t *testing.T) {
			js, err := yaml.YAMLToJSON([]byte(k.seed))
			if err != nil {
				t.Fatal(err)
			}
			spec := k.newSpec()
			if m, ok := spec.(proto.Message); ok {
				err = protojson.Unmarshal(js, m)
			} else {
				err = json.Unmarshal(js, spec)
			}
			if err != nil {
				t.Fatal(err)
			}
			c := cfg(spec)
			if k.name == "GatewayClass" || k.name == "Namespace" {
				c.Namespace = ""
			}
			if res := k.validate(c); !res.OK() {
				t.Fatalf("seed is invalid: %v", res.Errors)
			}
		})
	}
}
