package schema

import (
	"fmt"
	"reflect"

	istiometa "istio.io/api/meta/v1alpha1"
	istionetworking "istio.io/api/networking/v1"
	istionetworkingalpha "istio.io/api/networking/v1alpha3"
	istiosecurity "istio.io/api/security/v1"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
)

// The kinds meshcp reads.
var (
	VirtualService        = istioGVK(networking, "VirtualService")
	DestinationRule       = istioGVK(networking, "DestinationRule")
	Gateway               = istioGVK(networking, "Gateway")
	ServiceEntry          = istioGVK(networking, "ServiceEntry")
	WorkloadEntry         = istioGVK(networking, "WorkloadEntry")
	WorkloadGroup         = istioGVK(networking, "WorkloadGroup")
	Sidecar               = istioGVK(networking, "Sidecar")
	AuthorizationPolicy   = istioGVK(security, "AuthorizationPolicy")
	PeerAuthentication    = istioGVK(security, "PeerAuthentication")
	RequestAuthentication = istioGVK(security, "RequestAuthentication")

	GatewayClass      = gatewayGVK("GatewayClass")
	KubernetesGateway = gatewayGVK("Gateway")
	HTTPRoute         = gatewayGVK("HTTPRoute")
	GRPCRoute         = gatewayGVK("GRPCRoute")
	TCPRoute          = gatewayGVK("TCPRoute")
	TLSRoute          = gatewayGVK("TLSRoute")
	ReferenceGrant    = gatewayGVK("ReferenceGrant")

	Namespace     = config.GroupVersionKind{Group: "", Version: "v1", Kind: "Namespace"}
	Service       = config.GroupVersionKind{Group: "", Version: "v1", Kind: "Service"}
	Pod           = config.GroupVersionKind{Group: "", Version: "v1", Kind: "Pod"}
	Secret        = config.GroupVersionKind{Group: "", Version: "v1", Kind: "Secret"}
	EndpointSlice = config.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}

	// MeshConfig is synthetic: it is read from the mesh config file, not
	// from the API server.
	MeshConfig = config.GroupVersionKind{Group: "mesh.istio.io", Version: "v1alpha1", Kind: "MeshConfig"}
)

const (
	networking = "networking.istio.io"
	security   = "security.istio.io"
)

func istioGVK(group, kind string) config.GroupVersionKind {
	return config.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
}

func gatewayGVK(kind string) config.GroupVersionKind {
	return config.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: kind}
}

type scope bool

const (
	namespaced    scope = false
	clusterScoped scope = true
)

// kind builds the schema of a kind whose typed object O holds a spec S and
// a status St; parts returns pointers to them inside the object (a nil
// status for kinds without one).
func kind[O metav1.Object, S, St any](gvk config.GroupVersionKind, plural string, sc scope, aliases []string, parts func(O) (*S, *St)) *Schema {
	return &Schema{
		GVK:            gvk,
		VersionAliases: aliases,
		Plural:         plural,
		ClusterScoped:  bool(sc),
		ObjectType:     reflect.TypeFor[O](),
		newSpec:        func() config.Spec { return new(S) },
		newStatus:      func() config.Status { return new(St) },
		fromObject: func(obj metav1.Object) (config.Spec, config.Status) {
			spec, status := parts(obj.(O))
			if status == nil {
				return spec, nil // an untyped nil: no status at all
			}
			return spec, status
		},
	}
}

// noStatus is the status type of kinds that have none.
type noStatus struct{}

var (
	istioAliases       = []string{"v1alpha3", "v1beta1"}
	istioSecurityAlias = []string{"v1beta1"}
)

