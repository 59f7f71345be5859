package validation

import (
	"testing"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/config"
)

const validGateway = `
selector: {istio: ingressgateway}
servers:
- port: {number: 80, name: http, protocol: HTTP}
  hosts: ["*/bookinfo.example.com", "./*.internal.example.com"]
  tls: {httpsRedirect: true}
- port: {number: 443, name: https, protocol: HTTPS}
  hosts: [bookinfo.example.com]
  tls: {mode: SIMPLE, credentialName: bookinfo-cert, minProtocolVersion: TLSV1_2}
- port: {number: 443, name: tls-passthrough, protocol: TLS}
  hosts: ["legacy/db.example.com"]
  tls: {mode: PASSTHROUGH}
- port: {number: 8443, name: mtls, protocol: HTTPS}
  hosts: ["*"]
  tls: {mode: MUTUAL, serverCertificate: /etc/certs/server.pem, privateKey: /etc/certs/key.pem, caCertificates: /etc/certs/ca.pem}
- port: {number: 15443, name: tls-auto, protocol: TLS}
  hosts: ["*.local"]
  tls: {mode: AUTO_PASSTHROUGH}
- port: {number: 31400, name: tcp, protocol: TCP}
  hosts: ["*"]
`

func validGW(t testing.TB) *networking.Gateway {
	return fromYAML[networking.Gateway](t, validGateway)
}

