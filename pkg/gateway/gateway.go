package gateway

import (
	"fmt"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/validation"
	"github.com/meshcp/meshcp/pkg/krt"
)

// gatewayInputs are what the Gateway transformation reads besides the
// Gateway itself.
type gatewayInputs struct {
	classes        krt.Collection[GatewayClass]
	namespaces     krt.Collection[config.Config]
	secrets        krt.Collection[config.Config]
	grants         krt.Index[string, config.Config]
	services       krt.Index[string, config.Config]
	serviceConfigs krt.Collection[config.Config]
}

// newGateways builds "gateway/Gateways": for every Gateway API Gateway of
// one of our classes, one Gateway per listener and the Gateway's status
// (without attachedRoutes, which the routes decide; see
// newGatewayStatuses).
func newGateways(gateways krt.Collection[config.Config], in *gatewayInputs, o *options) (krt.Collection[krt.ObjectWithStatus[config.Config, gatewayv1.GatewayStatus]], krt.Collection[Gateway]) {
	return krt.NewStatusManyCollection(gateways, func(ctx krt.HandlerContext, gw config.Config) (*gatewayv1.GatewayStatus, []Gateway) {
		return translateGateway(ctx, gw, in, o)
	}, o.collection("gateway/Gateways")...)
}

// listenerResult is what checking one listener found.
type listenerResult struct {
	l         *gatewayv1.Listener
	hostname  string
	tlsMode   gatewayv1.TLSModeType
	supported bool // the protocol is one meshcp translates
	// unsupported says why an accepted protocol's settings cannot be
	// honoured (UnsupportedValue); empty when they can.
	unsupported string
	kinds       []string
	badKinds    []string
	namespaces  AllowedNamespaces
	certs       certificates
	conflict    gatewayv1.ListenerConditionReason
	conflictMsg string
}

// accepted reports whether the listener is accepted.
func (r *listenerResult) accepted() bool {
	return r.supported && r.unsupported == "" && r.conflict == ""
}

// programmable reports whether the listener can be configured: accepted,
// with its certificates resolved.
func (r *listenerResult) programmable() bool { return r.accepted() && r.certs.reason == "" }

// translateGateway translates one Gateway API Gateway; see newGateways.
// Gateways of classes that are not ours produce nothing and no status.
func translateGateway(ctx krt.HandlerContext, gw config.Config, in *gatewayInputs, o *options) (*gatewayv1.GatewayStatus, []Gateway) {
	spec, ok := gw.Spec.(*gatewayv1.GatewaySpec)
	if !ok {
		return nil, nil
	}
	class := krt.FetchOne(ctx, in.classes, krt.FilterKey(string(spec.GatewayClassName)))
	if class == nil || !class.Ours {
		return nil, nil
	}
	results := make([]*listenerResult, len(spec.Listeners))
	for i := range spec.Listeners {
		results[i] = checkListener(ctx, gw, &spec.Listeners[i], in)
	}
	markConflicts(results)
	addrs := gatewayAddresses(ctx, gw, spec, in, o)
	// A Gateway that cannot be accepted whatever its listeners programs
	// none of them.
	blocked := addrs.unsupported
	if !class.Accepted {
		blocked = fmt.Sprintf("GatewayClass %q is not accepted", class.Name)
	}

	gen := gw.Generation
	parent := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
	status := &gatewayv1.GatewayStatus{Addresses: addrs.addresses}
	out := make([]Gateway, 0, len(results))
	var notValid, unresolved, programmed []string
	for _, r := range results {
		name := string(r.l.Name)
		ls, valid := listenerStatus(r, blocked, gen)
		status.Listeners = append(status.Listeners, ls)
		if !r.programmable() {
			notValid = append(notValid, name)
		}
		if !conditionTrue(ls.Conditions, string(gatewayv1.ListenerConditionResolvedRefs)) {
			unresolved = append(unresolved, name)
		}
		g := Gateway{Parent: parent, Valid: valid, ParentInfo: ParentInfo{
			SectionName: r.l.Name, Port: r.l.Port, Protocol: r.l.Protocol, TLSMode: r.tlsMode, Hostname: r.hostname,
			Kinds: r.kinds, Namespaces: r.namespaces,
		}}
		if valid {
			cfg := istioGateway(gw, r)
			g.Config = &cfg
			g.ParentInfo.IstioGateway = cfg.Namespace + "/" + cfg.Name
			programmed = append(programmed, name)
		}
		out = append(out, g)
	}
	status.Conditions = gatewayConditions(class, addrs, len(results), notValid, unresolved, programmed, gen)
	return status, out
}

