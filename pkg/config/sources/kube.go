package sources

import (
	"fmt"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/kube"
)

// kubeReader builds the inputs of one kind from the API server.
type kubeReader func(c *kube.Client, registry *schema.Registry, stop <-chan struct{}, opts Options) (krt.Collection[Input], error)

// kubeReaders lists how each kind is read from the API server: one typed
// informer collection per kind, converted to Configs. Go's generics need
// the types spelled out; a test checks that every kind of the registry
// with a Kubernetes type is here.
var kubeReaders = map[config.GroupVersionKind]kubeReader{
	schema.VirtualService:        readKube[*networkingv1.VirtualService],
	schema.DestinationRule:       readKube[*networkingv1.DestinationRule],
	schema.Gateway:               readKube[*networkingv1.Gateway],
	schema.ServiceEntry:          readKube[*networkingv1.ServiceEntry],
	schema.WorkloadEntry:         readKube[*networkingv1.WorkloadEntry],
	schema.WorkloadGroup:         readKube[*networkingv1.WorkloadGroup],
	schema.Sidecar:               readKube[*networkingv1.Sidecar],
	schema.AuthorizationPolicy:   readKube[*securityv1.AuthorizationPolicy],
	schema.PeerAuthentication:    readKube[*securityv1.PeerAuthentication],
	schema.RequestAuthentication: readKube[*securityv1.RequestAuthentication],
	schema.GatewayClass:          readKube[*gatewayv1.GatewayClass],
	schema.KubernetesGateway:     readKube[*gatewayv1.Gateway],
	schema.HTTPRoute:             readKube[*gatewayv1.HTTPRoute],
	schema.GRPCRoute:             readKube[*gatewayv1.GRPCRoute],
	schema.TCPRoute:              readKube[*gatewayv1.TCPRoute],
	schema.TLSRoute:              readKube[*gatewayv1.TLSRoute],
	schema.ReferenceGrant:        readKube[*gatewayv1.ReferenceGrant],
	schema.Namespace:             readKube[*corev1.Namespace],
	schema.Service:               readKube[*corev1.Service],
	schema.Pod:                   readKube[*corev1.Pod],
	schema.Secret:                readSecrets,
	schema.EndpointSlice:         readKube[*discoveryv1.EndpointSlice],
}

// readKube reads the objects of type T through a shared informer and
// converts them into inputs.
func readKube[T kube.Object](c *kube.Client, registry *schema.Registry, stop <-chan struct{}, opts Options) (krt.Collection[Input], error) {
	return readKubeObjects[T](c, registry, stop, opts, kube.Filter{}, opts.Debugger)
}

// secretFilter leaves out the Secrets that never hold a certificate and
// are often large or numerous: Helm's release records and service account
// tokens. The API server filters them, so they are never sent or held.
var secretFilter = kube.Filter{FieldSelector: "type!=helm.sh/release.v1,type!=" + string(corev1.SecretTypeServiceAccountToken)}

// readSecrets reads Secrets like readKube, except that the Secrets that
// cannot hold a certificate are not read (secretFilter), and that the
// informer's collection, which holds the Secrets as the API server sends
// them (data included), is kept out of /debug/krtz: only the inputs,
// converted to summaries without data (schema.SecretSpec), are shown.
func readSecrets(c *kube.Client, registry *schema.Registry, stop <-chan struct{}, opts Options) (krt.Collection[Input], error) {
	return readKubeObjects[*corev1.Secret](c, registry, stop, opts, secretFilter, nil)
}

// readKubeObjects reads the objects of type T that filter selects,
// registering the informer's collection with debugger (nil: not at all).
func readKubeObjects[T kube.Object](c *kube.Client, registry *schema.Registry, stop <-chan struct{}, opts Options, filter kube.Filter, debugger *krt.DebugHandler) (krt.Collection[Input], error) {
	objects, err := kube.NewCollection[T](c, filter, stop, krt.WithDebugging(debugger))
	if err != nil {
		return nil, err
	}
	var zero T
	s, ok := registry.ByObject(zero)
	if !ok {
		return nil, fmt.Errorf("no registered kind for %T", zero)
	}
	return krt.NewCollection(objects, func(ctx krt.HandlerContext, obj T) *Input {
		cfg, err := s.FromObject(obj, opts.Domain)
		if err != nil {
			return nil // cannot happen: the type was checked above
		}
		// The resource version tells which write of the object this is, as
		// kubectl get -o yaml shows it.
		return &Input{Config: cfg, Origin: "kubernetes resourceVersion " + cfg.ResourceVersion}
	}, opts.collection(stop, collectionName(s.GVK, "/inputs"))...), nil
}

// FromKubernetes reads configuration from the API server: every kind of
// the registry with a Kubernetes type, through shared informers. Istio and
// Gateway API kinds whose CRDs are missing are empty until the CRDs
// appear.
func FromKubernetes(c *kube.Client, stop <-chan struct{}, opts Options) (*Sources, error) {
	registry := opts.registry()
	s := &Sources{registry: registry}
	for _, sch := range registry.All() {
		read, ok := kubeReaders[sch.GVK]
		if !ok || !opts.wants(sch.GVK) {
			continue
		}
		inputs, err := read(c, registry, stop, opts)
		if err != nil {
			return nil, fmt.Errorf("reading %s from the API server: %w", sch.GVK, err)
		}
		s.kinds = append(s.kinds, newKind(sch, inputs, registry, opts, stop))
	}
	return s, nil
}
