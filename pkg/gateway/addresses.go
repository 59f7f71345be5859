package gateway

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// GatewayNameLabel is the label that ties a gateway's proxies and their
// Service to the Gateway API Gateway they serve, as Gateway API and Istio
// use it. The derived Istio Gateway selects the proxies by it, and the
// Gateway's addresses are those of the Service that carries it.
const GatewayNameLabel = "gateway.networking.k8s.io/gateway-name"

// addressResult is the outcome of finding a Gateway's addresses.
type addressResult struct {
	addresses []gatewayv1.GatewayStatusAddress
	// unsupported says why the Gateway cannot be accepted (an address type
	// meshcp does not handle); empty when it can.
	unsupported string
	// reason and message say why the Gateway is not programmed for lack of
	// an address; reason is empty when it has one.
	reason  gatewayv1.GatewayConditionReason
	message string
}

// gatewayAddresses finds the Service that fronts a Gateway's proxies and
// reports its addresses: the load balancer's, or else the cluster IPs, or
// else the Service's hostname. The Service is the one a Hostname address
// of the spec names ("name.namespace.svc.<domain>", as Istio's manual
// deployments write it), or else the Service of the Gateway's namespace
// labelled with the Gateway's name (the first by name if several are).
// Requested IP addresses and hostnames must be among the Service's.
func gatewayAddresses(ctx krt.HandlerContext, gw config.Config, spec *gatewayv1.GatewaySpec, in *gatewayInputs, o *options) addressResult {
	var res addressResult
	var svc *config.Config
	named := ""
	for i, a := range spec.Addresses {
		typ := gatewayv1.IPAddressType
		if a.Type != nil {
			typ = *a.Type
		}
		switch typ {
		case gatewayv1.IPAddressType:
		case gatewayv1.HostnameAddressType:
			if ns, name, ok := serviceHostname(a.Value, o.domain); ok && named == "" {
				named = ns + "/" + name
				svc = krt.FetchOne(ctx, in.serviceConfigs, krt.FilterKey(named))
			}
		default:
			res.unsupported = fmt.Sprintf("spec.addresses[%d]: address type %q is not supported; use IPAddress or Hostname", i, typ)
			return res
		}
	}
	if named == "" {
		labelled := in.services.Fetch(ctx, gw.Namespace, krt.FilterLabel(map[string]string{GatewayNameLabel: gw.Name}))
		if len(labelled) > 0 {
			svc = &labelled[0]
		}
	}
	if svc == nil {
		res.reason = gatewayv1.GatewayReasonAddressNotAssigned
		if named != "" {
			res.message = fmt.Sprintf("Service %s, named by spec.addresses, does not exist", named)
		} else {
			res.message = fmt.Sprintf("no Service in namespace %s is labelled %s=%s", gw.Namespace, GatewayNameLabel, gw.Name)
		}
		return res
	}
	res.addresses = serviceAddresses(svc, o.domain)
	known := knownAddresses(svc, o.domain)
	for i, a := range spec.Addresses {
		if a.Value == "" || slices.Contains(known, a.Value) {
			continue
		}
		res.reason = gatewayv1.GatewayReasonAddressNotUsable
		res.message = fmt.Sprintf("spec.addresses[%d]: %q is not an address of Service %s/%s", i, a.Value, svc.Namespace, svc.Name)
		res.addresses = nil
		return res
	}
	return res
}

// serviceHostname splits "name.namespace.svc.<domain>" into namespace and
// name.
func serviceHostname(host, domain string) (ns, name string, ok bool) {
	rest, found := strings.CutSuffix(host, ".svc."+domain)
	if !found {
		return "", "", false
	}
	name, ns, ok = strings.Cut(rest, ".")
	if !ok || name == "" || ns == "" || strings.Contains(ns, ".") {
		return "", "", false
	}
	return ns, name, true
}

// serviceAddresses are the addresses a Service offers, best first: its
// load balancer's, else its cluster IPs, else its hostname.
func serviceAddresses(svc *config.Config, domain string) []gatewayv1.GatewayStatusAddress {
	var out []gatewayv1.GatewayStatusAddress
	ipType, hostType := gatewayv1.IPAddressType, gatewayv1.HostnameAddressType
	if status, ok := svc.Status.(*corev1.ServiceStatus); ok && status != nil {
		for _, in := range status.LoadBalancer.Ingress {
			if in.IP != "" {
				out = append(out, gatewayv1.GatewayStatusAddress{Type: &ipType, Value: in.IP})
			}
			if in.Hostname != "" {
				out = append(out, gatewayv1.GatewayStatusAddress{Type: &hostType, Value: in.Hostname})
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if spec, ok := svc.Spec.(*corev1.ServiceSpec); ok && spec != nil {
		for _, ip := range clusterIPs(spec) {
			out = append(out, gatewayv1.GatewayStatusAddress{Type: &ipType, Value: ip})
		}
	}
	if len(out) > 0 {
		return out
	}
	return []gatewayv1.GatewayStatusAddress{{Type: &hostType, Value: svc.Name + "." + svc.Namespace + ".svc." + domain}}
}

// knownAddresses are every value a Gateway may request of a Service: its
// load balancer's addresses, cluster and external IPs, and hostname.
func knownAddresses(svc *config.Config, domain string) []string {
	out := []string{svc.Name + "." + svc.Namespace + ".svc." + domain}
	if status, ok := svc.Status.(*corev1.ServiceStatus); ok && status != nil {
		for _, in := range status.LoadBalancer.Ingress {
			out = append(out, in.IP, in.Hostname)
		}
	}
	if spec, ok := svc.Spec.(*corev1.ServiceSpec); ok && spec != nil {
		out = append(out, clusterIPs(spec)...)
		out = append(out, spec.ExternalIPs...)
	}
	return out
}

// clusterIPs returns a Service's cluster IPs, none for a headless one.
func clusterIPs(spec *corev1.ServiceSpec) []string {
	ips := spec.ClusterIPs
	if len(ips) == 0 && spec.ClusterIP != "" {
		ips = []string{spec.ClusterIP}
	}
	return slices.DeleteFunc(slices.Clone(ips), func(ip string) bool { return ip == "" || ip == corev1.ClusterIPNone })
}
