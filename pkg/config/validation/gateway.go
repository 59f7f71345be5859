package validation

import (
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshcp/meshcp/pkg/config"
)

// Gateway validates an Istio Gateway: its name (a DNS-1123 label, since
// VirtualServices refer to it as "namespace/name"), the selector, and
// every server: hosts in "namespace/host" form, a port with a known
// protocol and a unique name, TLS settings that fit the protocol, and no
// two servers on one port with incompatible protocols.
func Gateway(c config.Config) Result {
	return validateSpec(c, "Gateway", metaRules{name: nameLabel}, checkGateway)
}

// Protocol classes: protocols of one class can share a port.
const (
	classHTTP = "HTTP"
	classTLS  = "TLS"
	classTCP  = "TCP"
	classUDP  = "UDP"
)

// istioProtocols maps the port protocols Istio knows (written in any
// case) to their class.
var istioProtocols = map[string]string{
	"HTTP": classHTTP, "HTTP2": classHTTP, "GRPC": classHTTP, "GRPC-WEB": classHTTP, "HTTP_PROXY": classHTTP,
	"HTTPS": classTLS, "TLS": classTLS,
	"TCP": classTCP, "MONGO": classTCP, "MYSQL": classTCP, "REDIS": classTCP,
	"UDP": classUDP,
}

// protocolClass returns the class of an Istio protocol, or "" for an
// unknown one.
func protocolClass(protocol string) string {
	return istioProtocols[strings.ToUpper(protocol)]
}

// checkProtocol checks an Istio port protocol is known; empty means
// "detect" where allowEmpty.
func checkProtocol(r *Result, p, protocol string, allowEmpty bool) {
	if protocol == "" && allowEmpty {
		return
	}
	if protocolClass(protocol) == "" {
		r.Errorf(p, "unknown protocol %q; use HTTP, HTTPS, HTTP2, GRPC, GRPC-WEB, TCP, TLS, MONGO, MYSQL, REDIS or UDP", protocol)
	}
}

// checkGateway checks the spec of an Istio Gateway (see Gateway).
func checkGateway(_ config.Config, gw *networking.Gateway, r *Result) {
	checkSelectorLabels(r, "spec.selector", gw.Selector)
	if len(gw.Servers) == 0 {
		r.Errorf("spec.servers", "a Gateway needs at least one server")
	}
	portNames := map[string]int{}
	type listener struct {
		bind   string
		number uint32
	}
	classes := map[listener]int{}
	for i, s := range gw.Servers {
		sp := idx("spec.servers", i)
		if s == nil {
			r.Errorf(sp, "server must not be null")
			continue
		}
		checkServer(r, sp, s)
		if s.Port == nil {
			continue
		}
		if j, dup := portNames[s.Port.Name]; dup && s.Port.Name != "" {
			r.Errorf(fld(sp, "port.name"), "port name %q is already used by servers[%d]; port names must be unique", s.Port.Name, j)
		} else {
			portNames[s.Port.Name] = i
		}
		if s.GetTls().GetHttpsRedirect() && protocolClass(s.Port.Protocol) != classHTTP {
			r.Warnf(fld(sp, "tls.httpsRedirect"), "httpsRedirect only applies to HTTP servers; it is ignored on %s", s.Port.Protocol)
		}
		l := listener{s.Bind, s.Port.Number}
		class := protocolClass(s.Port.Protocol)
		if j, seen := classes[l]; seen && class != "" {
			other := gw.Servers[j].Port.Protocol
			if protocolClass(other) != class {
				r.Errorf(fld(sp, "port.protocol"), "port %d is already served with protocol %s by servers[%d]; %s cannot share that port", s.Port.Number, other, j, s.Port.Protocol)
			}
		} else if class != "" {
			classes[l] = i
		}
	}
}

// checkServer checks one server of a Gateway.
func checkServer(r *Result, p string, s *networking.Server) {
	if len(s.Hosts) == 0 {
		r.Errorf(fld(p, "hosts"), "a server needs at least one host")
	}
	for i, h := range s.Hosts {
		checkNamespacedHost(r, idx(fld(p, "hosts"), i), h, true)
	}
	portOK := checkServerPort(r, fld(p, "port"), s.Port, s.Bind)
	checkBind(r, fld(p, "bind"), s.Bind, s.Port)
	if s.Tls != nil {
		checkServerTLS(r, fld(p, "tls"), s.Tls)
	}
	if !portOK {
		return
	}
	switch protocolClass(s.Port.Protocol) {
	case classTLS:
		if s.Tls == nil {
			r.Errorf(fld(p, "tls"), "a %s server needs tls settings", strings.ToUpper(s.Port.Protocol))
		}
	case classHTTP:
		if t := s.Tls; t != nil && (t.Mode != networking.ServerTLSSettings_PASSTHROUGH || t.ServerCertificate != "" ||
			t.PrivateKey != "" || t.CaCertificates != "" || t.CredentialName != "") {
			r.Errorf(fld(p, "tls"), "a plain-text %s server can only set tls.httpsRedirect; use protocol HTTPS to terminate TLS", s.Port.Protocol)
		}
	default:
		if s.Tls != nil {
			r.Errorf(fld(p, "tls"), "protocol %s does not use TLS; tls settings are only for HTTPS and TLS servers", s.Port.Protocol)
		}
	}
}

