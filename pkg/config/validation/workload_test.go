package validation

import (
	"strings"
	"testing"

	networking "istio.io/api/networking/v1alpha3"
)

const validWorkloadEntry = `
address: 2001:db8::10
ports: {http: 8080, grpc-api: 9090}
labels: {app: ratings, version: v1}
network: vm-net
locality: us-west/zone1/rack2
weight: 10
serviceAccount: ratings
`

func TestWorkloadEntry(t *testing.T) {
	type we = networking.WorkloadEntry
	valid := func(t testing.TB) *we { return fromYAML[we](t, validWorkloadEntry) }
	runSpecCases(t, WorkloadEntry, valid, []specCase[we]{
		{"no address and no network", func(s *we) { s.Address, s.Network = "", "" }, "spec.address", "address is required", false},
		{"no address with a network", func(s *we) { s.Address = "" }, "spec.address", "reached through the gateway of network", true},
		{"invalid address", func(s *we) { s.Address = "vm 1" }, "spec.address", "neither an IP address nor a valid host name", false},
		{"unix socket with ports", func(s *we) { s.Address = "unix:///var/run/app.sock" }, "spec.ports", "must not have ports", false},
		{"unix socket directory", func(s *we) { s.Address, s.Ports = "unix:///var/run/", nil }, "spec.address", "absolute path", false},
		{"invalid port name", func(s *we) { s.Ports["http_alt"] = 8081 }, "spec.ports[http_alt]", "port name", false},
		{"port out of range", func(s *we) { s.Ports["http"] = 0 }, "spec.ports[http]", "1..65535", false},
		{"invalid label", func(s *we) { s.Labels["-app"] = "x" }, "spec.labels[-app]", "label key", false},
		{"invalid service account", func(s *we) { s.ServiceAccount = "Ratings_SA" }, "spec.serviceAccount", "not a valid name", false},
		{"locality with extra parts", func(s *we) { s.Locality = "a/b/c/d" }, "spec.locality", "more than region/zone/subzone", true},
		{"address too long", func(s *we) { s.Address = strings.Repeat("a", 300) }, "spec.address", "at most 256", false},
	})
	// A host name address is accepted: standalone entries may be resolved by DNS.
	spec := fromYAML[we](t, validWorkloadEntry)
	spec.Address = "vm1.example.com"
	requireClean(t, WorkloadEntry(cfg(spec)))
}

const validWorkloadGroup = `
metadata:
  labels: {app: ratings}
  annotations: {example.com/owner: team-a}
template:
  ports: {http: 8080}
  serviceAccount: ratings
  network: vm-net
probe:
  initialDelaySeconds: 5
  periodSeconds: 10
  httpGet:
    path: /ready
    port: 8080
    scheme: HTTPS
    httpHeaders: [{name: x-probe, value: "1"}]
`

func TestWorkloadGroup(t *testing.T) {
	type wg = networking.WorkloadGroup
	valid := func(t testing.TB) *wg { return fromYAML[wg](t, validWorkloadGroup) }
	runSpecCases(t, WorkloadGroup, valid, []specCase[wg]{
		{"no template", func(s *wg) { s.Template = nil }, "spec.template", "needs a template", false},
		{"template with address", func(s *wg) { s.Template.Address = "10.0.0.1" }, "spec.template.address", "must not set an address", false},
		{"template port", func(s *wg) { s.Template.Ports["http"] = 70000 }, "spec.template.ports[http]", "1..65535", false},
		{"invalid metadata label", func(s *wg) { s.Metadata.Labels["app"] = "a b" }, "spec.metadata.labels[app]", "label value", false},
		{"invalid metadata annotation", func(s *wg) { s.Metadata.Annotations["/x"] = "y" }, "spec.metadata.annotations[/x]", "annotation key", false},
		{"negative period", func(s *wg) { s.Probe.PeriodSeconds = -1 }, "spec.probe.periodSeconds", "negative", false},
		{"probe without method", func(s *wg) { s.Probe.HealthCheckMethod = nil }, "spec.probe", "needs one of httpGet, tcpSocket, grpc or exec", false},
		{"probe port", func(s *wg) { s.Probe.GetHttpGet().Port = 0 }, "spec.probe.httpGet.port", "1..65535", false},
		{"probe scheme", func(s *wg) { s.Probe.GetHttpGet().Scheme = "TCP" }, "spec.probe.httpGet.scheme", `must be "HTTP" or "HTTPS"`, false},
		{"probe header", func(s *wg) { s.Probe.GetHttpGet().HttpHeaders[0].Name = "x probe" }, "spec.probe.httpGet.httpHeaders[0].name", "header name", false},
		{"exec without command", func(s *wg) {
			s.Probe.HealthCheckMethod = &networking.ReadinessProbe_Exec{Exec: &networking.ExecHealthCheckConfig{}}
		}, "spec.probe.exec.command", "needs a command", false},
		{"tcp probe port", func(s *wg) {
			s.Probe.HealthCheckMethod = &networking.ReadinessProbe_TcpSocket{TcpSocket: &networking.TCPHealthCheckConfig{}}
		}, "spec.probe.tcpSocket.port", "1..65535", false},
	})
}
