package validation

import (
	"net/netip"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshcp/meshcp/pkg/config"
)

// Kubernetes objects from the API server have passed its validation; these
// checks matter for objects read from files, and are the ones meshcp
// relies on.

// Namespace validates a Kubernetes Namespace: its name is a DNS-1123
// label, and its labels and annotations are valid.
func Namespace(c config.Config) Result {
	return validateSpec(c, "Namespace", metaRules{name: nameLabel, clusterScoped: true}, func(_ config.Config, ns *corev1.NamespaceSpec, r *Result) {
		for i, f := range ns.Finalizers {
			if f == "" {
				r.Errorf(idx("spec.finalizers", i), "finalizer name must not be empty")
			}
		}
	})
}

// Service validates a Kubernetes Service: its name is a DNS-1035 label,
// the type is known, ports are 1..65535 with known protocols, named (and
// uniquely) when there are several, with valid target ports and
// appProtocols; the selector's labels are valid and cluster and external
// IPs are addresses.
func Service(c config.Config) Result {
	return validateSpec(c, "Service", metaRules{name: nameDNS1035}, checkService)
}

// checkService checks the spec of a Service (see Service).
func checkService(_ config.Config, s *corev1.ServiceSpec, r *Result) {
	checkLabels(r, "spec.selector", s.Selector)
	switch s.Type {
	case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	case corev1.ServiceTypeExternalName:
		checkExternalName(r, s)
	default:
		r.Errorf("spec.type", "type %q must be ClusterIP, NodePort, LoadBalancer or ExternalName", s.Type)
	}
	headless := s.ClusterIP == corev1.ClusterIPNone
	if len(s.Ports) == 0 && !headless && s.Type != corev1.ServiceTypeExternalName {
		r.Errorf("spec.ports", "a Service needs at least one port (only headless and ExternalName Services may have none)")
	}
	checkServicePorts(r, s)
	checkClusterIPs(r, s)
	for i, ip := range s.ExternalIPs {
		if !isIP(ip) {
			r.Errorf(idx("spec.externalIPs", i), "%q is not an IP address", ip)
		}
	}
	for i, cidr := range s.LoadBalancerSourceRanges {
		if !isCIDR(strings.TrimSpace(cidr)) {
			r.Errorf(idx("spec.loadBalancerSourceRanges", i), "%q is not a CIDR block such as 10.0.0.0/8", cidr)
		}
	}
	switch s.SessionAffinity {
	case "", corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP:
	default:
		r.Errorf("spec.sessionAffinity", "sessionAffinity %q must be None or ClientIP", s.SessionAffinity)
	}
}

// checkExternalName checks an ExternalName Service: a DNS name, no
// cluster IP.
func checkExternalName(r *Result, s *corev1.ServiceSpec) {
	name := strings.TrimSuffix(s.ExternalName, ".")
	if name == "" {
		r.Errorf("spec.externalName", "an ExternalName Service needs externalName")
	} else if msgs := k8svalidation.IsDNS1123Subdomain(strings.ToLower(name)); len(msgs) > 0 {
		r.Errorf("spec.externalName", "externalName %q is not a DNS name: %s", s.ExternalName, msgs[0])
	}
	if s.ClusterIP != "" || len(s.ClusterIPs) > 0 {
		r.Errorf("spec.clusterIP", "an ExternalName Service has no cluster IP; remove clusterIP(s)")
	}
}

// checkServicePorts checks the ports of a Service.
func checkServicePorts(r *Result, s *corev1.ServiceSpec) {
	names := map[string]int{}
	type portKey struct {
		port     int32
		protocol corev1.Protocol
	}
	seen := map[portKey]int{}
	for i, port := range s.Ports {
		p := idx("spec.ports", i)
		switch {
		case port.Name == "" && len(s.Ports) > 1:
			r.Errorf(fld(p, "name"), "every port needs a name when a Service has several")
		case port.Name != "":
			checkPortName(r, fld(p, "name"), port.Name)
			if j, dup := names[port.Name]; dup {
				r.Errorf(fld(p, "name"), "port name %q is already used by ports[%d]; port names must be unique", port.Name, j)
			} else {
				names[port.Name] = i
			}
		}
		checkPort(r, fld(p, "port"), port.Port)
		protocol := checkKubeProtocol(r, fld(p, "protocol"), port.Protocol)
		if j, dup := seen[portKey{port.Port, protocol}]; dup {
			r.Errorf(p, "port %d/%s is already declared by ports[%d]", port.Port, protocol, j)
		} else {
			seen[portKey{port.Port, protocol}] = i
		}
		checkTargetPort(r, fld(p, "targetPort"), port.TargetPort)
		if port.NodePort != 0 {
			checkPort(r, fld(p, "nodePort"), port.NodePort)
			if s.Type != corev1.ServiceTypeNodePort && s.Type != corev1.ServiceTypeLoadBalancer {
				r.Errorf(fld(p, "nodePort"), "nodePort needs type NodePort or LoadBalancer")
			}
		}
		if port.AppProtocol != nil {
			checkAppProtocol(r, fld(p, "appProtocol"), *port.AppProtocol)
		}
	}
}

