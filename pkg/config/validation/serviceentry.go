package validation

import (
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/config"
)

// autoAllocateLabel opts a ServiceEntry out of (or into) automatic
// address allocation.
const autoAllocateLabel = "networking.istio.io/enable-autoallocate-ip"

// Limits of the ServiceEntry schema.
const (
	maxServiceEntryHosts     = 256
	maxServiceEntryAddresses = 256
	maxServiceEntryPorts     = 256
	maxServiceEntryEndpoints = 4096
)

// ServiceEntry validates an Istio ServiceEntry: hosts (no "*", no
// wildcard where DNS must resolve them), addresses (IPs or CIDRs, CIDRs
// only without DNS), ports (unique numbers and names, known protocols),
// the rules of each resolution (STATIC endpoints are IPs, DNS endpoints
// are names or IPs, NONE has no endpoints, DNS_ROUND_ROBIN at most one),
// endpoints that use declared port names, a workload selector exclusive
// with endpoints, location and exportTo.
func ServiceEntry(c config.Config) Result {
	return validateSpec(c, "ServiceEntry", namespacedMeta, checkServiceEntry)
}

// checkServiceEntry checks the spec of a ServiceEntry (see ServiceEntry).
func checkServiceEntry(c config.Config, se *networking.ServiceEntry, r *Result) {
	checkServiceEntryHosts(r, se)
	checkServiceEntryAddresses(r, se)
	portNames := checkServiceEntryPorts(r, c, se)
	checkEnum(r, "spec.location", se.Location, networking.ServiceEntry_Location_name)
	if sel := se.WorkloadSelector; sel != nil {
		if len(sel.Labels) == 0 {
			r.Warnf("spec.workloadSelector.labels", "the workload selector has no labels, so it selects every workload in the namespace")
		}
		checkSelectorLabels(r, "spec.workloadSelector.labels", sel.Labels)
		if len(se.Endpoints) > 0 {
			r.Errorf("spec.workloadSelector", "workloadSelector and endpoints are mutually exclusive")
		}
	}
	if len(se.Endpoints) > maxServiceEntryEndpoints {
		r.Errorf("spec.endpoints", "a ServiceEntry may have at most %d endpoints, not %d", maxServiceEntryEndpoints, len(se.Endpoints))
	}
	checkResolution(r, se, portNames)
	checkMultipleHostsProtocols(r, se)
	checkNonEmptyStrings(r, "spec.subjectAltNames", se.SubjectAltNames)
	checkExportTo(r, "spec.exportTo", c.Namespace, se.ExportTo, true)
}

// checkServiceEntryHosts checks the hosts: at least one, none "*".
func checkServiceEntryHosts(r *Result, se *networking.ServiceEntry) {
	if len(se.Hosts) == 0 {
		r.Errorf("spec.hosts", "a ServiceEntry needs at least one host")
	}
	if len(se.Hosts) > maxServiceEntryHosts {
		r.Errorf("spec.hosts", "a ServiceEntry may have at most %d hosts, not %d", maxServiceEntryHosts, len(se.Hosts))
	}
	for i, h := range se.Hosts {
		p := idx("spec.hosts", i)
		switch {
		case h == "*":
			r.Errorf(p, `host "*" would capture all traffic; a ServiceEntry host must name a service, such as *.example.com`)
		default:
			if msg := hostError(h); msg != "" {
				r.Errorf(p, "%s", msg)
			} else if isPartialWildcard(h) {
				r.Warnf(p, "host %q has a partial wildcard; only a whole first label (*.example.com) matches as a wildcard", h)
			}
		}
	}
}

// checkServiceEntryAddresses checks the addresses: IPs or CIDR blocks,
// and CIDR blocks only for resolutions that do not resolve the hosts.
func checkServiceEntryAddresses(r *Result, se *networking.ServiceEntry) {
	if len(se.Addresses) > maxServiceEntryAddresses {
		r.Errorf("spec.addresses", "a ServiceEntry may have at most %d addresses, not %d", maxServiceEntryAddresses, len(se.Addresses))
	}
	for i, a := range se.Addresses {
		p := idx("spec.addresses", i)
		checkIPOrCIDR(r, p, a)
		if strings.Contains(a, "/") && se.Resolution != networking.ServiceEntry_NONE && se.Resolution != networking.ServiceEntry_STATIC {
			r.Errorf(p, "CIDR address %q is only allowed with resolution NONE or STATIC, not %s", a, se.Resolution)
		}
	}
}