func TestGateway(t *testing.T) {
	type gw = networking.Gateway
	tls := func(s *gw, i int) *networking.ServerTLSSettings { return s.Servers[i].Tls }
	runSpecCases(t, Gateway, validGW, []specCase[gw]{
		{"no servers", func(s *gw) { s.Servers = nil }, "spec.servers", "at least one server", false},
		{"null server", func(s *gw) { s.Servers[2] = nil }, "spec.servers[2]", "must not be null", false},
		{"no hosts", func(s *gw) { s.Servers[0].Hosts = nil }, "spec.servers[0].hosts", "at least one host", false},
		{"short host", func(s *gw) { s.Servers[0].Hosts[0] = "*/bookinfo" }, "spec.servers[0].hosts[0]", "short name", false},
		{"partial wildcard host", func(s *gw) { s.Servers[0].Hosts[0] = "*/*book.example.com" }, "spec.servers[0].hosts[0]", "partial wildcard", false},
		{"invalid host namespace", func(s *gw) { s.Servers[0].Hosts[0] = "Bad_NS/bookinfo.example.com" }, "spec.servers[0].hosts[0]", `namespace "Bad_NS" must be`, false},
		{"empty host namespace", func(s *gw) { s.Servers[0].Hosts[0] = "/bookinfo.example.com" }, "spec.servers[0].hosts[0]", "both parts", false},
		{"no port", func(s *gw) { s.Servers[0].Port = nil }, "spec.servers[0].port", "needs a port", false},
		{"port out of range", func(s *gw) { s.Servers[0].Port.Number = 0 }, "spec.servers[0].port.number", "1..65535", false},
		{"unknown protocol", func(s *gw) { s.Servers[5].Port.Protocol = "QUIC" }, "spec.servers[5].port.protocol", `unknown protocol "QUIC"`, false},
		{"port without name", func(s *gw) { s.Servers[5].Port.Name = "" }, "spec.servers[5].port.name", "port name is required", false},
		{"duplicate port name", func(s *gw) { s.Servers[5].Port.Name = "http" }, "spec.servers[5].port.name", `port name "http" is already used by servers[0]`, false},
		{"targetPort", func(s *gw) { s.Servers[5].Port.TargetPort = 8080 }, "spec.servers[5].port.targetPort", "no effect", false},
		{"conflicting protocols on a port", func(s *gw) { s.Servers[5].Port.Number = 80 }, "spec.servers[5].port.protocol", "port 80 is already served with protocol HTTP", false},
		{"invalid bind", func(s *gw) { s.Servers[5].Bind = "not-an-ip" }, "spec.servers[5].bind", "IP address or a unix:// socket", false},
		{"unix bind with port", func(s *gw) { s.Servers[5].Bind = "unix:///var/run/gw.sock" }, "spec.servers[5].bind", "needs port number 0", false},
		{"HTTPS without TLS", func(s *gw) { s.Servers[1].Tls = nil }, "spec.servers[1].tls", "HTTPS server needs tls settings", false},
		{"TLS on TCP", func(s *gw) {
			s.Servers[5].Tls = &networking.ServerTLSSettings{Mode: networking.ServerTLSSettings_SIMPLE, CredentialName: "c"}
		}, "spec.servers[5].tls", "does not use TLS", false},
		{"TLS termination on HTTP", func(s *gw) { tls(s, 0).Mode, tls(s, 0).CredentialName = networking.ServerTLSSettings_SIMPLE, "c" }, "spec.servers[0].tls", "can only set tls.httpsRedirect", false},
		{"httpsRedirect on HTTPS", func(s *gw) { tls(s, 1).HttpsRedirect = true }, "spec.servers[1].tls.httpsRedirect", "only applies to HTTP servers", true},
		{"SIMPLE without certificate", func(s *gw) { tls(s, 1).CredentialName = "" }, "spec.servers[1].tls.serverCertificate", "mode SIMPLE needs credentialName, or serverCertificate and privateKey", false},
		{"MUTUAL without CA", func(s *gw) { tls(s, 3).CaCertificates = "" }, "spec.servers[3].tls.caCertificates", "needs caCertificates", false},
		{"MUTUAL without key", func(s *gw) { tls(s, 3).PrivateKey = "" }, "spec.servers[3].tls.privateKey", "mode MUTUAL needs", false},
		{"two certificate sources", func(s *gw) { tls(s, 3).CredentialName = "cert" }, "spec.servers[3].tls", "set only one of credentialName", false},
		{"ISTIO_MUTUAL with certificates", func(s *gw) { tls(s, 3).Mode = networking.ServerTLSSettings_ISTIO_MUTUAL }, "spec.servers[3].tls.mode", "must not be set", false},
		{"PASSTHROUGH with certificates", func(s *gw) { tls(s, 2).CredentialName = "cert" }, "spec.servers[2].tls.mode", "ignored", true},
		{"CRL with credentialName", func(s *gw) { tls(s, 1).CaCrl = "/crl.pem" }, "spec.servers[1].tls.caCrl", "cannot be used with credentialName", false},
		{"too many credentialNames", func(s *gw) {
			tls(s, 1).CredentialName, tls(s, 1).CredentialNames = "", []string{"a", "b", "c"}
		}, "spec.servers[1].tls.credentialNames", "at most 2", false},
		{"max below min version", func(s *gw) { tls(s, 1).MaxProtocolVersion = networking.ServerTLSSettings_TLSV1_1 }, "spec.servers[1].tls.maxProtocolVersion", "below minProtocolVersion", false},
		{"unknown cipher suite", func(s *gw) { tls(s, 1).CipherSuites = []string{"NOT-A-CIPHER"} }, "spec.servers[1].tls.cipherSuites[0]", "unknown cipher suite", true},
		{"unknown TLS mode", func(s *gw) { tls(s, 1).Mode = 17 }, "spec.servers[1].tls.mode", "unknown value 17", false},
		{"selector wildcard", func(s *gw) { s.Selector["istio"] = "*" }, "spec.selector[istio]", "wildcards are not supported", false},
	})
}

func TestGatewayNameIsALabel(t *testing.T) {
	c := cfg(validGW(t))
	c.Name = "my.gateway"
	requireError(t, Gateway(c), "metadata.name", "DNS-1123 label")
	c.Name = "my-gateway"
	requireClean(t, Gateway(c))
}

func TestWrongSpecType(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   Func
		spec any
	}{
		{"VirtualService given a Gateway", VirtualService, &networking.Gateway{}},
		{"Gateway given nothing", Gateway, nil},
		{"Sidecar given a typed nil", Sidecar, (*networking.Sidecar)(nil)},
		{"HTTPRoute given a string", HTTPRoute, "spec"},
		{"Service given a VirtualService", Service, &networking.VirtualService{}},
		{"EndpointSlice given a Gateway", EndpointSlice, &networking.Gateway{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.fn(config.Config{Meta: config.Meta{Name: "x", Namespace: "default"}, Spec: tc.spec})
			if !hasFinding(res.Errors, "spec", "spec") {
				t.Fatalf("want an error at spec, got %v", res.Errors)
			}
		})
	}
}