// checkKubeProtocol checks a Kubernetes port protocol ("" means TCP) and
// returns it with the default applied.
func checkKubeProtocol(r *Result, p string, protocol corev1.Protocol) corev1.Protocol {
	switch protocol {
	case "":
		return corev1.ProtocolTCP
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
	default:
		r.Errorf(p, "protocol %q must be TCP, UDP or SCTP", protocol)
	}
	return protocol
}

// checkTargetPort checks a target port: a number 1..65535 (0: the same as
// port) or the name of a container port.
func checkTargetPort(r *Result, p string, tp intstr.IntOrString) {
	if tp.Type == intstr.String {
		for _, msg := range k8svalidation.IsValidPortName(tp.StrVal) {
			r.Errorf(p, "targetPort %q is not a valid port name: %s", tp.StrVal, msg)
		}
		return
	}
	if tp.IntVal != 0 {
		checkPort(r, p, tp.IntVal)
	}
}

// checkAppProtocol checks an appProtocol: an IANA service name or a
// domain-prefixed name such as kubernetes.io/h2c.
func checkAppProtocol(r *Result, p, appProtocol string) {
	for _, msg := range content.IsLabelKey(appProtocol) {
		r.Errorf(p, "appProtocol %q is invalid: %s", appProtocol, msg)
	}
}

// checkClusterIPs checks clusterIP and clusterIPs: "None" or addresses,
// the first of clusterIPs being clusterIP.
func checkClusterIPs(r *Result, s *corev1.ServiceSpec) {
	if ip := s.ClusterIP; ip != "" && ip != corev1.ClusterIPNone && !isIP(ip) {
		r.Errorf("spec.clusterIP", "clusterIP %q must be an IP address, \"None\" or empty", ip)
	}
	for i, ip := range s.ClusterIPs {
		if ip != corev1.ClusterIPNone && !isIP(ip) {
			r.Errorf(idx("spec.clusterIPs", i), "%q must be an IP address or \"None\"", ip)
		}
	}
	if len(s.ClusterIPs) > 0 && s.ClusterIP != "" && s.ClusterIPs[0] != s.ClusterIP {
		r.Errorf("spec.clusterIPs[0]", "clusterIPs[0] %q must equal clusterIP %q", s.ClusterIPs[0], s.ClusterIP)
	}
	if len(s.ClusterIPs) > 2 {
		r.Errorf("spec.clusterIPs", "at most 2 clusterIPs (one per IP family) are allowed, not %d", len(s.ClusterIPs))
	}
}

// Pod validates a Kubernetes Pod: its name, and containers with unique
// DNS-1123 label names, an image, and ports in range with known protocols
// and valid, unique names.
func Pod(c config.Config) Result {
	return validateSpec(c, "Pod", namespacedMeta, checkPod)
}

// checkPod checks the spec of a Pod (see Pod).
func checkPod(_ config.Config, pod *corev1.PodSpec, r *Result) {
	if len(pod.Containers) == 0 {
		r.Errorf("spec.containers", "a Pod needs at least one container")
	}
	names := map[string]string{}
	for i := range pod.InitContainers {
		checkContainer(r, idx("spec.initContainers", i), &pod.InitContainers[i], names)
	}
	for i := range pod.Containers {
		checkContainer(r, idx("spec.containers", i), &pod.Containers[i], names)
	}
	switch pod.RestartPolicy {
	case "", corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	default:
		r.Errorf("spec.restartPolicy", "restartPolicy %q must be Always, OnFailure or Never", pod.RestartPolicy)
	}
}