// checkServerPort checks a server's port and reports whether its protocol
// is known.
func checkServerPort(r *Result, p string, port *networking.Port, bind string) bool {
	if port == nil {
		r.Errorf(p, "a server needs a port")
		return false
	}
	if port.Number != 0 || !strings.HasPrefix(bind, unixPrefix) {
		checkPort(r, fld(p, "number"), port.Number)
	}
	if port.Name == "" {
		r.Errorf(fld(p, "name"), "port name is required")
	}
	if port.TargetPort != 0 {
		r.Errorf(fld(p, "targetPort"), "targetPort has no effect on Gateways; remove it")
	}
	before := len(r.Errors)
	checkProtocol(r, fld(p, "protocol"), port.Protocol, false)
	return len(r.Errors) == before
}

// checkBind checks a bind address: an IP, or a unix domain socket (with
// port number 0).
func checkBind(r *Result, p, bind string, port interface{ GetNumber() uint32 }) {
	switch {
	case bind == "":
	case strings.HasPrefix(bind, unixPrefix):
		checkUnixAddress(r, p, bind)
		if port != nil && port.GetNumber() != 0 {
			r.Errorf(p, "a unix domain socket bind needs port number 0, not %d", port.GetNumber())
		}
	case !isIP(bind):
		r.Errorf(p, "bind %q must be an IP address or a unix:// socket path", bind)
	}
}

// checkNamespacedHost checks a "namespace/host" entry of a Gateway server
// or a Sidecar egress listener. The namespace is "*", ".", a namespace
// name, or (Sidecars) "~"; the host is "*" or a name with a dot and at
// most a whole wildcard first label. Gateways also accept a bare host, and
// IP addresses.
func checkNamespacedHost(r *Result, p, entry string, isGateway bool) {
	ns, host, qualified := strings.Cut(entry, "/")
	if !qualified {
		if !isGateway {
			r.Errorf(p, "host %q must be <namespace>/<host>, such as \"*/*\", \"./*\" or \"ns/foo.example.com\"", entry)
			return
		}
		host = entry
	} else {
		if ns == "" || host == "" {
			r.Errorf(p, "host %q must be <namespace>/<host> with both parts set", entry)
			return
		}
		if ns != "*" && ns != "." && (isGateway || ns != "~") {
			if msgs := k8svalidation.IsDNS1123Label(ns); len(msgs) > 0 {
				r.Errorf(p, "host %q: namespace %q must be \"*\", \".\" or a namespace name: %s", entry, ns, msgs[0])
			}
		}
	}
	if host == "*" {
		return
	}
	if isGateway && isIP(host) {
		return
	}
	if isShortName(host) {
		r.Errorf(p, "host %q is a short name; write a fully qualified name such as %s.example.com or use \"*\"", host, host)
		return
	}
	if isPartialWildcard(host) {
		r.Errorf(p, "host %q has a partial wildcard; a wildcard must be the whole first label, as in *.example.com", host)
		return
	}
	if msg := hostError(host); msg != "" {
		r.Errorf(p, "%s", msg)
	}
}

// Server TLS.

// checkServerTLS checks the TLS settings of a Gateway server (or a Sidecar
// ingress listener): one source of certificates, and the certificates each
// mode needs.
func checkServerTLS(r *Result, p string, t *networking.ServerTLSSettings) {
	checkEnum(r, fld(p, "mode"), t.Mode, networking.ServerTLSSettings_TLSmode_name)
	checkTLSVersions(r, p, t)
	checkCipherSuites(r, fld(p, "cipherSuites"), t.CipherSuites)
	if len(t.CredentialNames) > 2 {
		r.Errorf(fld(p, "credentialNames"), "at most 2 credentialNames (one RSA, one ECDSA) are allowed, not %d", len(t.CredentialNames))
	}
	if len(t.TlsCertificates) > 2 {
		r.Errorf(fld(p, "tlsCertificates"), "at most 2 tlsCertificates (one RSA, one ECDSA) are allowed, not %d", len(t.TlsCertificates))
	}
	sources := 0
	for _, set := range []bool{t.ServerCertificate != "" || t.PrivateKey != "", t.CredentialName != "", len(t.CredentialNames) > 0, len(t.TlsCertificates) > 0} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		r.Errorf(p, "set only one of credentialName, credentialNames, serverCertificate/privateKey and tlsCertificates")
	}
	hasFiles := t.ServerCertificate != "" || t.PrivateKey != "" || t.CaCertificates != "" || len(t.TlsCertificates) > 0
	hasCredential := t.CredentialName != "" || len(t.CredentialNames) > 0
	switch t.Mode {
	case networking.ServerTLSSettings_ISTIO_MUTUAL:
		if hasFiles || hasCredential {
			r.Errorf(fld(p, "mode"), "mode ISTIO_MUTUAL uses Istio's certificates; serverCertificate, privateKey, caCertificates, tlsCertificates and credentialName(s) must not be set")
		}
	case networking.ServerTLSSettings_PASSTHROUGH, networking.ServerTLSSettings_AUTO_PASSTHROUGH:
		if hasFiles || hasCredential || t.CaCrl != "" {
			r.Warnf(fld(p, "mode"), "mode %s does not terminate TLS; the certificate settings are ignored", t.Mode)
		}
	case networking.ServerTLSSettings_SIMPLE, networking.ServerTLSSettings_MUTUAL, networking.ServerTLSSettings_OPTIONAL_MUTUAL:
		checkTerminatingTLS(r, p, t, hasCredential)
	}
}

