package gateway

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/krt"
)

// DefaultControllerName is the controllerName of the GatewayClasses
// meshcp handles unless told otherwise.
const DefaultControllerName = "meshcp.io/gateway-controller"

// DefaultClassName is the GatewayClass meshcp handles even when no object
// of that name exists.
const DefaultClassName = "meshcp"

// Inputs are the collections the translation reads: the accepted Configs
// of each kind, as package sources provides them. A nil collection reads
// as empty.
type Inputs struct {
	GatewayClasses  krt.Collection[config.Config]
	Gateways        krt.Collection[config.Config]
	HTTPRoutes      krt.Collection[config.Config]
	GRPCRoutes      krt.Collection[config.Config]
	TCPRoutes       krt.Collection[config.Config]
	TLSRoutes       krt.Collection[config.Config]
	ReferenceGrants krt.Collection[config.Config]
	Namespaces      krt.Collection[config.Config]
	Services        krt.Collection[config.Config]
	Secrets         krt.Collection[config.Config]
}

// InputsFrom picks the inputs out of the configuration read by a source.
func InputsFrom(s *sources.Sources) Inputs {
	pick := func(gvk config.GroupVersionKind) krt.Collection[config.Config] {
		if k := s.Kind(gvk); k != nil {
			return k.Configs
		}
		return nil
	}
	return Inputs{
		GatewayClasses:  pick(schema.GatewayClass),
		Gateways:        pick(schema.KubernetesGateway),
		HTTPRoutes:      pick(schema.HTTPRoute),
		GRPCRoutes:      pick(schema.GRPCRoute),
		TCPRoutes:       pick(schema.TCPRoute),
		TLSRoutes:       pick(schema.TLSRoute),
		ReferenceGrants: pick(schema.ReferenceGrant),
		Namespaces:      pick(schema.Namespace),
		Services:        pick(schema.Service),
		Secrets:         pick(schema.Secret),
	}
}

// Options tune the translation.
type Options struct {
	// ControllerName is the controllerName of the GatewayClasses that are
	// meshcp's; empty means DefaultControllerName.
	ControllerName string
	// DefaultClass is the class handled without a GatewayClass object;
	// empty means DefaultClassName.
	DefaultClass string
	// Domain is the cluster's DNS domain, for the hosts of Services.
	Domain string
	// Debugger registers every collection for /debug/krtz.
	Debugger *krt.DebugHandler
	// Logger receives the collections' logs; nil means slog.Default().
	Logger *slog.Logger
}

// options are Options checked and completed, with the stop channel.
type options struct {
	controller   gatewayv1.GatewayController
	defaultClass string
	domain       string
	debugger     *krt.DebugHandler
	logger       *slog.Logger
	stop         <-chan struct{}
}

func (o Options) complete(stop <-chan struct{}) (*options, error) {
	out := &options{
		controller:   gatewayv1.GatewayController(o.ControllerName),
		defaultClass: o.DefaultClass,
		domain:       o.Domain,
		debugger:     o.Debugger,
		logger:       o.Logger,
		stop:         stop,
	}
	if out.controller == "" {
		out.controller = DefaultControllerName
	}
	if out.defaultClass == "" {
		out.defaultClass = DefaultClassName
	}
	if out.domain == "" {
		out.domain = "cluster.local"
	}
	if out.logger == nil {
		out.logger = slog.Default()
	}
	var errs []error
	if err := checkControllerName(string(out.controller)); err != nil {
		errs = append(errs, err)
	}
	for _, msg := range k8svalidation.IsDNS1123Subdomain(out.defaultClass) {
		errs = append(errs, fmt.Errorf("default GatewayClass %q is not a valid name: %s", out.defaultClass, msg))
	}
	if stop == nil {
		errs = append(errs, errors.New("the gateway translation needs a stop channel"))
	}
	return out, errors.Join(errs...)
}

// checkControllerName checks a controllerName has the form the Gateway
// API requires: a domain, "/", a path.
func checkControllerName(name string) error {
	domain, path, ok := strings.Cut(name, "/")
	if !ok || path == "" || len(name) > 253 {
		return fmt.Errorf("gateway controller name %q must be DOMAIN/PATH, such as %s", name, DefaultControllerName)
	}
	if msgs := k8svalidation.IsDNS1123Subdomain(domain); len(msgs) > 0 {
		return fmt.Errorf("gateway controller name %q: %q is not a domain: %s", name, domain, msgs[0])
	}
	return nil
}

// collection returns the options of a collection of the translation.
func (o *options) collection(name string) []krt.CollectionOption {
	return []krt.CollectionOption{krt.WithName(name), krt.WithStop(o.stop), krt.WithDebugging(o.debugger), krt.WithLogger(o.logger)}
}

// orEmpty returns c, or an empty synced collection standing in for a kind
// that is not read.
func (o *options) orEmpty(c krt.Collection[config.Config], name string) krt.Collection[config.Config] {
	if c != nil {
		return c
	}
	return krt.NewStaticCollection[config.Config](nil, nil, o.collection("gateway/empty/"+name)...)
}
