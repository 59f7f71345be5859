package gateway

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// GatewayClass is a GatewayClass as Gateways see it: whether its
// controller is meshcp, and if so whether it is accepted.
type GatewayClass struct {
	Name string
	// Ours says the class names meshcp's controller.
	Ours bool
	// Accepted says meshcp accepted the class; Message says why not.
	Accepted bool
	Message  string
	// Builtin marks the default class, which works without an object.
	Builtin bool
}

// ResourceName keys a class by its name, like the object.
func (c GatewayClass) ResourceName() string { return c.Name }

// supportedFeatures are the Gateway API features the translation
// implements, sorted by name as status.supportedFeatures must be.
var supportedFeatures = sortedFeatures(
	features.SupportGateway,
	features.SupportGatewayPort8080,
	features.SupportHTTPRoute,
	features.SupportHTTPRouteBackendRequestHeaderModification,
	features.SupportHTTPRouteBackendTimeout,
	features.SupportHTTPRouteCORS,
	features.SupportHTTPRouteHostRewrite,
	features.SupportHTTPRouteMethodMatching,
	features.SupportHTTPRouteNamedRouteRule,
	features.SupportHTTPRouteParentRefPort,
	features.SupportHTTPRoutePathRedirect,
	features.SupportHTTPRoutePathRewrite,
	features.SupportHTTPRoutePortRedirect,
	features.SupportHTTPRouteQueryParamMatching,
	features.SupportHTTPRouteRequestMirror,
	features.SupportHTTPRouteRequestMultipleMirrors,
	features.SupportHTTPRouteRequestPercentageMirror,
	features.SupportHTTPRouteRequestTimeout,
	features.SupportHTTPRouteResponseHeaderModification,
	features.SupportHTTPRouteRetry,
	features.SupportHTTPRouteSchemeRedirect,
	features.SupportHTTPRoute303RedirectStatusCode,
	features.SupportHTTPRoute307RedirectStatusCode,
	features.SupportHTTPRoute308RedirectStatusCode,
	features.SupportGRPCRoute,
	features.SupportReferenceGrant,
	features.SupportTCPRoute,
	features.SupportTLSRoute,
	features.SupportTLSRouteModeTerminate,
)

// newGatewayClasses builds "gateway/GatewayClasses": every GatewayClass
// object, ours or not, joined with the default class, which stands in
// when no object of its name exists (file mode, a fresh cluster). An
// object always wins over the default, so a class of that name that
// another controller owns is not taken over. The status collection holds
// the status of the classes that are ours.
func newGatewayClasses(classes krt.Collection[config.Config], o *options) (krt.Collection[krt.ObjectWithStatus[config.Config, gatewayv1.GatewayClassStatus]], krt.Collection[GatewayClass]) {
	statuses, objects := krt.NewStatusCollection(classes, func(ctx krt.HandlerContext, c config.Config) (*gatewayv1.GatewayClassStatus, *GatewayClass) {
		spec, ok := c.Spec.(*gatewayv1.GatewayClassSpec)
		if !ok {
			return nil, nil
		}
		class := &GatewayClass{Name: c.Name, Ours: spec.ControllerName == o.controller}
		if !class.Ours {
			return nil, class
		}
		accepted := condition(gatewayv1.GatewayClassConditionStatusAccepted, true, gatewayv1.GatewayClassReasonAccepted,
			"Handled by "+string(o.controller), c.Generation)
		if ref := spec.ParametersRef; ref != nil {
			class.Message = fmt.Sprintf("parametersRef %s %q is not supported: meshcp takes no parameters", groupKind(string(ref.Group), string(ref.Kind)), ref.Name)
			accepted = condition(gatewayv1.GatewayClassConditionStatusAccepted, false, gatewayv1.GatewayClassReasonInvalidParameters, class.Message, c.Generation)
		}
		class.Accepted = accepted.Status == "True"
		status := &gatewayv1.GatewayClassStatus{Conditions: []metav1.Condition{accepted}}
		if class.Accepted {
			status.SupportedFeatures = slices.Clone(supportedFeatures)
		}
		return status, class
	}, o.collection("gateway/GatewayClassObjects")...)
	builtin := krt.NewStaticCollection[GatewayClass](nil, []GatewayClass{{Name: o.defaultClass, Ours: true, Accepted: true, Builtin: true}},
		o.collection("gateway/DefaultGatewayClass")...)
	return statuses, krt.JoinCollection([]krt.Collection[GatewayClass]{objects, builtin}, o.collection("gateway/GatewayClasses")...)
}

func sortedFeatures(names ...features.FeatureName) []gatewayv1.SupportedFeature {
	out := make([]gatewayv1.SupportedFeature, len(names))
	for i, n := range names {
		out[i] = gatewayv1.SupportedFeature{Name: gatewayv1.FeatureName(n)}
	}
	slices.SortFunc(out, func(a, b gatewayv1.SupportedFeature) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return out
}
