package kube

import (
	"context"
	"fmt"
	"reflect"

	istionetworking "istio.io/client-go/pkg/apis/networking/v1"
	istiosecurity "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// api is one of the clientsets of a Client.
type api int

const (
	kubernetesAPI api = iota
	istioAPI
	gatewayAPI
)

func (a api) String() string {
	switch a {
	case istioAPI:
		return "Istio"
	case gatewayAPI:
		return "Gateway API"
	default:
		return "Kubernetes"
	}
}

// clientset returns the clientset of c that serves a, nil when c has none.
// It is also what client-go asks whether watch-list streaming is supported.
func (a api) clientset(c *Client) any {
	var cs any
	switch a {
	case istioAPI:
		if c.istio != nil {
			cs = c.istio
		}
	case gatewayAPI:
		if c.gatewayAPI != nil {
			cs = c.gatewayAPI
		}
	default:
		if c.kube != nil {
			cs = c.kube
		}
	}
	return cs
}

// crdBacked reports whether the kinds of a are served by
// CustomResourceDefinitions, which a cluster may not have installed.
func (a api) crdBacked() bool { return a != kubernetesAPI }

// kind is what the Client knows about one supported Go type: its group,
// version and resource, its scope, and how to list and watch it.
type kind struct {
	goType     reflect.Type
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
	api        api
	// newObject returns an empty object, the type the informer expects.
	newObject func() runtime.Object
	// resource returns the list and watch calls for one namespace, "" for
	// all (cluster-scoped kinds ignore it).
	resource func(c *Client, namespace string) listWatcher
}

// String names the kind in errors and logs: "networking.istio.io/v1
// VirtualService", "v1 Pod".
func (k kind) String() string {
	return k.gvk.GroupVersion().String() + " " + k.gvk.Kind
}

// crdName is the name of the CustomResourceDefinition that serves the kind.
func (k kind) crdName() string { return k.gvr.Resource + "." + k.gvr.Group }

// listWatcher is the part of a typed client that an informer needs, with
// the list type erased.
type listWatcher interface {
	List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// typedListWatcher is the part of a generated typed client (PodInterface,
// VirtualServiceInterface...) that an informer needs.
type typedListWatcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// erasedListWatcher adapts a typedListWatcher to listWatcher.
type erasedListWatcher[L runtime.Object] struct{ typed typedListWatcher[L] }

func (e erasedListWatcher[L]) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := e.typed.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	return list, nil
}

func (e erasedListWatcher[L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return e.typed.Watch(ctx, opts)
}

// listerWatcher returns what the informer of k lists and watches through:
// the typed client of c narrowed by f, with errors naming the kind and the
// namespace.
func (k kind) listerWatcher(c *Client, f Filter) cache.ListerWatcher {
	resource := k.resource(c, f.Namespace)
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			f.applyTo(&opts)
			list, err := resource.List(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("listing %s in %q: %w", k, f.Namespace, err)
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			f.applyTo(&opts)
			w, err := resource.Watch(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("watching %s in %q: %w", k, f.Namespace, err)
			}
			return w, nil
		},
	}, k.api.clientset(c))
}

// scope says whether a kind is namespaced.
type scope bool

const (
	namespaced    scope = true
	clusterScoped scope = false
)

// newKind describes the kind of T, served as resource of gv through the
// typed client that client returns.
func newKind[T Object, L runtime.Object](a api, gv schema.GroupVersion, resource string, s scope,
	client func(c *Client, namespace string) typedListWatcher[L]) kind {
	goType := reflect.TypeFor[T]()
	return kind{
		goType:     goType,
		gvk:        gv.WithKind(goType.Elem().Name()),
		gvr:        gv.WithResource(resource),
		namespaced: bool(s),
		api:        a,
		newObject:  func() runtime.Object { return reflect.New(goType.Elem()).Interface().(runtime.Object) },
		resource: func(c *Client, namespace string) listWatcher {
			return erasedListWatcher[L]{client(c, namespace)}
		},
	}
}

