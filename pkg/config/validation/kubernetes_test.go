package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshcp/meshcp/pkg/config"
)

const validService = `
type: LoadBalancer
selector: {app: reviews, app.kubernetes.io/version: v1}
clusterIP: 10.96.0.10
clusterIPs: [10.96.0.10, "fd00::10"]
ports:
- {name: http, port: 9080, targetPort: 8080, protocol: TCP, appProtocol: http, nodePort: 30080}
- {name: grpc-web, port: 9090, targetPort: grpc, appProtocol: kubernetes.io/h2c}
- {name: dns, port: 9090, protocol: UDP}
externalIPs: [192.0.2.5]
loadBalancerSourceRanges: [10.0.0.0/8]
sessionAffinity: ClientIP
`

func TestService(t *testing.T) {
	type svc = corev1.ServiceSpec
	valid := func(t testing.TB) *svc { return fromYAML[svc](t, validService) }
	runSpecCases(t, Service, valid, []specCase[svc]{
		{"unknown type", func(s *svc) { s.Type = "Internal" }, "spec.type", "must be ClusterIP, NodePort, LoadBalancer or ExternalName", false},
		{"no ports", func(s *svc) { s.Ports = nil }, "spec.ports", "at least one port", false},
		{"port out of range", func(s *svc) { s.Ports[0].Port = 65536 }, "spec.ports[0].port", "1..65535", false},
		{"unnamed port among several", func(s *svc) { s.Ports[1].Name = "" }, "spec.ports[1].name", "needs a name", false},
		{"duplicate port name", func(s *svc) { s.Ports[2].Name = "http" }, "spec.ports[2].name", `port name "http" is already used by ports[0]`, false},
		{"invalid port name", func(s *svc) { s.Ports[2].Name = "DNS" }, "spec.ports[2].name", "not a valid DNS-1123 label", false},
		{"unknown protocol", func(s *svc) { s.Ports[2].Protocol = "ICMP" }, "spec.ports[2].protocol", "must be TCP, UDP or SCTP", false},
		{"duplicate port and protocol", func(s *svc) { s.Ports[2].Protocol = corev1.ProtocolTCP }, "spec.ports[2]", "port 9090/TCP is already declared by ports[1]", false},
		{"target port out of range", func(s *svc) { s.Ports[0].TargetPort = intstr.FromInt32(70000) }, "spec.ports[0].targetPort", "1..65535", false},
		{"target port name", func(s *svc) { s.Ports[1].TargetPort = intstr.FromString("grpc_port") }, "spec.ports[1].targetPort", "not a valid port name", false},
		{"appProtocol", func(s *svc) { s.Ports[0].AppProtocol = ptr("http 2") }, "spec.ports[0].appProtocol", "is invalid", false},
		{"nodePort on ClusterIP", func(s *svc) { s.Type = corev1.ServiceTypeClusterIP }, "spec.ports[0].nodePort", "needs type NodePort or LoadBalancer", false},
		{"selector label", func(s *svc) { s.Selector["app"] = "reviews!" }, "spec.selector[app]", "label value", false},
		{"clusterIP", func(s *svc) { s.ClusterIP, s.ClusterIPs = "10.96.0.300", nil }, "spec.clusterIP", "must be an IP address", false},
		{"clusterIPs disagree", func(s *svc) { s.ClusterIPs[0] = "10.96.0.11" }, "spec.clusterIPs[0]", "must equal clusterIP", false},
		{"external IP", func(s *svc) { s.ExternalIPs[0] = "example.com" }, "spec.externalIPs[0]", "not an IP address", false},
		{"source range", func(s *svc) { s.LoadBalancerSourceRanges[0] = "10.0.0.1" }, "spec.loadBalancerSourceRanges[0]", "not a CIDR block", false},
		{"session affinity", func(s *svc) { s.SessionAffinity = "Cookie" }, "spec.sessionAffinity", "must be None or ClientIP", false},
		{"ExternalName without name", func(s *svc) {
			*s = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}
		}, "spec.externalName", "needs externalName", false},
		{"ExternalName with cluster IP", func(s *svc) {
			*s = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com", ClusterIP: "10.0.0.1"}
		}, "spec.clusterIP", "has no cluster IP", false},
	})
	headless := fromYAML[corev1.ServiceSpec](t, `{clusterIP: None, selector: {app: db}}`)
	requireClean(t, Service(cfg(headless)))
	external := fromYAML[corev1.ServiceSpec](t, `{type: ExternalName, externalName: db.example.com.}`)
	requireClean(t, Service(cfg(external)))
	c := cfg(fromYAML[corev1.ServiceSpec](t, validService))
	c.Name = "1-reviews"
	requireError(t, Service(c), "metadata.name", "DNS-1035 label")
}