// gatewayConditions are the Gateway's Accepted, Programmed and
// ResolvedRefs conditions.
func gatewayConditions(class *GatewayClass, addrs addressResult, listeners int, notValid, unresolved, programmed []string, gen int64) []metav1.Condition {
	var accepted metav1.Condition
	switch {
	case !class.Accepted:
		accepted = condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonInvalid,
			fmt.Sprintf("GatewayClass %q is not accepted: %s", class.Name, class.Message), gen)
	case addrs.unsupported != "":
		accepted = condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonUnsupportedAddress, addrs.unsupported, gen)
	case len(notValid) == listeners:
		accepted = condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonListenersNotValid,
			"no listener can be configured: "+strings.Join(notValid, ", "), gen)
	case len(notValid) > 0:
		accepted = condition(gatewayv1.GatewayConditionAccepted, true, gatewayv1.GatewayReasonListenersNotValid,
			fmt.Sprintf("listeners %s cannot be configured; the others are accepted", strings.Join(notValid, ", ")), gen)
	default:
		accepted = condition(gatewayv1.GatewayConditionAccepted, true, gatewayv1.GatewayReasonAccepted, "Resource accepted", gen)
	}
	var prog metav1.Condition
	switch {
	case accepted.Status != metav1.ConditionTrue:
		prog = condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonInvalid, accepted.Message, gen)
	case addrs.reason != "":
		prog = condition(gatewayv1.GatewayConditionProgrammed, false, addrs.reason, addrs.message, gen)
	case len(programmed) == 0:
		prog = condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonInvalid, "no listener is programmed", gen)
	default:
		prog = condition(gatewayv1.GatewayConditionProgrammed, true, gatewayv1.GatewayReasonProgrammed, "Resource programmed", gen)
	}
	resolved := condition(gatewayv1.GatewayConditionResolvedRefs, true, gatewayv1.GatewayReasonResolvedRefs, "All references resolved", gen)
	if len(unresolved) > 0 {
		resolved = condition(gatewayv1.GatewayConditionResolvedRefs, false, gatewayv1.GatewayReasonListenersNotResolved,
			"listeners with unresolved references: "+strings.Join(unresolved, ", "), gen)
	}
	return []metav1.Condition{accepted, prog, resolved}
}

// checkListener checks one listener: its protocol, the route kinds it
// allows, the namespaces it takes routes from and its certificates.
func checkListener(ctx krt.HandlerContext, gw config.Config, l *gatewayv1.Listener, in *gatewayInputs) *listenerResult {
	r := &listenerResult{l: l}
	if l.Hostname != nil {
		r.hostname = string(*l.Hostname)
	}
	switch l.Protocol {
	case gatewayv1.HTTPProtocolType, gatewayv1.TCPProtocolType:
		r.supported = true
	case gatewayv1.HTTPSProtocolType, gatewayv1.TLSProtocolType:
		r.supported = true
		r.tlsMode = gatewayv1.TLSModeTerminate
		if l.TLS != nil && l.TLS.Mode != nil && *l.TLS.Mode != "" {
			r.tlsMode = *l.TLS.Mode
		}
	}
	if !r.supported {
		return r
	}
	r.kinds, r.badKinds = listenerKinds(l, r.tlsMode)
	r.namespaces = allowedNamespaces(ctx, gw, l.AllowedRoutes, in.namespaces)
	if r.tlsMode == gatewayv1.TLSModeTerminate && l.TLS != nil {
		switch {
		case len(l.TLS.CertificateRefs) == 0:
			r.unsupported = "TLS termination needs certificateRefs; meshcp takes certificates from no other source"
		case len(l.TLS.CertificateRefs) > maxCredentials:
			r.unsupported = fmt.Sprintf("%d certificateRefs: at most %d (one RSA, one ECDSA) are supported", len(l.TLS.CertificateRefs), maxCredentials)
		default:
			r.certs = resolveCertificates(ctx, gw, l.TLS.CertificateRefs, in)
		}
	}
	return r
}