// builtinSchemas returns the schema of every kind meshcp reads, without
// validators; Builtin adds them.
func builtinSchemas() []*Schema {
	return []*Schema{
		kind(VirtualService, "virtualservices", namespaced, istioAliases,
			func(o *networkingv1.VirtualService) (*istionetworking.VirtualService, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),
		kind(DestinationRule, "destinationrules", namespaced, istioAliases,
			func(o *networkingv1.DestinationRule) (*istionetworking.DestinationRule, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),
		kind(Gateway, "gateways", namespaced, istioAliases,
			func(o *networkingv1.Gateway) (*istionetworking.Gateway, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),
		kind(ServiceEntry, "serviceentries", namespaced, istioAliases,
			func(o *networkingv1.ServiceEntry) (*istionetworking.ServiceEntry, *istionetworkingalpha.ServiceEntryStatus) {
				return &o.Spec, &o.Status
			}),
		kind(WorkloadEntry, "workloadentries", namespaced, istioAliases,
			func(o *networkingv1.WorkloadEntry) (*istionetworking.WorkloadEntry, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),
		kind(WorkloadGroup, "workloadgroups", namespaced, istioAliases,
			func(o *networkingv1.WorkloadGroup) (*istionetworking.WorkloadGroup, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),
		kind(Sidecar, "sidecars", namespaced, istioAliases,
			func(o *networkingv1.Sidecar) (*istionetworking.Sidecar, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),
		kind(AuthorizationPolicy, "authorizationpolicies", namespaced, istioSecurityAlias,
			func(o *securityv1.AuthorizationPolicy) (*istiosecurity.AuthorizationPolicy, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),
		kind(PeerAuthentication, "peerauthentications", namespaced, istioSecurityAlias,
			func(o *securityv1.PeerAuthentication) (*istiosecurity.PeerAuthentication, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),
		kind(RequestAuthentication, "requestauthentications", namespaced, istioSecurityAlias,
			func(o *securityv1.RequestAuthentication) (*istiosecurity.RequestAuthentication, *istiometa.IstioStatus) {
				return &o.Spec, &o.Status
			}),

		kind(GatewayClass, "gatewayclasses", clusterScoped, []string{"v1beta1"},
			func(o *gatewayv1.GatewayClass) (*gatewayv1.GatewayClassSpec, *gatewayv1.GatewayClassStatus) {
				return &o.Spec, &o.Status
			}),
		kind(KubernetesGateway, "gateways", namespaced, []string{"v1beta1"},
			func(o *gatewayv1.Gateway) (*gatewayv1.GatewaySpec, *gatewayv1.GatewayStatus) {
				return &o.Spec, &o.Status
			}),
		kind(HTTPRoute, "httproutes", namespaced, []string{"v1beta1"},
			func(o *gatewayv1.HTTPRoute) (*gatewayv1.HTTPRouteSpec, *gatewayv1.HTTPRouteStatus) {
				return &o.Spec, &o.Status
			}),
		kind(GRPCRoute, "grpcroutes", namespaced, []string{"v1alpha2"},
			func(o *gatewayv1.GRPCRoute) (*gatewayv1.GRPCRouteSpec, *gatewayv1.GRPCRouteStatus) {
				return &o.Spec, &o.Status
			}),
		kind(TCPRoute, "tcproutes", namespaced, []string{"v1alpha2"},
			func(o *gatewayv1.TCPRoute) (*gatewayv1.TCPRouteSpec, *gatewayv1.TCPRouteStatus) {
				return &o.Spec, &o.Status
			}),
		kind(TLSRoute, "tlsroutes", namespaced, []string{"v1alpha2", "v1alpha3"},
			func(o *gatewayv1.TLSRoute) (*gatewayv1.TLSRouteSpec, *gatewayv1.TLSRouteStatus) {
				return &o.Spec, &o.Status
			}),
		kind(ReferenceGrant, "referencegrants", namespaced, []string{"v1beta1"},
			func(o *gatewayv1.ReferenceGrant) (*gatewayv1.ReferenceGrantSpec, *noStatus) { return &o.Spec, nil }),

		kind(Namespace, "namespaces", clusterScoped, nil,
			func(o *corev1.Namespace) (*corev1.NamespaceSpec, *corev1.NamespaceStatus) { return &o.Spec, &o.Status }),
		kind(Service, "services", namespaced, nil,
			func(o *corev1.Service) (*corev1.ServiceSpec, *corev1.ServiceStatus) { return &o.Spec, &o.Status }),
		kind(Pod, "pods", namespaced, nil,
			func(o *corev1.Pod) (*corev1.PodSpec, *corev1.PodStatus) { return &o.Spec, &o.Status }),
		// A Secret is held as a summary (SecretSpec): its data never enters
		// the graph.
		kind(Secret, "secrets", namespaced, nil,
			func(o *corev1.Secret) (*SecretSpec, *noStatus) { return secretSpec(o), nil }),
		kind(EndpointSlice, "endpointslices", namespaced, nil,
			func(o *discoveryv1.EndpointSlice) (*EndpointSliceSpec, *noStatus) {
				return &EndpointSliceSpec{AddressType: o.AddressType, Endpoints: o.Endpoints, Ports: o.Ports}, nil
			}),
	}
}

// EndpointSliceSpec is the spec of an EndpointSlice Config. EndpointSlices
// keep these fields at the top level, where other kinds have a spec.
type EndpointSliceSpec struct {
	AddressType discoveryv1.AddressType    `json:"addressType"`
	Endpoints   []discoveryv1.Endpoint     `json:"endpoints"`
	Ports       []discoveryv1.EndpointPort `json:"ports,omitempty"`
}

// InlineInObject makes a Config of an EndpointSlice written with these
// fields at the top level, as EndpointSlices are.
func (*EndpointSliceSpec) InlineInObject() {}

// DeepCopy returns a copy that shares no memory with s.
func (s *EndpointSliceSpec) DeepCopy() *EndpointSliceSpec {
	if s == nil {
		return nil
	}
	var o discoveryv1.EndpointSlice
	(&discoveryv1.EndpointSlice{AddressType: s.AddressType, Endpoints: s.Endpoints, Ports: s.Ports}).DeepCopyInto(&o)
	return &EndpointSliceSpec{AddressType: o.AddressType, Endpoints: o.Endpoints, Ports: o.Ports}
}

// Builtin returns the registry of every kind meshcp reads, with their
// validators.
func Builtin() *Registry {
	r, err := NewRegistry(withValidators(builtinSchemas())...)
	if err != nil {
		panic(fmt.Sprintf("schema: the builtin registry is inconsistent: %v", err))
	}
	return r
}