func TestNamespace(t *testing.T) {
	c := config.Config{Meta: config.Meta{Name: "bookinfo", Labels: map[string]string{"istio-injection": "enabled"}}, Spec: &corev1.NamespaceSpec{}}
	requireClean(t, Namespace(c))
	c.Name = "book.info"
	requireError(t, Namespace(c), "metadata.name", "DNS-1123 label")
	c.Name = "bookinfo"
	c.Labels["istio.io/rev"] = "canary 1"
	requireError(t, Namespace(c), "metadata.labels[istio.io/rev]", "label value")
	delete(c.Labels, "istio.io/rev")
	c.Spec = &corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{""}}
	requireError(t, Namespace(c), "spec.finalizers[0]", "must not be empty")
}

const validPod = `
initContainers:
- name: init
  image: busybox
containers:
- name: app
  image: example.com/app:1.0
  ports:
  - {name: http, containerPort: 8080}
  - {name: metrics, containerPort: 9090, protocol: TCP, hostPort: 19090}
- name: istio-proxy
  image: istio/proxyv2
  ports: [{name: http-envoy-prom, containerPort: 15090}]
restartPolicy: Always
`

func TestPod(t *testing.T) {
	type pod = corev1.PodSpec
	valid := func(t testing.TB) *pod { return fromYAML[pod](t, validPod) }
	runSpecCases(t, Pod, valid, []specCase[pod]{
		{"no containers", func(s *pod) { s.Containers = nil }, "spec.containers", "at least one container", false},
		{"container without name", func(s *pod) { s.Containers[0].Name = "" }, "spec.containers[0].name", "container name is required", false},
		{"duplicate container name", func(s *pod) { s.Containers[1].Name = "init" }, "spec.containers[1].name", "already used by spec.initContainers[0]", false},
		{"invalid container name", func(s *pod) { s.Containers[0].Name = "App" }, "spec.containers[0].name", "DNS-1123 label", false},
		{"no image", func(s *pod) { s.Containers[0].Image = "" }, "spec.containers[0].image", "image is required", false},
		{"container port out of range", func(s *pod) { s.Containers[0].Ports[0].ContainerPort = 0 }, "spec.containers[0].ports[0].containerPort", "1..65535", false},
		{"host port out of range", func(s *pod) { s.Containers[0].Ports[1].HostPort = 70000 }, "spec.containers[0].ports[1].hostPort", "1..65535", false},
		{"port protocol", func(s *pod) { s.Containers[0].Ports[1].Protocol = "HTTP" }, "spec.containers[0].ports[1].protocol", "must be TCP, UDP or SCTP", false},
		{"port name", func(s *pod) { s.Containers[1].Ports[0].Name = "http-envoy-prometheus" }, "spec.containers[1].ports[0].name", "port name", false},
		{"duplicate port name", func(s *pod) { s.Containers[0].Ports[1].Name = "http" }, "spec.containers[0].ports[1].name", "already used by ports[0]", false},
		{"restart policy", func(s *pod) { s.RestartPolicy = "Sometimes" }, "spec.restartPolicy", "must be Always, OnFailure or Never", false},
	})
}

