package validation

import (
	"testing"

	networking "istio.io/api/networking/v1alpha3"
)

const validSidecar = `
workloadSelector:
  labels: {app: ratings}
ingress:
- port: {number: 9080, protocol: HTTP, name: http}
  defaultEndpoint: 127.0.0.1:8080
  connectionPool:
    http: {http1MaxPendingRequests: 100}
- port: {number: 9443, protocol: HTTPS, name: https}
  defaultEndpoint: unix:///var/run/app.sock
  tls: {mode: SIMPLE, serverCertificate: /etc/certs/cert.pem, privateKey: /etc/certs/key.pem}
egress:
- port: {number: 3306, protocol: MYSQL, name: mysql}
  bind: 127.0.0.2
  hosts: ["*/mysql.example.com"]
- port: {number: 0, protocol: HTTP, name: uds}
  bind: unix:///var/run/egress.sock
  captureMode: NONE
  hosts: ["./*"]
- hosts: ["./*", "istio-system/*", "~/*"]
outboundTrafficPolicy:
  mode: ALLOW_ANY
  egressProxy:
    host: egress.istio-system.svc.cluster.local
    port: {number: 3128}
inboundConnectionPool:
  tcp: {maxConnections: 50}
`

func TestSidecar(t *testing.T) {
	type sc = networking.Sidecar
	valid := func(t testing.TB) *sc { return fromYAML[sc](t, validSidecar) }
	runSpecCases(t, Sidecar, valid, []specCase[sc]{
		{"empty", func(s *sc) { *s = networking.Sidecar{} }, "spec", "the Sidecar is empty", false},
		{"selector wildcard", func(s *sc) { s.WorkloadSelector.Labels["app"] = "rat*" }, "spec.workloadSelector.labels[app]", "wildcards are not supported", false},
		{"empty selector", func(s *sc) { s.WorkloadSelector.Labels = nil }, "spec.workloadSelector.labels", "applies to every workload", true},
		{"ingress without port", func(s *sc) { s.Ingress[0].Port = nil }, "spec.ingress[0].port", "needs a port", false},
		{"duplicate ingress port", func(s *sc) { s.Ingress[1].Port.Number = 9080 }, "spec.ingress[1].port.number", "port 9080 is already used by ingress[0]", false},
		{"ingress port out of range", func(s *sc) { s.Ingress[0].Port.Number = 0 }, "spec.ingress[0].port.number", "1..65535", false},
		{"ingress targetPort", func(s *sc) { s.Ingress[0].Port.TargetPort = 8080 }, "spec.ingress[0].port.targetPort", "no effect on Sidecars", false},
		{"defaultEndpoint to another host", func(s *sc) { s.Ingress[0].DefaultEndpoint = "10.0.0.1:8080" }, "spec.ingress[0].defaultEndpoint", "must be 127.0.0.1, 0.0.0.0, ::1 or ::", false},
		{"defaultEndpoint without port", func(s *sc) { s.Ingress[0].DefaultEndpoint = "127.0.0.1" }, "spec.ingress[0].defaultEndpoint", "must be 127.0.0.1:<port>", false},
		{"defaultEndpoint port", func(s *sc) { s.Ingress[0].DefaultEndpoint = ":99999" }, "spec.ingress[0].defaultEndpoint", "1..65535", false},
		{"ingress TLS on HTTP port", func(s *sc) { s.Ingress[0].Tls = s.Ingress[1].Tls }, "spec.ingress[0].tls", "need port protocol HTTPS or TLS", false},
		{"ingress TLS credentialName", func(s *sc) { s.Ingress[1].Tls.CredentialName = "cert" }, "spec.ingress[1].tls.credentialName", "not supported in Sidecars", false},
		{"ingress ISTIO_MUTUAL", func(s *sc) {
			s.Ingress[1].Tls = &networking.ServerTLSSettings{Mode: networking.ServerTLSSettings_ISTIO_MUTUAL}
		}, "spec.ingress[1].tls.mode", "cannot be used in Sidecar ingress TLS", false},
		{"HTTP pool on a TCP port", func(s *sc) { s.Ingress[0].Port.Protocol = "TCP" }, "spec.ingress[0].connectionPool.http", "only the tcp connection pool settings apply", true},
		{"egress without hosts", func(s *sc) { s.Egress[0].Hosts = nil }, "spec.egress[0].hosts", "at least one host", false},
		{"egress host without namespace", func(s *sc) { s.Egress[0].Hosts[0] = "mysql.example.com" }, "spec.egress[0].hosts[0]", "must be <namespace>/<host>", false},
		{"egress host namespace", func(s *sc) { s.Egress[0].Hosts[0] = "My_NS/mysql.example.com" }, "spec.egress[0].hosts[0]", "namespace", false},
		{"egress duplicate host", func(s *sc) { s.Egress[2].Hosts = append(s.Egress[2].Hosts, "./foo.example.com") }, "spec.egress[2].hosts[3]", "already covered", true},
		{"catch-all not last", func(s *sc) { s.Egress[1], s.Egress[2] = s.Egress[2], s.Egress[1] }, "spec.egress[1].port", "must be the last one", false},
		{"two catch-alls", func(s *sc) { s.Egress[0].Port, s.Egress[0].Bind = nil, "" }, "spec.egress[2].port", "only one egress listener may omit the port", false},
		{"duplicate egress port", func(s *sc) {
			s.Egress[1].Port.Number, s.Egress[1].Bind, s.Egress[1].CaptureMode = 3306, "", networking.CaptureMode_DEFAULT
		}, "spec.egress[1].port.number", "port 3306 is already used by egress[0]", false},
		{"port 0 without socket", func(s *sc) { s.Egress[1].Bind = "" }, "spec.egress[1].port.number", "only allowed with a unix:// bind", false},
		{"socket with iptables capture", func(s *sc) { s.Egress[1].CaptureMode = networking.CaptureMode_IPTABLES }, "spec.egress[1].captureMode", "DEFAULT or NONE", false},
		{"egress bind", func(s *sc) { s.Egress[0].Bind = "localhost" }, "spec.egress[0].bind", "must be an IP address", false},
		{"egress protocol", func(s *sc) { s.Egress[0].Port.Protocol = "SMTP" }, "spec.egress[0].port.protocol", `unknown protocol "SMTP"`, false},
		{"egress proxy with REGISTRY_ONLY", func(s *sc) { s.OutboundTrafficPolicy.Mode = networking.OutboundTrafficPolicy_REGISTRY_ONLY }, "spec.outboundTrafficPolicy.egressProxy", "needs mode ALLOW_ANY", false},
		{"egress proxy without port", func(s *sc) { s.OutboundTrafficPolicy.EgressProxy.Port = nil }, "spec.outboundTrafficPolicy.egressProxy.port", "needs a port", false},
		{"inbound pool", func(s *sc) { s.InboundConnectionPool.Tcp.MaxConnections = -3 }, "spec.inboundConnectionPool.tcp.maxConnections", "negative", false},
	})
}