// listenerKinds returns the route kinds a listener allows and can carry
// (the protocol's, when allowedRoutes.kinds is empty), and the allowed
// kinds it cannot carry.
func listenerKinds(l *gatewayv1.Listener, mode gatewayv1.TLSModeType) (kinds, bad []string) {
	carried := validation.RouteKindsFor(l.Protocol, mode)
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		return carried, nil
	}
	for _, k := range l.AllowedRoutes.Kinds {
		group := gatewayv1.GroupName
		if k.Group != nil {
			group = string(*k.Group)
		}
		if group == gatewayv1.GroupName && slices.Contains(carried, string(k.Kind)) {
			if !slices.Contains(kinds, string(k.Kind)) {
				kinds = append(kinds, string(k.Kind))
			}
			continue
		}
		bad = append(bad, groupKind(group, string(k.Kind)))
	}
	return kinds, bad
}

// listenerStatus is the status of one listener, and whether it is
// programmed.
// blocked says why the Gateway as a whole cannot be accepted, if it
// cannot.
func listenerStatus(r *listenerResult, blocked string, gen int64) (gatewayv1.ListenerStatus, bool) {
	ls := gatewayv1.ListenerStatus{Name: r.l.Name, SupportedKinds: []gatewayv1.RouteGroupKind{}}
	group := gatewayv1.Group(gatewayv1.GroupName)
	for _, k := range r.kinds {
		ls.SupportedKinds = append(ls.SupportedKinds, gatewayv1.RouteGroupKind{Group: &group, Kind: gatewayv1.Kind(k)})
	}

	var accepted metav1.Condition
	switch {
	case !r.supported:
		accepted = condition(gatewayv1.ListenerConditionAccepted, false, gatewayv1.ListenerReasonUnsupportedProtocol,
			fmt.Sprintf("protocol %q is not supported; use HTTP, HTTPS, TLS or TCP", r.l.Protocol), gen)
	case r.conflict != "":
		accepted = condition(gatewayv1.ListenerConditionAccepted, false, r.conflict, r.conflictMsg, gen)
	case r.unsupported != "":
		accepted = condition(gatewayv1.ListenerConditionAccepted, false, gatewayv1.ListenerReasonUnsupportedValue, r.unsupported, gen)
	default:
		accepted = condition(gatewayv1.ListenerConditionAccepted, true, gatewayv1.ListenerReasonAccepted, "Listener accepted", gen)
	}

	conflicted := condition(gatewayv1.ListenerConditionConflicted, false, gatewayv1.ListenerReasonNoConflicts, "No conflicts", gen)
	if r.conflict != "" {
		conflicted = condition(gatewayv1.ListenerConditionConflicted, true, r.conflict, r.conflictMsg, gen)
	}

	resolved := condition(gatewayv1.ListenerConditionResolvedRefs, true, gatewayv1.ListenerReasonResolvedRefs, "All references resolved", gen)
	var problems []string
	reason := gatewayv1.ListenerReasonResolvedRefs
	if r.certs.reason != "" {
		reason = r.certs.reason
		problems = append(problems, r.certs.problem)
	}
	if len(r.badKinds) > 0 {
		if reason == gatewayv1.ListenerReasonResolvedRefs {
			reason = gatewayv1.ListenerReasonInvalidRouteKinds
		}
		problems = append(problems, fmt.Sprintf("a listener of protocol %s cannot carry route kinds %s", r.l.Protocol, strings.Join(r.badKinds, ", ")))
	}
	if len(problems) > 0 {
		resolved = condition(gatewayv1.ListenerConditionResolvedRefs, false, reason, strings.Join(problems, "; "), gen)
	}

	valid := blocked == "" && r.programmable()
	var programmed metav1.Condition
	switch {
	case valid:
		programmed = condition(gatewayv1.ListenerConditionProgrammed, true, gatewayv1.ListenerReasonProgrammed, "Listener programmed", gen)
	case blocked != "":
		programmed = condition(gatewayv1.ListenerConditionProgrammed, false, gatewayv1.ListenerReasonInvalid, "the Gateway is not accepted: "+blocked, gen)
	case accepted.Status != metav1.ConditionTrue:
		programmed = condition(gatewayv1.ListenerConditionProgrammed, false, accepted.Reason, accepted.Message, gen)
	default:
		programmed = condition(gatewayv1.ListenerConditionProgrammed, false, gatewayv1.ListenerReasonInvalid, resolved.Message, gen)
	}
	ls.Conditions = []metav1.Condition{accepted, programmed, resolved, conflicted}
	return ls, valid
}

