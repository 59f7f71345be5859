package registry

import (
	"cmp"
	"maps"
	"slices"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/config"
)

// servicesFromServiceEntry makes one service per host of a ServiceEntry.
func servicesFromServiceEntry(c config.Config) []Service {
	se, ok := c.Spec.(*networking.ServiceEntry)
	if !ok || se == nil {
		return nil
	}
	var ports []Port
	for _, p := range se.Ports {
		proto := ParseProtocol(p.Protocol)
		if p.Protocol == "" {
			proto = protocolFromPortName(p.Name)
		}
		port := Port{Name: p.Name, Number: p.Number, Protocol: proto}
		if p.TargetPort != 0 && p.TargetPort != p.Number {
			port.TargetPort = p.TargetPort
		}
		ports = append(ports, port)
	}
	slices.SortFunc(ports, func(a, b Port) int { return cmp.Compare(a.Number, b.Number) })
	var selector map[string]string
	if se.WorkloadSelector != nil {
		selector = se.WorkloadSelector.Labels
	}
	out := make([]Service, 0, len(se.Hosts))
	for _, h := range se.Hosts {
		out = append(out, Service{
			Hostname:        h,
			Namespace:       c.Namespace,
			Name:            c.Name,
			Kind:            ServiceEntryKind,
			Ports:           ports,
			Addresses:       se.Addresses,
			Resolution:      resolutionOf(se.Resolution),
			Selector:        selector,
			Labels:          c.Labels,
			MeshExternal:    se.Location == networking.ServiceEntry_MESH_EXTERNAL,
			ExportTo:        se.ExportTo,
			SubjectAltNames: se.SubjectAltNames,
		})
	}
	return out
}

func resolutionOf(r networking.ServiceEntry_Resolution) Resolution {
	switch r {
	case networking.ServiceEntry_DNS:
		return DNS
	case networking.ServiceEntry_DNS_ROUND_ROBIN:
		return DNSRoundRobin
	case networking.ServiceEntry_NONE:
		return Passthrough
	}
	return ClientSideLB
}

// serviceEntryEndpoints makes the endpoints of every host of a
// ServiceEntry: its inline endpoints; or the workloads its selector picked
// (selected, Pods and WorkloadEntries of its namespace); or, for a DNS
// service with neither, the host itself.
func serviceEntryEndpoints(c config.Config, selected []Workload) []Endpoint {
	se, ok := c.Spec.(*networking.ServiceEntry)
	if !ok || se == nil {
		return nil
	}
	origin := "ServiceEntry " + c.ResourceName()
	var out []Endpoint
	for _, svc := range servicesFromServiceEntry(c) {
		switch {
		case len(se.Endpoints) > 0:
			for _, we := range se.Endpoints {
				out = append(out, inlineEndpoint(&svc, origin, c.Namespace, we))
			}
		case se.WorkloadSelector != nil:
			for _, w := range selected {
				ports := map[string]uint32{}
				for _, p := range svc.Ports {
					if n, ok := w.Ports[p.Name]; ok && w.Kind == WorkloadEntryWorkload {
						ports[p.Name] = n
						continue
					}
					ports[p.Name] = cmp.Or(p.TargetPort, p.Number)
				}
				out = append(out, workloadEndpoints(&svc, origin, w, ports)...)
			}
		case svc.Resolution == DNS || svc.Resolution == DNSRoundRobin:
			if len(svc.Hostname) > 0 && svc.Hostname[0] == '*' {
				continue // a wildcard host names nothing to resolve
			}
			ports := map[string]uint32{}
			for _, p := range svc.Ports {
				ports[p.Name] = cmp.Or(p.TargetPort, p.Number)
			}
			out = append(out, Endpoint{
				Service: svc.ResourceName(), Hostname: svc.Hostname, Address: svc.Hostname, Ports: ports,
				Weight: 1, Origin: origin,
			})
		}
	}
	return out
}

// inlineEndpoint is an endpoint written inside a ServiceEntry. It serves
// each port on the port of the same name in its ports map, else on the
// service port's target port, else on the port itself.
func inlineEndpoint(svc *Service, origin, namespace string, we *networking.WorkloadEntry) Endpoint {
	ports := map[string]uint32{}
	for _, p := range svc.Ports {
		if n, ok := we.Ports[p.Name]; ok {
			ports[p.Name] = n
			continue
		}
		ports[p.Name] = cmp.Or(p.TargetPort, p.Number)
	}
	sa := we.ServiceAccount
	return Endpoint{
		Service: svc.ResourceName(), Hostname: svc.Hostname, Address: we.Address, Ports: ports,
		Labels: we.Labels, ServiceAccount: sa, Locality: ParseLocality(we.Locality), Network: we.Network,
		Health: Healthy, Weight: max(we.Weight, 1), Origin: origin,
	}
}

// workloadFromWorkloadEntry makes the workload of a WorkloadEntry.
func workloadFromWorkloadEntry(c config.Config) *Workload {
	we, ok := c.Spec.(*networking.WorkloadEntry)
	if !ok || we == nil {
		return nil
	}
	w := &Workload{
		Kind:           WorkloadEntryWorkload,
		Name:           c.Name,
		Namespace:      c.Namespace,
		Labels:         we.Labels,
		ServiceAccount: cmp.Or(we.ServiceAccount, "default"),
		Locality:       ParseLocality(we.Locality),
		Network:        we.Network,
		Weight:         max(we.Weight, 1),
		Ready:          true,
	}
	if we.Address != "" {
		w.Addresses = []string{we.Address}
	}
	if len(we.Ports) > 0 {
		w.Ports = maps.Clone(we.Ports)
	}
	return w
}

// selectorOf is a ServiceEntry's workload selector labels, nil without one.
func selectorOf(c config.Config) map[string]string {
	se, ok := c.Spec.(*networking.ServiceEntry)
	if !ok || se == nil || se.WorkloadSelector == nil {
		return nil
	}
	if se.WorkloadSelector.Labels == nil {
		return map[string]string{}
	}
	return se.WorkloadSelector.Labels
}