// checkContainer checks one container; names maps the container names
// seen so far to their paths.
func checkContainer(r *Result, p string, c *corev1.Container, names map[string]string) {
	switch {
	case c.Name == "":
		r.Errorf(fld(p, "name"), "container name is required")
	default:
		for _, msg := range k8svalidation.IsDNS1123Label(c.Name) {
			r.Errorf(fld(p, "name"), "container name %q is not a valid DNS-1123 label: %s", c.Name, msg)
		}
		if other, dup := names[c.Name]; dup {
			r.Errorf(fld(p, "name"), "container name %q is already used by %s; container names must be unique in a Pod", c.Name, other)
		} else {
			names[c.Name] = p
		}
	}
	if c.Image == "" {
		r.Errorf(fld(p, "image"), "container image is required")
	}
	portNames := map[string]int{}
	for i, port := range c.Ports {
		pp := idx(fld(p, "ports"), i)
		checkPort(r, fld(pp, "containerPort"), port.ContainerPort)
		if port.HostPort != 0 {
			checkPort(r, fld(pp, "hostPort"), port.HostPort)
		}
		checkKubeProtocol(r, fld(pp, "protocol"), port.Protocol)
		if port.Name == "" {
			continue
		}
		for _, msg := range k8svalidation.IsValidPortName(port.Name) {
			r.Errorf(fld(pp, "name"), "port name %q is invalid: %s", port.Name, msg)
		}
		if j, dup := portNames[port.Name]; dup {
			r.Errorf(fld(pp, "name"), "port name %q is already used by ports[%d]; port names must be unique in a container", port.Name, j)
		} else {
			portNames[port.Name] = i
		}
	}
}

// Limits of EndpointSlices.
const (
	maxSliceEndpoints = 1000
	maxSliceAddresses = 100
	maxSlicePorts     = 100
)

// EndpointSlice validates a Kubernetes EndpointSlice held as the spec of
// a Config: a *discoveryv1.EndpointSlice, or a pointer to a struct with
// AddressType, Endpoints and Ports fields of the discoveryv1 types (the
// spec type of package schema, which cannot be named here without an
// import cycle). See EndpointSliceFields for the rules.
func EndpointSlice(c config.Config) Result {
	if s, ok := c.Spec.(*discoveryv1.EndpointSlice); ok && s != nil {
		return EndpointSliceFields(c, s.AddressType, s.Endpoints, s.Ports)
	}
	v := reflect.ValueOf(c.Spec)
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		at, okAT := fieldOf[discoveryv1.AddressType](v.Elem(), "AddressType")
		eps, okEP := fieldOf[[]discoveryv1.Endpoint](v.Elem(), "Endpoints")
		ports, okP := fieldOf[[]discoveryv1.EndpointPort](v.Elem(), "Ports")
		if okAT && okEP && okP {
			return EndpointSliceFields(c, at, eps, ports)
		}
	}
	res := checkMeta(c, namespacedMeta)
	res.Errorf("spec", "the spec of an EndpointSlice must hold addressType, endpoints and ports, not be a %T", c.Spec)
	return res
}

// fieldOf returns the field name of struct value v if it has type T.
func fieldOf[T any](v reflect.Value, name string) (T, bool) {
	var zero T
	f := v.FieldByName(name)
	if !f.IsValid() || !f.CanInterface() {
		return zero, false
	}
	t, ok := f.Interface().(T)
	return t, ok
}

// EndpointSliceFields validates the fields of a Kubernetes EndpointSlice
// (with the metadata of c): a known address type, endpoints with 1..100
// addresses of that type, valid hostnames and node names, and ports with
// unique DNS-1123 label names, numbers 1..65535 and known protocols.
func EndpointSliceFields(c config.Config, addressType discoveryv1.AddressType, endpoints []discoveryv1.Endpoint, ports []discoveryv1.EndpointPort) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res.Errorf("spec", "%sthe EndpointSlice validator panicked: %v", internalErrorPrefix, p)
		}
	}()
	res = checkMeta(c, namespacedMeta)
	r := &res
	switch addressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN:
	default:
		r.Errorf("addressType", "addressType %q must be IPv4, IPv6 or FQDN", addressType)
	}
	if len(endpoints) > maxSliceEndpoints {
		r.Errorf("endpoints", "at most %d endpoints are allowed, not %d", maxSliceEndpoints, len(endpoints))
	}
	for i := range endpoints {
		checkSliceEndpoint(r, idx("endpoints", i), &endpoints[i], addressType)
	}
	checkSlicePorts(r, ports)
	return res
}

