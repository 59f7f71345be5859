package validation

import (
	"net"
	"strconv"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/config"
)

// Sidecar validates an Istio Sidecar: the workload selector, ingress
// listeners (a port each, unique, a loopback or unix defaultEndpoint, TLS
// settings Sidecars support), egress listeners ("namespace/host" hosts, at
// most one without a port, last) and the outbound traffic policy.
func Sidecar(c config.Config) Result {
	return validateSpec(c, "Sidecar", namespacedMeta, checkSidecar)
}

// checkSidecar checks the spec of a Sidecar (see Sidecar).
func checkSidecar(c config.Config, sc *networking.Sidecar, r *Result) {
	if sel := sc.WorkloadSelector; sel != nil {
		if len(sel.Labels) == 0 {
			r.Warnf("spec.workloadSelector.labels", "the workload selector has no labels, so the Sidecar applies to every workload in the namespace")
		}
		checkSelectorLabels(r, "spec.workloadSelector.labels", sel.Labels)
	}
	if len(sc.Ingress) == 0 && len(sc.Egress) == 0 && sc.OutboundTrafficPolicy == nil && sc.InboundConnectionPool == nil {
		r.Errorf("spec", "the Sidecar is empty; set ingress, egress, outboundTrafficPolicy or inboundConnectionPool")
	}
	checkSidecarIngress(r, sc.Ingress)
	checkConnectionPool(r, "spec.inboundConnectionPool", sc.InboundConnectionPool)
	checkSidecarEgress(r, c.Namespace, sc.Egress)
	checkOutboundTrafficPolicy(r, "spec.outboundTrafficPolicy", sc.OutboundTrafficPolicy)
}

// checkSidecarIngress checks the ingress listeners.
func checkSidecarIngress(r *Result, ingress []*networking.IstioIngressListener) {
	ports := map[uint32]int{}
	for i, in := range ingress {
		p := idx("spec.ingress", i)
		if in == nil {
			r.Errorf(p, "ingress listener must not be null")
			continue
		}
		if in.Port == nil {
			r.Errorf(fld(p, "port"), "an ingress listener needs a port")
			continue
		}
		checkSidecarPort(r, fld(p, "port"), in.Port)
		checkPort(r, fld(p, "port.number"), in.Port.Number)
		if j, dup := ports[in.Port.Number]; dup {
			r.Errorf(fld(p, "port.number"), "port %d is already used by ingress[%d]; ingress ports must be unique", in.Port.Number, j)
		} else {
			ports[in.Port.Number] = i
		}
		if in.Bind != "" && !isIP(in.Bind) {
			r.Errorf(fld(p, "bind"), "bind %q must be an IP address", in.Bind)
		}
		checkEnum(r, fld(p, "captureMode"), in.CaptureMode, networking.CaptureMode_name)
		checkDefaultEndpoint(r, fld(p, "defaultEndpoint"), in.DefaultEndpoint)
		if in.Tls != nil {
			checkSidecarIngressTLS(r, fld(p, "tls"), in.Tls, in.Port.Protocol)
		}
		checkConnectionPool(r, fld(p, "connectionPool"), in.ConnectionPool)
		if in.ConnectionPool.GetHttp() != nil && protocolClass(in.Port.Protocol) != classHTTP {
			r.Warnf(fld(p, "connectionPool.http"), "port %d is not HTTP (protocol %q); only the tcp connection pool settings apply", in.Port.Number, in.Port.Protocol)
		}
	}
}

// checkSidecarPort checks the name, protocol and target port of a
// listener port.
func checkSidecarPort(r *Result, p string, port *networking.SidecarPort) {
	if port.Name != "" {
		checkPortName(r, fld(p, "name"), port.Name)
	}
	checkProtocol(r, fld(p, "protocol"), port.Protocol, true)
	if port.TargetPort != 0 {
		r.Errorf(fld(p, "targetPort"), "targetPort has no effect on Sidecars; remove it")
	}
}

// checkDefaultEndpoint checks where an ingress listener forwards: a
// loopback or wildcard IP with a port, or a unix domain socket.
func checkDefaultEndpoint(r *Result, p, endpoint string) {
	if endpoint == "" {
		return
	}
	if strings.HasPrefix(endpoint, unixPrefix) {
		checkUnixAddress(r, p, endpoint)
		return
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		r.Errorf(p, "defaultEndpoint %q must be 127.0.0.1:<port>, 0.0.0.0:<port>, [::1]:<port>, [::]:<port> or unix://<path>", endpoint)
		return
	}
	switch host {
	case "", "127.0.0.1", "0.0.0.0", "::1", "::":
	default:
		r.Errorf(p, "defaultEndpoint host %q must be 127.0.0.1, 0.0.0.0, ::1 or ::; the sidecar forwards to its own workload", host)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		r.Errorf(p, "defaultEndpoint port %q is not a number", port)
		return
	}
	checkPort(r, p, n)
}