// checkServiceEntryPorts checks the ports and returns their names.
func checkServiceEntryPorts(r *Result, c config.Config, se *networking.ServiceEntry) map[string]bool {
	if len(se.Ports) > maxServiceEntryPorts {
		r.Errorf("spec.ports", "a ServiceEntry may have at most %d ports, not %d", maxServiceEntryPorts, len(se.Ports))
	}
	names := map[string]bool{}
	nameAt, numberAt := map[string]int{}, map[uint32]int{}
	noAutoAllocation := c.Labels[autoAllocateLabel] == "false"
	for i, port := range se.Ports {
		p := idx("spec.ports", i)
		if port == nil {
			r.Errorf(p, "port must not be null")
			continue
		}
		checkPortName(r, fld(p, "name"), port.Name)
		if j, dup := nameAt[port.Name]; dup && port.Name != "" {
			r.Errorf(fld(p, "name"), "port name %q is already used by ports[%d]; port names must be unique", port.Name, j)
		} else {
			nameAt[port.Name] = i
		}
		names[port.Name] = true
		checkPort(r, fld(p, "number"), port.Number)
		if j, dup := numberAt[port.Number]; dup {
			r.Errorf(fld(p, "number"), "port %d is already declared by ports[%d]; port numbers must be unique", port.Number, j)
		} else {
			numberAt[port.Number] = i
		}
		if port.TargetPort != 0 {
			checkPort(r, fld(p, "targetPort"), port.TargetPort)
		}
		checkProtocol(r, fld(p, "protocol"), port.Protocol, true)
		if noAutoAllocation && len(se.Addresses) == 0 && (port.Protocol == "" || strings.EqualFold(port.Protocol, "TCP")) {
			r.Warnf(fld(p, "protocol"), "TCP ports need addresses to be told apart when address auto-allocation is disabled")
		}
	}
	return names
}

// checkResolution checks the endpoints against the resolution.
func checkResolution(r *Result, se *networking.ServiceEntry, portNames map[string]bool) {
	switch se.Resolution {
	case networking.ServiceEntry_NONE:
		if len(se.Endpoints) > 0 {
			r.Errorf("spec.endpoints", "resolution NONE forwards to the original destination and cannot have endpoints")
		}
		if se.WorkloadSelector != nil {
			r.Warnf("spec.workloadSelector", "workloadSelector has no effect with resolution NONE")
		}
	case networking.ServiceEntry_STATIC:
		if len(se.Endpoints) == 0 && se.WorkloadSelector == nil {
			r.Warnf("spec.endpoints", "resolution STATIC with no endpoints and no workloadSelector: the service has no endpoints")
		}
		checkEndpoints(r, se, workloadEntryRules{servicePorts: portNames})
	case networking.ServiceEntry_DNS, networking.ServiceEntry_DNS_ROUND_ROBIN:
		if len(se.Endpoints) == 0 {
			for i, h := range se.Hosts {
				if strings.Contains(h, "*") && h != "*" {
					r.Errorf(idx("spec.hosts", i), "host %q has a wildcard, which resolution %s cannot resolve; add endpoints or use resolution NONE or DYNAMIC_DNS", h, se.Resolution)
				}
			}
		}
		if se.Resolution == networking.ServiceEntry_DNS_ROUND_ROBIN && len(se.Endpoints) > 1 {
			r.Errorf("spec.endpoints", "resolution DNS_ROUND_ROBIN allows at most one endpoint, not %d", len(se.Endpoints))
		}
		checkEndpoints(r, se, workloadEntryRules{servicePorts: portNames, allowHostname: true})
		for i, e := range se.Endpoints {
			if strings.HasPrefix(e.GetAddress(), unixPrefix) {
				r.Errorf(idx("spec.endpoints", i)+".address", "resolution %s cannot use unix domain socket endpoints", se.Resolution)
			}
		}
	case networking.ServiceEntry_DYNAMIC_DNS:
		for i, h := range se.Hosts {
			if !strings.HasPrefix(h, "*.") {
				r.Errorf(idx("spec.hosts", i), "resolution DYNAMIC_DNS only supports wildcard hosts such as *.example.com, not %q", h)
			}
		}
		if len(se.Endpoints) > 0 {
			r.Warnf("spec.endpoints", "resolution DYNAMIC_DNS resolves the requested host; endpoints are ignored")
		}
		for i, port := range se.Ports {
			if c := protocolClass(port.GetProtocol()); port != nil && c != classHTTP && c != classTLS {
				r.Errorf(idx("spec.ports", i)+".protocol", "resolution DYNAMIC_DNS needs the host from HTTP or TLS; protocol %q cannot carry it", port.Protocol)
			}
		}
	default:
		checkEnum(r, "spec.resolution", se.Resolution, networking.ServiceEntry_Resolution_name)
	}
}

// checkEndpoints checks each endpoint as a WorkloadEntry.
func checkEndpoints(r *Result, se *networking.ServiceEntry, rules workloadEntryRules) {
	for i, e := range se.Endpoints {
		p := idx("spec.endpoints", i)
		if e == nil {
			r.Errorf(p, "endpoint must not be null")
			continue
		}
		checkWorkloadEntry(r, p, e, rules)
		if strings.HasPrefix(e.Address, unixPrefix) && len(se.Ports) != 1 {
			r.Errorf(fld(p, "address"), "a unix domain socket endpoint needs exactly one service port, not %d", len(se.Ports))
		}
	}
}

// checkMultipleHostsProtocols checks that several hosts are only combined
// with protocols that tell them apart (HTTP by authority, TLS by SNI),
// unless the resolution is NONE.
func checkMultipleHostsProtocols(r *Result, se *networking.ServiceEntry) {
	if se.Resolution == networking.ServiceEntry_NONE || len(se.Hosts) < 2 {
		return
	}
	for i, port := range se.Ports {
		if port == nil {
			continue
		}
		if c := protocolClass(port.Protocol); c != classHTTP && c != classTLS {
			r.Errorf(idx("spec.ports", i)+".protocol", "with several hosts and resolution %s, every port must be HTTP or TLS based so the host can be told apart; protocol %q cannot", se.Resolution, port.Protocol)
		}
	}
}