// checkSliceEndpoint checks one endpoint of an EndpointSlice.
func checkSliceEndpoint(r *Result, p string, e *discoveryv1.Endpoint, addressType discoveryv1.AddressType) {
	switch {
	case len(e.Addresses) == 0:
		r.Errorf(fld(p, "addresses"), "an endpoint needs at least one address")
	case len(e.Addresses) > maxSliceAddresses:
		r.Errorf(fld(p, "addresses"), "at most %d addresses are allowed, not %d", maxSliceAddresses, len(e.Addresses))
	}
	for i, a := range e.Addresses {
		checkSliceAddress(r, idx(fld(p, "addresses"), i), a, addressType)
	}
	if e.Hostname != nil {
		for _, msg := range k8svalidation.IsDNS1123Label(*e.Hostname) {
			r.Errorf(fld(p, "hostname"), "hostname %q is not a valid DNS-1123 label: %s", *e.Hostname, msg)
		}
	}
	if e.NodeName != nil {
		for _, msg := range k8svalidation.IsDNS1123Subdomain(*e.NodeName) {
			r.Errorf(fld(p, "nodeName"), "nodeName %q is not a valid node name: %s", *e.NodeName, msg)
		}
	}
}

// checkSliceAddress checks an address is of the slice's address type.
func checkSliceAddress(r *Result, p, a string, addressType discoveryv1.AddressType) {
	switch addressType {
	case discoveryv1.AddressTypeIPv4:
		if ip, err := netip.ParseAddr(a); err != nil || !ip.Is4() {
			r.Errorf(p, "%q is not an IPv4 address", a)
		}
	case discoveryv1.AddressTypeIPv6:
		if ip, err := netip.ParseAddr(a); err != nil || !ip.Is6() || ip.Is4In6() {
			r.Errorf(p, "%q is not an IPv6 address", a)
		}
	case discoveryv1.AddressTypeFQDN:
		if msgs := k8svalidation.IsDNS1123Subdomain(strings.ToLower(a)); len(msgs) > 0 {
			r.Errorf(p, "%q is not a DNS name: %s", a, msgs[0])
		}
	}
}

// checkSlicePorts checks the ports of an EndpointSlice.
func checkSlicePorts(r *Result, ports []discoveryv1.EndpointPort) {
	if len(ports) > maxSlicePorts {
		r.Errorf("ports", "at most %d ports are allowed, not %d", maxSlicePorts, len(ports))
	}
	names := map[string]int{}
	for i, port := range ports {
		p := idx("ports", i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			for _, msg := range k8svalidation.IsDNS1123Label(name) {
				r.Errorf(fld(p, "name"), "port name %q is not a valid DNS-1123 label: %s", name, msg)
			}
		}
		if j, dup := names[name]; dup {
			r.Errorf(fld(p, "name"), "port name %q is already used by ports[%d]; port names must be unique", name, j)
		} else {
			names[name] = i
		}
		if port.Port != nil {
			checkPort(r, fld(p, "port"), *port.Port)
		}
		if port.Protocol != nil {
			checkKubeProtocol(r, fld(p, "protocol"), *port.Protocol)
		}
		if port.AppProtocol != nil {
			checkAppProtocol(r, fld(p, "appProtocol"), *port.AppProtocol)
		}
	}
}

// Secret validates a Kubernetes Secret, held as the summary of package
// schema (which cannot be named here without an import cycle): its name is
// a DNS-1123 subdomain and its type, when it has a "Type" field, is one
// Kubernetes knows or a domain-prefixed one. Its data is never seen.
func Secret(c config.Config) Result {
	res := checkMeta(c, namespacedMeta)
	v := reflect.ValueOf(c.Spec)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		res.Errorf("spec", "the spec of a Secret must be its summary, not a %T", c.Spec)
		return res
	}
	if typ, ok := fieldOf[corev1.SecretType](v.Elem(), "Type"); ok {
		checkSecretType(&res, "type", typ)
	}
	return res
}

// builtinSecretTypes are the Secret types of Kubernetes itself.
var builtinSecretTypes = []corev1.SecretType{
	corev1.SecretTypeOpaque, corev1.SecretTypeServiceAccountToken, corev1.SecretTypeDockercfg,
	corev1.SecretTypeDockerConfigJson, corev1.SecretTypeBasicAuth, corev1.SecretTypeSSHAuth,
	corev1.SecretTypeTLS, corev1.SecretTypeBootstrapToken,
}

// checkSecretType accepts the built-in types and any other qualified name
// (as "example.com/custom"), as the API server does.
func checkSecretType(r *Result, p string, typ corev1.SecretType) {
	if typ == "" || slices.Contains(builtinSecretTypes, typ) {
		return
	}
	for _, msg := range k8svalidation.IsQualifiedName(string(typ)) {
		r.Errorf(p, "type %q is not a known Secret type nor a qualified name: %s", typ, msg)
	}
}
