package registry

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
)

// Labels and annotations that the registry reads.
const (
	// serviceNameLabel links an EndpointSlice to its Service.
	serviceNameLabel = discoveryv1.LabelServiceName
	// exportToAnnotation limits where a Kubernetes Service is visible.
	exportToAnnotation = "networking.istio.io/exportTo"
	// localityLabel gives a workload's locality as region.zone.subzone.
	localityLabel = "istio-locality"
	// networkLabel gives a workload's network.
	networkLabel = "topology.istio.io/network"
	regionLabel  = corev1.LabelTopologyRegion
	zoneLabel    = corev1.LabelTopologyZone
)

// serviceFromKubernetes makes the service of a Kubernetes Service. An
// ExternalName service resolves its external name by DNS; a headless one
// passes traffic through to the address the client picked.
func serviceFromKubernetes(c config.Config, domain string) *Service {
	spec, ok := c.Spec.(*corev1.ServiceSpec)
	if !ok || spec == nil {
		return nil
	}
	s := &Service{
		Hostname:   KubernetesHostname(c.Name, c.Namespace, domainOf(c, domain)),
		Namespace:  c.Namespace,
		Name:       c.Name,
		Kind:       KubernetesService,
		Resolution: ClientSideLB,
		Selector:   spec.Selector,
		Labels:     c.Labels,
	}
	for _, p := range spec.Ports {
		port := Port{Name: p.Name, Number: uint32(p.Port), Protocol: KubernetesPortProtocol(p.Protocol, p.AppProtocol, p.Name)}
		if p.TargetPort.IntValue() > 0 && uint32(p.TargetPort.IntValue()) != port.Number {
			port.TargetPort = uint32(p.TargetPort.IntValue())
		}
		s.Ports = append(s.Ports, port)
	}
	slices.SortFunc(s.Ports, func(a, b Port) int { return cmp.Compare(a.Number, b.Number) })
	switch {
	case spec.Type == corev1.ServiceTypeExternalName:
		s.Resolution = DNS
		s.MeshExternal = true
	case spec.ClusterIP == corev1.ClusterIPNone:
		s.Resolution = Passthrough
	default:
		s.Addresses = clusterIPs(spec)
	}
	if v := c.Annotations[exportToAnnotation]; v != "" {
		for _, ns := range strings.Split(v, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				s.ExportTo = append(s.ExportTo, ns)
			}
		}
	}
	return s
}

func clusterIPs(spec *corev1.ServiceSpec) []string {
	if len(spec.ClusterIPs) > 0 {
		return slices.Clone(spec.ClusterIPs)
	}
	if spec.ClusterIP != "" {
		return []string{spec.ClusterIP}
	}
	return nil
}

// externalNameEndpoint is the one endpoint of an ExternalName service: the
// external name, on every port.
func externalNameEndpoint(c config.Config, svc *Service) []Endpoint {
	spec := c.Spec.(*corev1.ServiceSpec)
	if spec.Type != corev1.ServiceTypeExternalName || spec.ExternalName == "" {
		return nil
	}
	ports := map[string]uint32{}
	for _, p := range svc.Ports {
		ports[p.Name] = cmp.Or(p.TargetPort, p.Number)
	}
	return []Endpoint{{
		Service: svc.ResourceName(), Hostname: svc.Hostname, Address: spec.ExternalName, Ports: ports,
		Weight: 1, Origin: "Service " + c.ResourceName(),
	}}
}

// domainOf is the DNS domain for an object: the registry's, else the one
// its source recorded, else the default.
func domainOf(c config.Config, domain string) string {
	return cmp.Or(domain, c.Domain, DefaultDomain)
}

// workloadFromPod makes the workload of a Pod. A Pod without an IP yet is
// kept (its labels matter to selectors) with no addresses.
func workloadFromPod(c config.Config) *Workload {
	spec, ok := c.Spec.(*corev1.PodSpec)
	if !ok || spec == nil {
		return nil
	}
	w := &Workload{
		Kind:           PodWorkload,
		Name:           c.Name,
		Namespace:      c.Namespace,
		Labels:         c.Labels,
		ServiceAccount: cmp.Or(spec.ServiceAccountName, "default"),
		Node:           spec.NodeName,
		Locality:       localityFromLabels(c.Labels),
		Network:        c.Labels[networkLabel],
		Weight:         1,
	}
	for _, ctr := range spec.Containers {
		for _, p := range ctr.Ports {
			if p.Name != "" {
				if w.Ports == nil {
					w.Ports = map[string]uint32{}
				}
				w.Ports[p.Name] = uint32(p.ContainerPort)
			}
		}
	}
	if status, ok := c.Status.(*corev1.PodStatus); ok && status != nil {
		for _, ip := range status.PodIPs {
			w.Addresses = append(w.Addresses, ip.IP)
		}
		if len(w.Addresses) == 0 && status.PodIP != "" {
			w.Addresses = []string{status.PodIP}
		}
		for _, cond := range status.Conditions {
			if cond.Type == corev1.PodReady {
				w.Ready = cond.Status == corev1.ConditionTrue
			}
		}
		if status.Phase == corev1.PodSucceeded || status.Phase == corev1.PodFailed {
			w.Ready = false
		}
	}
	return w
}