// checkSidecarIngressTLS checks the TLS settings of an ingress listener,
// which support less than a Gateway's.
func checkSidecarIngressTLS(r *Result, p string, t *networking.ServerTLSSettings, protocol string) {
	if len(t.SubjectAltNames) > 0 {
		r.Errorf(fld(p, "subjectAltNames"), "subjectAltNames is not supported in Sidecar ingress TLS")
	}
	if t.HttpsRedirect {
		r.Errorf(fld(p, "httpsRedirect"), "httpsRedirect is not supported in Sidecars")
	}
	if t.CredentialName != "" || len(t.CredentialNames) > 0 {
		r.Errorf(fld(p, "credentialName"), "credentialName(s) are not supported in Sidecars; use serverCertificate and privateKey")
	}
	if len(t.TlsCertificates) > 0 {
		r.Errorf(fld(p, "tlsCertificates"), "tlsCertificates are not supported in Sidecars")
	}
	if t.Mode == networking.ServerTLSSettings_ISTIO_MUTUAL || t.Mode == networking.ServerTLSSettings_AUTO_PASSTHROUGH {
		r.Errorf(fld(p, "mode"), "mode %s cannot be used in Sidecar ingress TLS", t.Mode)
	}
	if protocolClass(protocol) != classTLS {
		r.Errorf(p, "tls settings need port protocol HTTPS or TLS, not %q", protocol)
	}
	checkServerTLS(r, p, t)
}

// checkSidecarEgress checks the egress listeners.
func checkSidecarEgress(r *Result, namespace string, egress []*networking.IstioEgressListener) {
	ports := map[uint32]int{}
	sockets := map[string]int{}
	catchAll := -1
	for i, e := range egress {
		p := idx("spec.egress", i)
		if e == nil {
			r.Errorf(p, "egress listener must not be null")
			continue
		}
		checkEnum(r, fld(p, "captureMode"), e.CaptureMode, networking.CaptureMode_name)
		switch {
		case e.Port == nil && catchAll >= 0:
			r.Errorf(fld(p, "port"), "egress[%d] already has no port; only one egress listener may omit the port", catchAll)
		case e.Port == nil:
			catchAll = i
			if i != len(egress)-1 {
				r.Errorf(fld(p, "port"), "the egress listener without a port catches everything else and must be the last one")
			}
		default:
			checkEgressPort(r, p, i, e, ports, sockets)
		}
		checkEgressHosts(r, fld(p, "hosts"), namespace, e.Hosts)
	}
}

// checkEgressPort checks the port and bind of an egress listener, and
// that no two listeners take the same port or socket.
func checkEgressPort(r *Result, p string, i int, e *networking.IstioEgressListener, ports map[uint32]int, sockets map[string]int) {
	checkSidecarPort(r, fld(p, "port"), e.Port)
	if e.Port.Number == 0 {
		if !strings.HasPrefix(e.Bind, unixPrefix) {
			r.Errorf(fld(p, "port.number"), "port 0 is only allowed with a unix:// bind address")
		} else {
			checkUnixAddress(r, fld(p, "bind"), e.Bind)
		}
		if e.CaptureMode != networking.CaptureMode_DEFAULT && e.CaptureMode != networking.CaptureMode_NONE {
			r.Errorf(fld(p, "captureMode"), "unix domain socket listeners need captureMode DEFAULT or NONE")
		}
		if j, dup := sockets[e.Bind]; dup {
			r.Errorf(fld(p, "bind"), "socket %q is already used by egress[%d]", e.Bind, j)
		} else {
			sockets[e.Bind] = i
		}
		return
	}
	checkPort(r, fld(p, "port.number"), e.Port.Number)
	if e.Bind != "" && !isIP(e.Bind) {
		r.Errorf(fld(p, "bind"), "bind %q must be an IP address (or unix:// with port 0)", e.Bind)
	}
	if j, dup := ports[e.Port.Number]; dup {
		r.Errorf(fld(p, "port.number"), "port %d is already used by egress[%d]; egress ports must be unique", e.Port.Number, j)
	} else {
		ports[e.Port.Number] = i
	}
}

// checkEgressHosts checks the "namespace/host" entries of an egress
// listener, and warns of entries another one already covers.
func checkEgressHosts(r *Result, p, namespace string, hosts []string) {
	if len(hosts) == 0 {
		r.Errorf(p, "an egress listener needs at least one host, such as \"./*\" or \"istio-system/*\"")
		return
	}
	byNamespace := map[string][]string{}
	for i, h := range hosts {
		hp := idx(p, i)
		checkNamespacedHost(r, hp, h, false)
		ns, host, ok := strings.Cut(h, "/")
		if !ok {
			continue
		}
		if ns == "." {
			ns = namespace
		}
		for _, prev := range byNamespace[ns] {
			if prev == "*" || prev == host {
				r.Warnf(hp, "host %q is already covered by an earlier entry for namespace %q", h, ns)
				break
			}
		}
		byNamespace[ns] = append(byNamespace[ns], host)
	}
	if hs, ok := byNamespace["*"]; ok && len(byNamespace) > 1 {
		for _, h := range hs {
			if h == "*" {
				r.Warnf(p, `"*/*" selects every host; the other entries add nothing`)
				break
			}
		}
	}
}

// checkOutboundTrafficPolicy checks the outbound traffic policy: an
// egress proxy only with ALLOW_ANY.
func checkOutboundTrafficPolicy(r *Result, p string, tp *networking.OutboundTrafficPolicy) {
	if tp == nil {
		return
	}
	checkEnum(r, fld(p, "mode"), tp.Mode, networking.OutboundTrafficPolicy_Mode_name)
	ep := tp.EgressProxy
	if ep == nil {
		return
	}
	if tp.Mode != networking.OutboundTrafficPolicy_ALLOW_ANY {
		r.Errorf(fld(p, "egressProxy"), "egressProxy needs mode ALLOW_ANY")
	}
	if ep.Port == nil {
		r.Errorf(fld(p, "egressProxy.port"), "egressProxy needs a port")
	}
	checkDestination(r, fld(p, "egressProxy"), ep)
}
