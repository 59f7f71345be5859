package mesh_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	meshconfig "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/mesh"
)

// TestValidateRejects: each case breaks one rule of the defaults and
// expects an error at the field's path.
func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct {
		path   string
		msg    string
		mutate func(m *meshconfig.MeshConfig)
	}{
		{"connectTimeout", "must be set", func(m *meshconfig.MeshConfig) { m.ConnectTimeout = nil }},
		{"connectTimeout", "at least 1ms", func(m *meshconfig.MeshConfig) { m.ConnectTimeout = durationpb.New(0) }},
		{"connectTimeout", "whole number of milliseconds", func(m *meshconfig.MeshConfig) { m.ConnectTimeout = durationpb.New(1500 * time.Microsecond) }},
		{"connectTimeout", "maximum of 1h", func(m *meshconfig.MeshConfig) { m.ConnectTimeout = durationpb.New(2 * time.Hour) }},
		{"protocolDetectionTimeout", "at least 1ms", func(m *meshconfig.MeshConfig) { m.ProtocolDetectionTimeout = durationpb.New(-time.Second) }},
		{"dnsRefreshRate", "longer than 1ms", func(m *meshconfig.MeshConfig) { m.DnsRefreshRate = durationpb.New(time.Millisecond) }},
		{"hboneIdleTimeout", "at least 1ms", func(m *meshconfig.MeshConfig) { m.HboneIdleTimeout = durationpb.New(0) }},
		{"connectTimeout", "invalid duration", func(m *meshconfig.MeshConfig) { m.ConnectTimeout = &durationpb.Duration{Seconds: 1, Nanos: -1} }},
		{"proxyListenPort", "not in 1..65535", func(m *meshconfig.MeshConfig) { m.ProxyListenPort = 0 }},
		{"proxyInboundListenPort", "not in 1..65535", func(m *meshconfig.MeshConfig) { m.ProxyInboundListenPort = 70000 }},
		{"outboundTrafficPolicy.mode", "unknown value 9", func(m *meshconfig.MeshConfig) { m.OutboundTrafficPolicy.Mode = 9 }},
		{"inboundTrafficPolicy.mode", "unknown value 5", func(m *meshconfig.MeshConfig) { m.InboundTrafficPolicy.Mode = 5 }},
		{"trustDomain", "empty trust domain", func(m *meshconfig.MeshConfig) { m.TrustDomain = "" }},
		{"trustDomain", "not a DNS label", func(m *meshconfig.MeshConfig) { m.TrustDomain = "bad_domain.local" }},
		{"trustDomainAliases[1]", "not a DNS label", func(m *meshconfig.MeshConfig) { m.TrustDomainAliases = []string{"ok.local", "-bad"} }},
		{"rootNamespace", "not a valid namespace name", func(m *meshconfig.MeshConfig) { m.RootNamespace = "Istio_System" }},
		{"defaultServiceExportTo[0]", "not a valid namespace name", func(m *meshconfig.MeshConfig) { m.DefaultServiceExportTo = []string{"bad/ns"} }},
		{"defaultVirtualServiceExportTo", `"*" (everywhere) cannot be combined`, func(m *meshconfig.MeshConfig) { m.DefaultVirtualServiceExportTo = []string{"*", "ns"} }},
		{"defaultDestinationRuleExportTo[1]", "duplicate", func(m *meshconfig.MeshConfig) { m.DefaultDestinationRuleExportTo = []string{".", "."} }},
		{"localityLbSetting", "distribute and failover cannot both be set", func(m *meshconfig.MeshConfig) {
			m.LocalityLbSetting = &networking.LocalityLoadBalancerSetting{
				Distribute: []*networking.LocalityLoadBalancerSetting_Distribute{{From: "us-east/*", To: map[string]uint32{"us-west/*": 100}}},
				Failover:   []*networking.LocalityLoadBalancerSetting_Failover{{From: "us-east", To: "us-west"}},
			}
		}},
		{"localityLbSetting.distribute[0].to", "add up to 90", func(m *meshconfig.MeshConfig) {
			m.LocalityLbSetting = &networking.LocalityLoadBalancerSetting{
				Distribute: []*networking.LocalityLoadBalancerSetting_Distribute{{From: "us-east/*", To: map[string]uint32{"us-west/*": 90}}},
			}
		}},
		{"localityLbSetting.failover[0]", "different regions", func(m *meshconfig.MeshConfig) {
			m.LocalityLbSetting = &networking.LocalityLoadBalancerSetting{
				Failover: []*networking.LocalityLoadBalancerSetting_Failover{{From: "us-east", To: "us-east"}},
			}
		}},
		{"serviceSettings[0].hosts[1]", "not a DNS label", func(m *meshconfig.MeshConfig) {
			m.ServiceSettings = []*meshconfig.MeshConfig_ServiceSettings{{Hosts: []string{"*.svc.cluster.local", "bad_host.example.com"}}}
		}},
		{"discoverySelectors[0].matchExpressions[0].operator", "not one of In", func(m *meshconfig.MeshConfig) {
			m.DiscoverySelectors = []*meshconfig.LabelSelector{{MatchExpressions: []*meshconfig.LabelSelectorRequirement{{Key: "env", Operator: "Maybe"}}}}
		}},
		{`discoverySelectors[0].matchLabels["bad key!"]`, "invalid label key", func(m *meshconfig.MeshConfig) {
			m.DiscoverySelectors = []*meshconfig.LabelSelector{{MatchLabels: map[string]string{"bad key!": "x"}}}
		}},
		{"meshMTLS.ecdhCurves", "does not support", func(m *meshconfig.MeshConfig) {
			m.MeshMTLS = &meshconfig.MeshConfig_TLSConfig{EcdhCurves: []string{"P-256"}}
		}},
		{"ca.address", "not host:port", func(m *meshconfig.MeshConfig) { m.Ca = &meshconfig.MeshConfig_CA{Address: "ca.example.com"} }},
		{"defaultHttpRetryPolicy.attempts", "must not be negative", func(m *meshconfig.MeshConfig) {
			m.DefaultHttpRetryPolicy = &networking.HTTPRetry{Attempts: -1}
		}},
		{"defaultConfig", "must be set", func(m *meshconfig.MeshConfig) { m.DefaultConfig = nil }},
		{"defaultConfig.configPath", "must be set", func(m *meshconfig.MeshConfig) { m.DefaultConfig.ConfigPath = "" }},
		{"defaultConfig.binaryPath", "must be set", func(m *meshconfig.MeshConfig) { m.DefaultConfig.BinaryPath = "" }},
		{"defaultConfig.serviceCluster", "one of serviceCluster or tracingServiceName", func(m *meshconfig.MeshConfig) { m.DefaultConfig.ClusterName = nil }},
		{"defaultConfig.drainDuration", "whole number of seconds", func(m *meshconfig.MeshConfig) {
			m.DefaultConfig.DrainDuration = durationpb.New(1500 * time.Millisecond)
		}},
		{"defaultConfig.discoveryAddress", "not host:port", func(m *meshconfig.MeshConfig) { m.DefaultConfig.DiscoveryAddress = "istiod.istio-system.svc" }},
		{"defaultConfig.discoveryAddress", "not in 1..65535", func(m *meshconfig.MeshConfig) { m.DefaultConfig.DiscoveryAddress = "istiod:0" }},
		{"defaultConfig.discoveryAddress", "not a valid hostname", func(m *meshconfig.MeshConfig) { m.DefaultConfig.DiscoveryAddress = "bad_host:15012" }},
		{"defaultConfig.proxyAdminPort", "not in 1..65535", func(m *meshconfig.MeshConfig) { m.DefaultConfig.ProxyAdminPort = 0 }},
		{"defaultConfig.statusPort", "not in 1..65535", func(m *meshconfig.MeshConfig) { m.DefaultConfig.StatusPort = 65536 }},
		{"defaultConfig.controlPlaneAuthPolicy", "want NONE or MUTUAL_TLS", func(m *meshconfig.MeshConfig) {
			m.DefaultConfig.ControlPlaneAuthPolicy = meshconfig.AuthenticationPolicy_INHERIT
		}},
		{"defaultConfig.concurrency", "must not be negative", func(m *meshconfig.MeshConfig) { m.DefaultConfig.Concurrency = wrapperspb.Int32(-1) }},
		{"defaultConfig.tracing.zipkin.address", "not host:port", func(m *meshconfig.MeshConfig) {
			m.DefaultConfig.Tracing = &meshconfig.Tracing{Tracer: &meshconfig.Tracing_Zipkin_{Zipkin: &meshconfig.Tracing_Zipkin{Address: "zipkin"}}}
		}},
		{"defaultConfig.tracing.sampling", "not a percentage", func(m *meshconfig.MeshConfig) { m.DefaultConfig.Tracing.Sampling = 101 }},
		{"defaultConfig.statsdUdpAddress", "not host:port", func(m *meshconfig.MeshConfig) { m.DefaultConfig.StatsdUdpAddress = "statsd" }},
		{"defaultConfig.proxyStatsMatcher.inclusionRegexps[1]", "invalid regular expression", func(m *meshconfig.MeshConfig) {
			m.DefaultConfig.ProxyStatsMatcher = &meshconfig.ProxyConfig_ProxyStatsMatcher{InclusionRegexps: []string{".*outlier_detection.*", "(unclosed"}}
		}},
		{"defaultConfig.privateKeyProvider.cryptomb.pollDelay", "positive duration", func(m *meshconfig.MeshConfig) {
			m.DefaultConfig.PrivateKeyProvider = &meshconfig.PrivateKeyProvider{
				Provider: &meshconfig.PrivateKeyProvider_Cryptomb{Cryptomb: &meshconfig.PrivateKeyProvider_CryptoMb{}},
			}
		}},
	} {
		t.Run(tc.path+"/"+tc.msg, func(t *testing.T) {
			m := mesh.Default()
			tc.mutate(m)
			res := mesh.Validate(m)
			assertFinding(t, res.Errors, tc.path, tc.msg)
		})
	}
}

