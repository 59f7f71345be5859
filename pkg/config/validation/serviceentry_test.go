package validation

import (
	"testing"

	networking "istio.io/api/networking/v1alpha3"
)

const validServiceEntryStatic = `
hosts: [db.internal.example.com]
addresses: [10.1.0.0/16]
ports:
- {number: 5432, name: tcp-postgres, protocol: TCP}
- {number: 8080, name: http-admin, protocol: HTTP, targetPort: 18080}
location: MESH_INTERNAL
resolution: STATIC
endpoints:
- address: 10.1.2.3
  ports: {tcp-postgres: 15432}
  labels: {version: v1}
- address: 10.1.2.4
  network: net-2
  locality: us-west/zone1
  weight: 2
  serviceAccount: db
exportTo: ["~"]
`

const validServiceEntryDNS = `
hosts: [api.example.com, www.example.com]
ports:
- {number: 443, name: https, protocol: TLS}
- {number: 80, name: http, protocol: HTTP}
resolution: DNS
endpoints:
- address: us.api.example.com
  ports: {https: 8443}
- address: 192.0.2.10
`

func TestServiceEntryStatic(t *testing.T) {
	type se = networking.ServiceEntry
	valid := func(t testing.TB) *se { return fromYAML[se](t, validServiceEntryStatic) }
	runSpecCases(t, ServiceEntry, valid, []specCase[se]{
		{"no hosts", func(s *se) { s.Hosts = nil }, "spec.hosts", "at least one host", false},
		{"wildcard everything", func(s *se) { s.Hosts[0] = "*" }, "spec.hosts[0]", `host "*" would capture all traffic`, false},
		{"invalid host", func(s *se) { s.Hosts[0] = "db..example.com" }, "spec.hosts[0]", "empty label", false},
		{"partial wildcard", func(s *se) { s.Hosts[0] = "*db.example.com" }, "spec.hosts[0]", "partial wildcard", true},
		{"invalid address", func(s *se) { s.Addresses[0] = "10.1.0.300" }, "spec.addresses[0]", "not a valid IP address or CIDR block", false},
		{"CIDR with DNS", func(s *se) {
			s.Resolution = networking.ServiceEntry_DNS
		}, "spec.addresses[0]", "only allowed with resolution NONE or STATIC", false},
		{"duplicate port number", func(s *se) { s.Ports[1].Number = 5432 }, "spec.ports[1].number", "port 5432 is already declared by ports[0]", false},
		{"duplicate port name", func(s *se) { s.Ports[1].Name = "tcp-postgres" }, "spec.ports[1].name", `port name "tcp-postgres" is already used by ports[0]`, false},
		{"port without name", func(s *se) { s.Ports[1].Name = "" }, "spec.ports[1].name", "port name is required", false},
		{"port out of range", func(s *se) { s.Ports[1].Number = 70000 }, "spec.ports[1].number", "1..65535", false},
		{"target port out of range", func(s *se) { s.Ports[1].TargetPort = 70000 }, "spec.ports[1].targetPort", "1..65535", false},
		{"unknown protocol", func(s *se) { s.Ports[1].Protocol = "FTP" }, "spec.ports[1].protocol", `unknown protocol "FTP"`, false},
		{"null port", func(s *se) { s.Ports[1] = nil }, "spec.ports[1]", "must not be null", false},
		{"STATIC endpoint with a host name", func(s *se) { s.Endpoints[0].Address = "db1.example.com" }, "spec.endpoints[0].address", "resolution STATIC needs IP addresses", false},
		{"endpoint port not declared", func(s *se) { s.Endpoints[0].Ports["grpc"] = 9000 }, "spec.endpoints[0].ports[grpc]", "not a port name of the ServiceEntry", false},
		{"endpoint port out of range", func(s *se) { s.Endpoints[0].Ports["tcp-postgres"] = 0 }, "spec.endpoints[0].ports[tcp-postgres]", "1..65535", false},
		{"endpoint without address", func(s *se) { s.Endpoints[0].Address = "" }, "spec.endpoints[0].address", "address is required", false},
		{"endpoint label", func(s *se) { s.Endpoints[0].Labels["version"] = "v1?" }, "spec.endpoints[0].labels[version]", "label value", false},
		{"unix endpoint with two ports", func(s *se) {
			s.Endpoints[0].Address, s.Endpoints[0].Ports = "unix:///var/run/db.sock", nil
		}, "spec.endpoints[0].address", "exactly one service port", false},
		{"unix endpoint with ports", func(s *se) { s.Endpoints[0].Address = "unix:///var/run/db.sock" }, "spec.endpoints[0].ports", "must not have ports", false},
		{"relative unix socket", func(s *se) {
			s.Ports = s.Ports[:1]
			s.Endpoints[0].Address, s.Endpoints[0].Ports = "unix://run/db.sock", nil
		}, "spec.endpoints[0].address", "absolute path", false},
		{"selector and endpoints", func(s *se) {
			s.WorkloadSelector = &networking.WorkloadSelector{Labels: map[string]string{"app": "db"}}
		}, "spec.workloadSelector", "workloadSelector and endpoints are mutually exclusive", false},
		{"STATIC without endpoints", func(s *se) { s.Endpoints = nil }, "spec.endpoints", "has no endpoints", true},
		{"NONE with endpoints", func(s *se) { s.Resolution = networking.ServiceEntry_NONE }, "spec.endpoints", "cannot have endpoints", false},
		{"unknown resolution", func(s *se) { s.Resolution = 9 }, "spec.resolution", "unknown value 9", false},
		{"unknown location", func(s *se) { s.Location = 7 }, "spec.location", "unknown value 7", false},
		{"several hosts with TCP", func(s *se) { s.Hosts = append(s.Hosts, "db2.internal.example.com") }, "spec.ports[0].protocol", "every port must be HTTP or TLS based", false},
		{"nobody and somebody", func(s *se) { s.ExportTo = append(s.ExportTo, ".") }, "spec.exportTo[0]", `"~" must be the only exportTo entry`, false},
		{"empty subject alt name", func(s *se) { s.SubjectAltNames = []string{""} }, "spec.subjectAltNames[0]", "must not be empty", false},
	})
}