// localityFromLabels reads a locality from the istio-locality label, else
// from the topology labels when a workload carries them (Pods usually do
// not: Kubernetes puts them on Nodes).
func localityFromLabels(labels map[string]string) Locality {
	if v := labels[localityLabel]; v != "" {
		return ParseLocality(v)
	}
	return Locality{Region: labels[regionLabel], Zone: labels[zoneLabel]}
}

// endpointsFromSlice makes the endpoints of one EndpointSlice. pods holds
// the workloads its endpoints' targetRefs name, by key; what a Pod says
// (labels, service account, locality) completes what the slice says
// (address, ports, conditions, zone).
func endpointsFromSlice(c config.Config, domain string, pods map[string]Workload) []Endpoint {
	spec, ok := c.Spec.(*schema.EndpointSliceSpec)
	if !ok || spec == nil || spec.AddressType == discoveryv1.AddressTypeFQDN {
		return nil
	}
	svcName := c.Labels[serviceNameLabel]
	if svcName == "" {
		return nil
	}
	hostname := KubernetesHostname(svcName, c.Namespace, domainOf(c, domain))
	ports := map[string]uint32{}
	for _, p := range spec.Ports {
		if p.Port == nil {
			continue
		}
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		ports[name] = uint32(*p.Port)
	}
	origin := "EndpointSlice " + c.ResourceName()
	var out []Endpoint
	for _, e := range spec.Endpoints {
		base := Endpoint{
			Service:  ServiceKey(c.Namespace, hostname),
			Hostname: hostname,
			Ports:    ports,
			Health:   sliceHealth(e.Conditions),
			Weight:   1,
			Origin:   origin,
		}
		if e.Zone != nil {
			base.Locality.Zone = *e.Zone
		}
		if ref := e.TargetRef; ref != nil && ref.Kind == "Pod" {
			key := WorkloadKey(PodWorkload, cmp.Or(ref.Namespace, c.Namespace), ref.Name)
			base.Workload = key
			if pod, ok := pods[key]; ok {
				base.Labels = pod.Labels
				base.ServiceAccount = pod.ServiceAccount
				base.Network = pod.Network
				base.Locality = mergeLocality(pod.Locality, base.Locality)
			}
		}
		for _, addr := range e.Addresses {
			ep := base
			ep.Address = addr
			out = append(out, ep)
		}
	}
	return out
}

// podKeys are the workload keys of the Pods a slice's endpoints name.
func podKeys(c config.Config) []string {
	spec, ok := c.Spec.(*schema.EndpointSliceSpec)
	if !ok || spec == nil {
		return nil
	}
	var keys []string
	for _, e := range spec.Endpoints {
		if ref := e.TargetRef; ref != nil && ref.Kind == "Pod" {
			keys = append(keys, WorkloadKey(PodWorkload, cmp.Or(ref.Namespace, c.Namespace), ref.Name))
		}
	}
	return keys
}

// mergeLocality fills what a workload's locality lacks from the slice's
// (the zone the EndpointSlice controller copied from the node).
func mergeLocality(w, slice Locality) Locality {
	if w.Zone == "" {
		w.Zone = slice.Zone
	}
	return w
}

// sliceHealth reads EndpointSlice conditions as Kubernetes defines them:
// nil ready and serving mean true, nil terminating means false. A ready
// endpoint is healthy; a terminating one that still serves is draining;
// anything else is unhealthy.
func sliceHealth(c discoveryv1.EndpointConditions) Health {
	ready := c.Ready == nil || *c.Ready
	serving := c.Serving == nil || *c.Serving
	terminating := c.Terminating != nil && *c.Terminating
	switch {
	case ready && !terminating:
		return Healthy
	case terminating && serving:
		return Draining
	}
	return Unhealthy
}

// workloadEntryEndpoints are the endpoints of a Kubernetes Service on the
// WorkloadEntries its selector picks in its namespace (Pods come through
// EndpointSlices). A WorkloadEntry serves a service port on its port of
// the same name, else on the target port, else on the port itself.
func workloadEntryEndpoints(svc *Service, origin string, workloads []Workload) []Endpoint {
	var out []Endpoint
	for _, w := range workloads {
		ports := map[string]uint32{}
		for _, p := range svc.Ports {
			if n, ok := w.Ports[p.Name]; ok && p.Name != "" {
				ports[p.Name] = n
				continue
			}
			ports[p.Name] = cmp.Or(p.TargetPort, p.Number)
		}
		out = append(out, workloadEndpoints(svc, origin, w, ports)...)
	}
	return out
}

// workloadEndpoints makes one endpoint of svc per address of w.
func workloadEndpoints(svc *Service, origin string, w Workload, ports map[string]uint32) []Endpoint {
	var out []Endpoint
	for _, addr := range w.Addresses {
		health := Healthy
		if !w.Ready {
			health = Unhealthy
		}
		out = append(out, Endpoint{
			Service: svc.ResourceName(), Hostname: svc.Hostname, Address: addr, Ports: ports,
			Labels: w.Labels, ServiceAccount: w.ServiceAccount, Locality: w.Locality, Network: w.Network,
			Health: health, Weight: max(w.Weight, 1), Workload: w.ResourceName(), Origin: origin,
		})
	}
	return out
}