// registry holds the supported kinds by the Go type of their objects
// (*corev1.Pod...). It is built once, by newRegistry, and never changed.
type registry struct {
	byType map[reflect.Type]kind
	// crdGroups are the API groups served by CustomResourceDefinitions.
	crdGroups map[string]bool
}

// supportedKinds is the registry every Client uses. It is immutable.
var supportedKinds = newRegistry()

// lookup returns the kind of objects of type t.
func (r registry) lookup(t reflect.Type) (kind, bool) {
	k, ok := r.byType[t]
	return k, ok
}

// newRegistry lists the kinds meshcp reads, each at its stable, served
// version: core/v1, discovery.k8s.io/v1, Istio's networking and security v1
// (served since Istio 1.22), and Gateway API v1 (all of them in the
// standard channel of Gateway API 1.6; ReferenceGrant is served as v1 there
// while v1beta1 is still its storage version).
func newRegistry() registry {
	core := corev1.SchemeGroupVersion
	discovery := discoveryv1.SchemeGroupVersion
	networking := istionetworking.SchemeGroupVersion
	security := istiosecurity.SchemeGroupVersion
	gateway := gatewayv1.SchemeGroupVersion
	kinds := []kind{
		// Kubernetes.
		newKind[*corev1.Pod](kubernetesAPI, core, "pods", namespaced,
			func(c *Client, ns string) typedListWatcher[*corev1.PodList] { return c.kube.CoreV1().Pods(ns) }),
		newKind[*corev1.Service](kubernetesAPI, core, "services", namespaced,
			func(c *Client, ns string) typedListWatcher[*corev1.ServiceList] { return c.kube.CoreV1().Services(ns) }),
		newKind[*corev1.Namespace](kubernetesAPI, core, "namespaces", clusterScoped,
			func(c *Client, _ string) typedListWatcher[*corev1.NamespaceList] { return c.kube.CoreV1().Namespaces() }),
		newKind[*corev1.Secret](kubernetesAPI, core, "secrets", namespaced,
			func(c *Client, ns string) typedListWatcher[*corev1.SecretList] { return c.kube.CoreV1().Secrets(ns) }),
		newKind[*corev1.ConfigMap](kubernetesAPI, core, "configmaps", namespaced,
			func(c *Client, ns string) typedListWatcher[*corev1.ConfigMapList] {
				return c.kube.CoreV1().ConfigMaps(ns)
			}),
		newKind[*corev1.Node](kubernetesAPI, core, "nodes", clusterScoped,
			func(c *Client, _ string) typedListWatcher[*corev1.NodeList] { return c.kube.CoreV1().Nodes() }),
		newKind[*discoveryv1.EndpointSlice](kubernetesAPI, discovery, "endpointslices", namespaced,
			func(c *Client, ns string) typedListWatcher[*discoveryv1.EndpointSliceList] {
				return c.kube.DiscoveryV1().EndpointSlices(ns)
			}),

		// Istio networking.
		newKind[*istionetworking.VirtualService](istioAPI, networking, "virtualservices", namespaced,
			func(c *Client, ns string) typedListWatcher[*istionetworking.VirtualServiceList] {
				return c.istio.NetworkingV1().VirtualServices(ns)
			}),
		newKind[*istionetworking.DestinationRule](istioAPI, networking, "destinationrules", namespaced,
			func(c *Client, ns string) typedListWatcher[*istionetworking.DestinationRuleList] {
				return c.istio.NetworkingV1().DestinationRules(ns)
			}),
		newKind[*istionetworking.Gateway](istioAPI, networking, "gateways", namespaced,
			func(c *Client, ns string) typedListWatcher[*istionetworking.GatewayList] {
				return c.istio.NetworkingV1().Gateways(ns)
			}),
		newKind[*istionetworking.ServiceEntry](istioAPI, networking, "serviceentries", namespaced,
			func(c *Client, ns string) typedListWatcher[*istionetworking.ServiceEntryList] {
				return c.istio.NetworkingV1().ServiceEntries(ns)
			}),
		newKind[*istionetworking.WorkloadEntry](istioAPI, networking, "workloadentries", namespaced,
			func(c *Client, ns string) typedListWatcher[*istionetworking.WorkloadEntryList] {
				return c.istio.NetworkingV1().WorkloadEntries(ns)
			}),
		newKind[*istionetworking.WorkloadGroup](istioAPI, networking, "workloadgroups", namespaced,
			func(c *Client, ns string) typedListWatcher[*istionetworking.WorkloadGroupList] {
				return c.istio.NetworkingV1().WorkloadGroups(ns)
			}),
		newKind[*istionetworking.Sidecar](istioAPI, networking, "sidecars", namespaced,
			func(c *Client, ns string) typedListWatcher[*istionetworking.SidecarList] {
				return c.istio.NetworkingV1().Sidecars(ns)
			}),

		// Istio security.
		newKind[*istiosecurity.AuthorizationPolicy](istioAPI, security, "authorizationpolicies", namespaced,
			func(c *Client, ns string) typedListWatcher[*istiosecurity.AuthorizationPolicyList] {
				return c.istio.SecurityV1().AuthorizationPolicies(ns)
			}),
		newKind[*istiosecurity.PeerAuthentication](istioAPI, security, "peerauthentications", namespaced,
			func(c *Client, ns string) typedListWatcher[*istiosecurity.PeerAuthenticationList] {
				return c.istio.SecurityV1().PeerAuthentications(ns)
			}),
		newKind[*istiosecurity.RequestAuthentication](istioAPI, security, "requestauthentications", namespaced,
			func(c *Client, ns string) typedListWatcher[*istiosecurity.RequestAuthenticationList] {
				return c.istio.SecurityV1().RequestAuthentications(ns)
			}),

		// Gateway API.
		newKind[*gatewayv1.GatewayClass](gatewayAPI, gateway, "gatewayclasses", clusterScoped,
			func(c *Client, _ string) typedListWatcher[*gatewayv1.GatewayClassList] {
				return c.gatewayAPI.GatewayV1().GatewayClasses()
			}),
		newKind[*gatewayv1.Gateway](gatewayAPI, gateway, "gateways", namespaced,
			func(c *Client, ns string) typedListWatcher[*gatewayv1.GatewayList] {
				return c.gatewayAPI.GatewayV1().Gateways(ns)
			}),
		newKind[*gatewayv1.HTTPRoute](gatewayAPI, gateway, "httproutes", namespaced,
			func(c *Client, ns string) typedListWatcher[*gatewayv1.HTTPRouteList] {
				return c.gatewayAPI.GatewayV1().HTTPRoutes(ns)
			}),
		newKind[*gatewayv1.GRPCRoute](gatewayAPI, gateway, "grpcroutes", namespaced,
			func(c *Client, ns string) typedListWatcher[*gatewayv1.GRPCRouteList] {
				return c.gatewayAPI.GatewayV1().GRPCRoutes(ns)
			}),
		newKind[*gatewayv1.TCPRoute](gatewayAPI, gateway, "tcproutes", namespaced,
			func(c *Client, ns string) typedListWatcher[*gatewayv1.TCPRouteList] {
				return c.gatewayAPI.GatewayV1().TCPRoutes(ns)
			}),
		newKind[*gatewayv1.TLSRoute](gatewayAPI, gateway, "tlsroutes", namespaced,
			func(c *Client, ns string) typedListWatcher[*gatewayv1.TLSRouteList] {
				return c.gatewayAPI.GatewayV1().TLSRoutes(ns)
			}),
		newKind[*gatewayv1.ReferenceGrant](gatewayAPI, gateway, "referencegrants", namespaced,
			func(c *Client, ns string) typedListWatcher[*gatewayv1.ReferenceGrantList] {
				return c.gatewayAPI.GatewayV1().ReferenceGrants(ns)
			}),
	}
	r := registry{byType: map[reflect.Type]kind{}, crdGroups: map[string]bool{}}
	for _, k := range kinds {
		r.byType[k.goType] = k
		if k.api.crdBacked() {
			r.crdGroups[k.gvr.Group] = true
		}
	}
	return r
}
