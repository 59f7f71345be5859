package mesh_test

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	meshconfig "istio.io/api/mesh/v1alpha1"

	"github.com/meshcp/meshcp/pkg/mesh"
)

// TestDefaultHasIstiosDocumentedDefaults pins the defaults the MeshConfig
// and ProxyConfig reference documents (and istiod's DefaultMeshConfig
// sets).
func TestDefaultHasIstiosDocumentedDefaults(t *testing.T) {
	m := mesh.Default()
	pc := m.GetDefaultConfig()
	for _, tc := range []struct {
		field     string
		got, want any
	}{
		{"enableTracing", m.GetEnableTracing(), true},
		{"accessLogFile", m.GetAccessLogFile(), ""},
		{"accessLogEncoding", m.GetAccessLogEncoding(), meshconfig.MeshConfig_TEXT},
		{"enableEnvoyAccessLogService", m.GetEnableEnvoyAccessLogService(), false},
		{"connectTimeout", m.GetConnectTimeout().AsDuration(), 10 * time.Second},
		{"protocolDetectionTimeout set", m.GetProtocolDetectionTimeout() != nil, true},
		{"protocolDetectionTimeout", m.GetProtocolDetectionTimeout().AsDuration(), time.Duration(0)},
		{"proxyListenPort", m.GetProxyListenPort(), int32(15001)},
		{"proxyInboundListenPort", m.GetProxyInboundListenPort(), int32(15006)},
		{"ingressClass", m.GetIngressClass(), "istio"},
		{"ingressService", m.GetIngressService(), "istio-ingressgateway"},
		{"ingressControllerMode", m.GetIngressControllerMode(), meshconfig.MeshConfig_STRICT},
		{"enableAutoMtls", m.GetEnableAutoMtls().GetValue(), true},
		{"trustDomain", m.GetTrustDomain(), "cluster.local"},
		{"trustDomainAliases", len(m.GetTrustDomainAliases()), 0},
		{"rootNamespace", m.GetRootNamespace(), "istio-system"},
		{"outboundTrafficPolicy.mode", m.GetOutboundTrafficPolicy().GetMode(), meshconfig.MeshConfig_OutboundTrafficPolicy_ALLOW_ANY},
		{"inboundTrafficPolicy set", m.GetInboundTrafficPolicy() != nil, true},
		{"inboundTrafficPolicy.mode", m.GetInboundTrafficPolicy().GetMode(), meshconfig.MeshConfig_InboundTrafficPolicy_PASSTHROUGH},
		{"localityLbSetting.enabled", m.GetLocalityLbSetting().GetEnabled().GetValue(), true},
		{"dnsRefreshRate", m.GetDnsRefreshRate().AsDuration(), 60 * time.Second},
		{"defaultServiceExportTo", m.GetDefaultServiceExportTo(), []string{"*"}},
		{"defaultVirtualServiceExportTo", m.GetDefaultVirtualServiceExportTo(), []string{"*"}},
		{"defaultDestinationRuleExportTo", m.GetDefaultDestinationRuleExportTo(), []string{"*"}},
		{"enablePrometheusMerge", m.GetEnablePrometheusMerge().GetValue(), true},
		{"defaultProviders set", m.GetDefaultProviders() != nil, true},
		{"extensionProviders", providerNames(m), []string{"prometheus", "stackdriver", "envoy"}},
		{"extensionProviders[2].envoyFileAccessLog.path", m.GetExtensionProviders()[2].GetEnvoyFileAccessLog().GetPath(), "/dev/stdout"},

		{"defaultConfig.configPath", pc.GetConfigPath(), "./etc/istio/proxy"},
		{"defaultConfig.binaryPath", pc.GetBinaryPath(), "/usr/local/bin/envoy"},
		{"defaultConfig.serviceCluster", pc.GetServiceCluster(), "istio-proxy"},
		{"defaultConfig.drainDuration", pc.GetDrainDuration().AsDuration(), 45 * time.Second},
		{"defaultConfig.terminationDrainDuration", pc.GetTerminationDrainDuration().AsDuration(), 5 * time.Second},
		{"defaultConfig.proxyAdminPort", pc.GetProxyAdminPort(), int32(15000)},
		{"defaultConfig.statusPort", pc.GetStatusPort(), int32(15020)},
		{"defaultConfig.statNameLength", pc.GetStatNameLength(), int32(189)},
		{"defaultConfig.discoveryAddress", pc.GetDiscoveryAddress(), "istiod.istio-system.svc:15012"},
		{"defaultConfig.controlPlaneAuthPolicy", pc.GetControlPlaneAuthPolicy(), meshconfig.AuthenticationPolicy_MUTUAL_TLS},
		{"defaultConfig.tracing.zipkin.address", pc.GetTracing().GetZipkin().GetAddress(), "zipkin.istio-system:9411"},
		{"defaultConfig.concurrency unset", pc.GetConcurrency() == nil, true},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.field, tc.got, tc.want)
		}
	}
}

func TestDefaultIsValid(t *testing.T) {
	res := mesh.Validate(mesh.Default())
	if len(res.Errors) > 0 || len(res.Warnings) > 0 {
		t.Fatalf("Validate(Default()) = %+v, want no findings", res)
	}
}

// TestDefaultReturnsAFreshMessage checks that no caller can change what
// another gets.
func TestDefaultReturnsAFreshMessage(t *testing.T) {
	a := mesh.Default()
	a.TrustDomain = "changed"
	a.DefaultConfig.ProxyAdminPort = 1
	a.ExtensionProviders[0].Name = "changed"
	a.DefaultServiceExportTo[0] = "changed"
	b := mesh.Default()
	if b.TrustDomain != "cluster.local" || b.DefaultConfig.ProxyAdminPort != 15000 ||
		b.ExtensionProviders[0].Name != "prometheus" || b.DefaultServiceExportTo[0] != "*" {
		t.Fatalf("changing one Default() changed the next: %v", b)
	}
	if !proto.Equal(mesh.DefaultProxyConfig(), b.DefaultConfig) {
		t.Fatal("Default().DefaultConfig differs from DefaultProxyConfig()")
	}
}

func providerNames(m *meshconfig.MeshConfig) []string {
	var names []string
	for _, p := range m.GetExtensionProviders() {
		names = append(names, p.GetName())
	}
	return names
}