func TestServiceEntryDNS(t *testing.T) {
	type se = networking.ServiceEntry
	valid := func(t testing.TB) *se { return fromYAML[se](t, validServiceEntryDNS) }
	runSpecCases(t, ServiceEntry, valid, []specCase[se]{
		{"wildcard host without endpoints", func(s *se) { s.Hosts[0], s.Endpoints = "*.example.com", nil }, "spec.hosts[0]", "cannot resolve", false},
		{"invalid endpoint host", func(s *se) { s.Endpoints[0].Address = "us_api.example.com" }, "spec.endpoints[0].address", "neither an IP address nor a valid host name", false},
		{"round robin with two endpoints", func(s *se) { s.Resolution = networking.ServiceEntry_DNS_ROUND_ROBIN }, "spec.endpoints", "at most one endpoint", false},
		{"DNS with unix socket", func(s *se) {
			s.Ports = s.Ports[:1]
			s.Endpoints[0].Address, s.Endpoints[0].Ports = "unix:///run/a.sock", nil
		}, "spec.endpoints[0].address", "cannot use unix domain socket endpoints", false},
		{"DYNAMIC_DNS with a plain host", func(s *se) { s.Resolution, s.Endpoints = networking.ServiceEntry_DYNAMIC_DNS, nil }, "spec.hosts[0]", "only supports wildcard hosts", false},
		{"DYNAMIC_DNS with TCP", func(s *se) {
			s.Resolution, s.Endpoints, s.Hosts = networking.ServiceEntry_DYNAMIC_DNS, nil, []string{"*.example.com"}
			s.Ports[1].Protocol = "TCP"
		}, "spec.ports[1].protocol", "DYNAMIC_DNS needs the host from HTTP or TLS", false},
	})
}

func TestServiceEntryAutoAllocationWarning(t *testing.T) {
	spec := fromYAML[networking.ServiceEntry](t, `
hosts: [db.example.com]
ports: [{number: 5432, name: tcp, protocol: TCP}]
resolution: DNS
`)
	requireClean(t, ServiceEntry(cfg(spec)))
	c := cfg(spec)
	c.Labels = map[string]string{autoAllocateLabel: "false"}
	requireWarning(t, ServiceEntry(c), "spec.ports[0].protocol", "need addresses")
}