// istioGateway is the Istio Gateway of a programmed listener: one server,
// on the gateway proxies labelled with the Gateway's name, whose hosts
// admit the VirtualServices of the namespaces the listener takes routes
// from.
func istioGateway(gw config.Config, r *listenerResult) config.Config {
	l := r.l
	server := &networking.Server{
		Port:  &networking.Port{Number: uint32(l.Port), Protocol: string(l.Protocol), Name: string(l.Name)},
		Hosts: serverHosts(r.namespaces, gw.Namespace, r.hostname),
	}
	switch r.tlsMode {
	case gatewayv1.TLSModePassthrough:
		server.Tls = &networking.ServerTLSSettings{Mode: networking.ServerTLSSettings_PASSTHROUGH}
	case gatewayv1.TLSModeTerminate:
		server.Tls = &networking.ServerTLSSettings{Mode: networking.ServerTLSSettings_SIMPLE}
		if len(r.certs.credentials) == 1 {
			server.Tls.CredentialName = r.certs.credentials[0]
		} else {
			server.Tls.CredentialNames = slices.Clone(r.certs.credentials)
		}
	}
	return config.Config{
		Meta: config.Meta{
			GroupVersionKind: schema.Gateway,
			Name:             istioGatewayName(gw.Name, string(l.Name)),
			Namespace:        gw.Namespace,
			Domain:           gw.Domain,
			Annotations:      map[string]string{ParentsAnnotation: "Gateway/" + gw.Namespace + "/" + gw.Name + "/" + string(l.Name)},
		},
		Spec: &networking.Gateway{
			Selector: map[string]string{GatewayNameLabel: gw.Name},
			Servers:  []*networking.Server{server},
		},
	}
}

// serverHosts are the hosts of an Istio Gateway server: the listener's
// hostname ("*" without one) for each namespace routes may attach from,
// "*/host" for all of them. With no namespace allowed, only the Gateway's
// own namespace is named: a server needs hosts, no route can attach, and
// the Gateway's owner controls that namespace.
func serverHosts(ns AllowedNamespaces, gwNamespace, hostname string) []string {
	if hostname == "" {
		hostname = "*"
	}
	switch {
	case ns.All:
		return []string{"*/" + hostname}
	case len(ns.Names) == 0:
		return []string{gwNamespace + "/" + hostname}
	}
	out := make([]string, len(ns.Names))
	for i, n := range ns.Names {
		out[i] = n + "/" + hostname
	}
	return out
}