func TestEndpointSlice(t *testing.T) {
	type fields struct {
		AddressType discoveryv1.AddressType
		Endpoints   []discoveryv1.Endpoint
		Ports       []discoveryv1.EndpointPort
	}
	valid := func() *fields {
		return &fields{
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.0.0.1"}, Hostname: ptr("pod-a"), NodeName: ptr("node-1.example")},
				{Addresses: []string{"10.0.0.2"}},
			},
			Ports: []discoveryv1.EndpointPort{
				{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP), AppProtocol: ptr("http")},
				{Name: ptr("grpc"), Port: ptr(int32(9090))},
			},
		}
	}
	cases := []struct {
		name      string
		mutate    func(f *fields)
		path, msg string
	}{
		{"address type", func(f *fields) { f.AddressType = "IPv5" }, "addressType", "must be IPv4, IPv6 or FQDN"},
		{"IPv6 address in IPv4 slice", func(f *fields) { f.Endpoints[1].Addresses[0] = "fd00::1" }, "endpoints[1].addresses[0]", "not an IPv4 address"},
		{"endpoint without address", func(f *fields) { f.Endpoints[1].Addresses = nil }, "endpoints[1].addresses", "at least one address"},
		{"hostname", func(f *fields) { f.Endpoints[0].Hostname = ptr("pod.a") }, "endpoints[0].hostname", "DNS-1123 label"},
		{"node name", func(f *fields) { f.Endpoints[0].NodeName = ptr("Node_1") }, "endpoints[0].nodeName", "not a valid node name"},
		{"port out of range", func(f *fields) { f.Ports[1].Port = ptr(int32(0)) }, "ports[1].port", "1..65535"},
		{"duplicate port name", func(f *fields) { f.Ports[1].Name = ptr("http") }, "ports[1].name", "already used by ports[0]"},
		{"port protocol", func(f *fields) { f.Ports[1].Protocol = ptr(corev1.Protocol("QUIC")) }, "ports[1].protocol", "must be TCP, UDP or SCTP"},
		{"FQDN address", func(f *fields) {
			f.AddressType = discoveryv1.AddressTypeFQDN
			f.Endpoints[0].Addresses[0] = "db_1.example.com"
		}, "endpoints[0].addresses[0]", "not a DNS name"},
	}
	meta := config.Meta{Name: "reviews-abc12", Namespace: "default"}
	t.Run("valid", func(t *testing.T) {
		f := valid()
		requireClean(t, EndpointSliceFields(config.Config{Meta: meta}, f.AddressType, f.Endpoints, f.Ports))
		// The Func reads the same fields from any spec struct that has them.
		requireClean(t, EndpointSlice(config.Config{Meta: meta, Spec: f}))
		slice := &discoveryv1.EndpointSlice{AddressType: f.AddressType, Endpoints: f.Endpoints, Ports: f.Ports}
		requireClean(t, EndpointSlice(config.Config{Meta: meta, Spec: slice}))
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := valid()
			tc.mutate(f)
			requireError(t, EndpointSlice(config.Config{Meta: meta, Spec: f}), tc.path, tc.msg)
		})
	}
}

func TestMeta(t *testing.T) {
	for _, tc := range []struct {
		name      string
		meta      config.Meta
		path, msg string
	}{
		{"no name", config.Meta{Namespace: "default"}, "metadata.name", "name is required"},
		{"uppercase name", config.Meta{Name: "Reviews", Namespace: "default"}, "metadata.name", "DNS-1123 subdomain"},
		{"long name", config.Meta{Name: strings.Repeat("a", 254), Namespace: "default"}, "metadata.name", "DNS-1123 subdomain"},
		{"namespace with dots", config.Meta{Name: "a", Namespace: "my.ns"}, "metadata.namespace", "DNS-1123 label"},
		{"label key", config.Meta{Name: "a", Labels: map[string]string{"-app": "x"}}, "metadata.labels[-app]", "label key"},
		{"label value", config.Meta{Name: "a", Labels: map[string]string{"app": strings.Repeat("v", 64)}}, "metadata.labels[app]", "label value"},
		{"annotation key", config.Meta{Name: "a", Annotations: map[string]string{"a/b/c": "x"}}, "metadata.annotations[a/b/c]", "annotation key"},
		{"annotations too large", config.Meta{Name: "a", Annotations: map[string]string{"big": strings.Repeat("x", 300*1024)}}, "metadata.annotations", "at most 262144"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, Meta(config.Config{Meta: tc.meta}), tc.path, tc.msg)
		})
	}
	requireClean(t, Meta(config.Config{Meta: config.Meta{Name: "reviews.v1", Namespace: "default",
		Labels: map[string]string{"app.kubernetes.io/name": "reviews", "empty": ""}, Annotations: map[string]string{"Example.COM/Note": "anything goes"}}}))
	// Every validator includes the metadata checks.
	for name, fn := range map[string]Func{"VirtualService": VirtualService, "HTTPRoute": HTTPRoute, "Pod": Pod} {
		res := fn(config.Config{Meta: config.Meta{Name: "Bad_Name", Namespace: "default"}})
		if !hasFinding(res.Errors, "metadata.name", "not a valid") {
			t.Errorf("%s: want a metadata.name error, got %v", name, res.Errors)
		}
	}
}

func TestTargetPortZeroMeansPort(t *testing.T) {
	s := fromYAML[corev1.ServiceSpec](t, `{ports: [{port: 80}]}`)
	requireClean(t, Service(cfg(s)))
}