// TestValidateWarns: extension providers, deprecated and ignored fields are
// reported without rejecting the config, as istiod does.
func TestValidateWarns(t *testing.T) {
	provider := func(name string, p any) func(m *meshconfig.MeshConfig) {
		return func(m *meshconfig.MeshConfig) {
			ep := &meshconfig.MeshConfig_ExtensionProvider{Name: name}
			switch p := p.(type) {
			case *meshconfig.MeshConfig_ExtensionProvider_EnvoyExternalAuthorizationHttpProvider:
				ep.Provider = &meshconfig.MeshConfig_ExtensionProvider_EnvoyExtAuthzHttp{EnvoyExtAuthzHttp: p}
			case *meshconfig.MeshConfig_ExtensionProvider_EnvoyExternalAuthorizationGrpcProvider:
				ep.Provider = &meshconfig.MeshConfig_ExtensionProvider_EnvoyExtAuthzGrpc{EnvoyExtAuthzGrpc: p}
			case *meshconfig.MeshConfig_ExtensionProvider_ZipkinTracingProvider:
				ep.Provider = &meshconfig.MeshConfig_ExtensionProvider_Zipkin{Zipkin: p}
			case *meshconfig.MeshConfig_ExtensionProvider_OpenTelemetryTracingProvider:
				ep.Provider = &meshconfig.MeshConfig_ExtensionProvider_Opentelemetry{Opentelemetry: p}
			}
			m.ExtensionProviders = append(m.ExtensionProviders, ep)
		}
	}
	for _, tc := range []struct {
		path   string
		msg    string
		mutate func(m *meshconfig.MeshConfig)
	}{
		{"extensionProviders[3].envoyExtAuthzHttp.service", "service must be set",
			provider("authz", &meshconfig.MeshConfig_ExtensionProvider_EnvoyExternalAuthorizationHttpProvider{Port: 8000})},
		{"extensionProviders[3].envoyExtAuthzHttp.port", "not in 1..65535",
			provider("authz", &meshconfig.MeshConfig_ExtensionProvider_EnvoyExternalAuthorizationHttpProvider{Service: "authz.ns.svc.cluster.local"})},
		{"extensionProviders[3].envoyExtAuthzHttp.pathPrefix", "must start with /",
			provider("authz", &meshconfig.MeshConfig_ExtensionProvider_EnvoyExternalAuthorizationHttpProvider{Service: "authz.ns.svc.cluster.local", Port: 8000, PathPrefix: "check"})},
		{"extensionProviders[3].envoyExtAuthzGrpc.statusOnError", "not an HTTP status code",
			provider("authz", &meshconfig.MeshConfig_ExtensionProvider_EnvoyExternalAuthorizationGrpcProvider{Service: "ns/authz.ns.svc.cluster.local", Port: 9000, StatusOnError: "999"})},
		{"extensionProviders[3].zipkin.service", "short names are not allowed",
			provider("zipkin", &meshconfig.MeshConfig_ExtensionProvider_ZipkinTracingProvider{Service: "ns/zipkin", Port: 9411})},
		{"extensionProviders[3].opentelemetry.port", "not in 1..65535",
			provider("otel", &meshconfig.MeshConfig_ExtensionProvider_OpenTelemetryTracingProvider{Service: "otel.ns.svc.cluster.local"})},
		{"extensionProviders[3].name", `duplicate name "envoy"`,
			provider("envoy", &meshconfig.MeshConfig_ExtensionProvider_ZipkinTracingProvider{Service: "zipkin.ns.svc.cluster.local", Port: 9411})},
		{"extensionProviders[3].name", "must be set",
			provider("", &meshconfig.MeshConfig_ExtensionProvider_ZipkinTracingProvider{Service: "zipkin.ns.svc.cluster.local", Port: 9411})},
		{"extensionProviders[3]", "no provider is set", provider("empty", nil)},
		{"defaultProviders.metrics[0]", `no extension provider is named "nope"`, func(m *meshconfig.MeshConfig) {
			m.DefaultProviders.Metrics = []string{"nope"}
		}},
		{"defaultConfig.zipkinAddress", "deprecated", func(m *meshconfig.MeshConfig) { m.DefaultConfig.ZipkinAddress = "zipkin:9411" }},
		{"outboundTrafficPolicy.tls", "ignored unless mode is ALLOW_ANY_DYNAMIC_DNS", func(m *meshconfig.MeshConfig) {
			m.OutboundTrafficPolicy.Tls = &networking.ClientTLSSettings{Mode: networking.ClientTLSSettings_SIMPLE}
		}},
		{"tlsDefaults.ecdhCurves[0]", "unrecognized ECDH curve", func(m *meshconfig.MeshConfig) {
			m.TlsDefaults = &meshconfig.MeshConfig_TLSConfig{EcdhCurves: []string{"P-512"}}
		}},
	} {
		t.Run(tc.path+"/"+tc.msg, func(t *testing.T) {
			m := mesh.Default()
			tc.mutate(m)
			res := mesh.Validate(m)
			if len(res.Errors) > 0 {
				t.Fatalf("errors: %v", res.Errors)
			}
			assertFinding(t, res.Warnings, tc.path, tc.msg)
		})
	}
}