// checkTerminatingTLS checks the certificates of a mode that terminates
// TLS: a credential, or a server certificate and key (and, for mutual
// modes, a client CA bundle).
func checkTerminatingTLS(r *Result, p string, t *networking.ServerTLSSettings, hasCredential bool) {
	mutual := t.Mode != networking.ServerTLSSettings_SIMPLE
	if t.CaCrl != "" {
		if t.CredentialName != "" {
			r.Errorf(fld(p, "caCrl"), "caCrl cannot be used with credentialName; put the CRL in the credential")
		}
		if !mutual {
			r.Errorf(fld(p, "caCrl"), "caCrl is only used to verify client certificates, so not with mode SIMPLE")
		}
	}
	if hasCredential {
		return
	}
	if len(t.TlsCertificates) > 0 {
		for i, c := range t.TlsCertificates {
			cp := idx(fld(p, "tlsCertificates"), i)
			if c == nil || c.ServerCertificate == "" {
				r.Errorf(fld(cp, "serverCertificate"), "mode %s needs a serverCertificate", t.Mode)
			}
			if c == nil || c.PrivateKey == "" {
				r.Errorf(fld(cp, "privateKey"), "mode %s needs a privateKey", t.Mode)
			}
		}
	} else {
		if t.ServerCertificate == "" {
			r.Errorf(fld(p, "serverCertificate"), "mode %s needs credentialName, or serverCertificate and privateKey", t.Mode)
		}
		if t.PrivateKey == "" {
			r.Errorf(fld(p, "privateKey"), "mode %s needs credentialName, or serverCertificate and privateKey", t.Mode)
		}
	}
	if mutual && t.CaCertificates == "" {
		r.Errorf(fld(p, "caCertificates"), "mode %s verifies client certificates and needs caCertificates (or a credentialName holding ca.crt)", t.Mode)
	}
}

// checkTLSVersions checks the TLS protocol versions and their order.
func checkTLSVersions(r *Result, p string, t *networking.ServerTLSSettings) {
	checkEnum(r, fld(p, "minProtocolVersion"), t.MinProtocolVersion, networking.ServerTLSSettings_TLSProtocol_name)
	checkEnum(r, fld(p, "maxProtocolVersion"), t.MaxProtocolVersion, networking.ServerTLSSettings_TLSProtocol_name)
	minV, maxV := t.MinProtocolVersion, t.MaxProtocolVersion
	if minV != networking.ServerTLSSettings_TLS_AUTO && maxV != networking.ServerTLSSettings_TLS_AUTO && maxV < minV {
		r.Errorf(fld(p, "maxProtocolVersion"), "maxProtocolVersion %s is below minProtocolVersion %s", maxV, minV)
	}
	if (minV == networking.ServerTLSSettings_TLSV1_0 || minV == networking.ServerTLSSettings_TLSV1_1) && len(t.CipherSuites) == 0 {
		r.Warnf(fld(p, "minProtocolVersion"), "TLS versions below 1.2 need cipherSuites that support them; the default ciphers do not")
	}
}

// cipherSuites are the cipher suites Envoy (BoringSSL) accepts.
var cipherSuites = []string{
	"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
	"ECDHE-PSK-CHACHA20-POLY1305", "ECDHE-ECDSA-AES128-SHA", "ECDHE-RSA-AES128-SHA", "ECDHE-PSK-AES128-CBC-SHA",
	"ECDHE-ECDSA-AES256-SHA", "ECDHE-RSA-AES256-SHA", "ECDHE-PSK-AES256-CBC-SHA", "AES128-GCM-SHA256",
	"AES256-GCM-SHA384", "AES128-SHA", "PSK-AES128-CBC-SHA", "AES256-SHA", "PSK-AES256-CBC-SHA", "DES-CBC3-SHA",
}

// checkCipherSuites warns of unknown and repeated cipher suites, which
// Istio ignores. An equal-preference group "[A|B]" is checked member by
// member.
func checkCipherSuites(r *Result, p string, suites []string) {
	seen := map[string]bool{}
	for i, cs := range suites {
		for _, name := range strings.Split(strings.Trim(cs, "[]"), "|") {
			if !slices.Contains(cipherSuites, name) {
				r.Warnf(idx(p, i), "unknown cipher suite %q is ignored", name)
			}
		}
		if seen[cs] {
			r.Warnf(idx(p, i), "cipher suite %q is listed twice", cs)
		}
		seen[cs] = true
	}
}