func TestValidateAcceptsValidVariations(t *testing.T) {
	m := mesh.Default()
	m.DefaultConfig.ClusterName = &meshconfig.ProxyConfig_TracingServiceName_{TracingServiceName: meshconfig.ProxyConfig_CANONICAL_NAME_ONLY}
	m.DefaultConfig.DiscoveryAddress = "10.0.0.1:15012"
	m.DefaultConfig.Tracing = &meshconfig.Tracing{Tracer: &meshconfig.Tracing_Datadog_{Datadog: &meshconfig.Tracing_Datadog{Address: "$(HOST_IP):8126"}}}
	m.DefaultConfig.ProxyStatsMatcher = &meshconfig.ProxyConfig_ProxyStatsMatcher{InclusionRegexps: []string{".*outlier_detection.*", `^cluster\..*`}}
	m.ProtocolDetectionTimeout = durationpb.New(0)
	m.TrustDomainAliases = []string{"old.local", "istio.io."}
	m.DefaultServiceExportTo = []string{".", "istio-system"}
	m.DefaultVirtualServiceExportTo = []string{"~"}
	m.LocalityLbSetting = &networking.LocalityLoadBalancerSetting{
		Distribute: []*networking.LocalityLoadBalancerSetting_Distribute{
			{From: "us-east/zone1/*", To: map[string]uint32{"us-east/zone1/*": 80, "us-east/zone2/*": 20}},
		},
	}
	m.ServiceSettings = []*meshconfig.MeshConfig_ServiceSettings{{Hosts: []string{"*.example.com", "reviews.default.svc.cluster.local"}}}
	m.DiscoverySelectors = []*meshconfig.LabelSelector{{
		MatchLabels:      map[string]string{"istio-discovery": "enabled"},
		MatchExpressions: []*meshconfig.LabelSelectorRequirement{{Key: "env", Operator: "In", Values: []string{"prod"}}},
	}}
	m.ExtensionProviders = append(m.ExtensionProviders, &meshconfig.MeshConfig_ExtensionProvider{
		Name: "authz",
		Provider: &meshconfig.MeshConfig_ExtensionProvider_EnvoyExtAuthzGrpc{EnvoyExtAuthzGrpc: &meshconfig.MeshConfig_ExtensionProvider_EnvoyExternalAuthorizationGrpcProvider{
			Service: "authz/ext-authz.authz.svc.cluster.local", Port: 9000, StatusOnError: "503",
		}},
	})
	m.DefaultProviders.AccessLogging = []string{"envoy"}
	if res := mesh.Validate(m); len(res.Errors) > 0 || len(res.Warnings) > 0 {
		t.Fatalf("Validate = %+v, want no findings", res)
	}
}
