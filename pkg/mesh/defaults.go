package mesh

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	meshconfig "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"
)

// Default returns the mesh configuration istiod runs with when its mesh
// config is empty: the values of Istio's DefaultMeshConfig
// (istio/istio pkg/config/mesh/mesh.go), which the MeshConfig reference
// documents (https://istio.io/latest/docs/reference/config/istio.mesh.v1alpha1/,
// generated from istio.io/api mesh/v1alpha1/config.proto). Each call returns
// a new message that the caller owns: there is no shared default to mutate.
//
// Fields it leaves unset are unset in istiod too; their consumers apply
// their own defaults (hboneIdleTimeout, for example, means 1h when unset).
func Default() *meshconfig.MeshConfig {
	return &meshconfig.MeshConfig{
		// config.proto: "Default port is 15001" / "Default port is 15006".
		ProxyListenPort:        15001,
		ProxyInboundListenPort: 15006,
		// config.proto: "Connection timeout used by Envoy. (MUST be >=1ms)
		// Default timeout is 10s."
		ConnectTimeout: durationpb.New(10 * time.Second),
		// config.proto: "Default detection timeout is 0s (no timeout)."
		ProtocolDetectionTimeout: durationpb.New(0),
		// config.proto: "If no ingress controller is specified, the default
		// value `istio-ingressgateway` is used"; ingressClass and the STRICT
		// mode are the values of Istio's DefaultMeshConfig.
		IngressClass:          "istio",
		IngressService:        "istio-ingressgateway",
		IngressControllerMode: meshconfig.MeshConfig_STRICT,
		// DefaultMeshConfig: tracing on; access log off ("" disables it),
		// encoded as TEXT ("Default value is `TEXT`"); Envoy's access log
		// service off ("Default value is `false`").
		EnableTracing:               true,
		AccessLogFile:               "",
		AccessLogFormat:             "",
		AccessLogEncoding:           meshconfig.MeshConfig_TEXT,
		EnableEnvoyAccessLogService: false,
		// config.proto: "Default mode is `ALLOW_ANY`".
		OutboundTrafficPolicy: &meshconfig.MeshConfig_OutboundTrafficPolicy{
			Mode: meshconfig.MeshConfig_OutboundTrafficPolicy_ALLOW_ANY,
		},
		// DefaultMeshConfig: PASSTHROUGH, the proto's zero value, set
		// explicitly.
		InboundTrafficPolicy: &meshconfig.MeshConfig_InboundTrafficPolicy{
			Mode: meshconfig.MeshConfig_InboundTrafficPolicy_PASSTHROUGH,
		},
		// config.proto: enableAutoMtls "default true".
		EnableAutoMtls: wrapperspb.Bool(true),
		// DefaultMeshConfig: constants.DefaultClusterLocalDomain, no
		// aliases.
		TrustDomain:        "cluster.local",
		TrustDomainAliases: []string{},
		// config.proto: "If not set the system will use "*" as the default
		// value" for each of the three exportTo defaults.
		DefaultServiceExportTo:         []string{"*"},
		DefaultVirtualServiceExportTo:  []string{"*"},
		DefaultDestinationRuleExportTo: []string{"*"},
		// DefaultMeshConfig: constants.IstioSystemNamespace.
		RootNamespace: "istio-system",
		// config.proto: "If unspecified, locality based load balancing will
		// be enabled by default."
		LocalityLbSetting: &networking.LocalityLoadBalancerSetting{
			Enabled: wrapperspb.Bool(true),
		},
		// config.proto: "Default refresh rate is `60s`."
		DnsRefreshRate: durationpb.New(60 * time.Second),
		// config.proto: enablePrometheusMerge "If not specified, this will be
		// enabled by default."
		EnablePrometheusMerge: wrapperspb.Bool(true),
		// DefaultMeshConfig: empty lists and an empty defaultProviders.
		Certificates:     []*meshconfig.Certificate{},
		ServiceSettings:  []*meshconfig.MeshConfig_ServiceSettings{},
		DefaultProviders: &meshconfig.MeshConfig_DefaultProviders{},
		// DefaultMeshConfig: the three built-in providers that Telemetry
		// resources may name without declaring them.
		ExtensionProviders: []*meshconfig.MeshConfig_ExtensionProvider{
			{
				Name: "prometheus",
				Provider: &meshconfig.MeshConfig_ExtensionProvider_Prometheus{
					Prometheus: &meshconfig.MeshConfig_ExtensionProvider_PrometheusMetricsProvider{},
				},
			},
			{
				Name: "stackdriver",
				Provider: &meshconfig.MeshConfig_ExtensionProvider_Stackdriver{
					Stackdriver: &meshconfig.MeshConfig_ExtensionProvider_StackdriverProvider{},
				},
			},
			{
				Name: "envoy",
				Provider: &meshconfig.MeshConfig_ExtensionProvider_EnvoyFileAccessLog{
					// config.proto: "If unspecified, defaults to `/dev/stdout`."
					EnvoyFileAccessLog: &meshconfig.MeshConfig_ExtensionProvider_EnvoyFileAccessLogProvider{
						Path: "/dev/stdout",
					},
				},
			},
		},
		DefaultConfig: DefaultProxyConfig(),
	}
}

// DefaultProxyConfig returns the ProxyConfig that Default uses as
// defaultConfig: the values of Istio's DefaultProxyConfig
// (istio/istio pkg/config/mesh/mesh.go), documented in the ProxyConfig
// reference (https://istio.io/latest/docs/reference/config/istio.mesh.v1alpha1/#ProxyConfig,
// generated from istio.io/api mesh/v1alpha1/proxy.proto). Each call returns
// a new message.
func DefaultProxyConfig() *meshconfig.ProxyConfig {
	return &meshconfig.ProxyConfig{
		// constants.ConfigPathDir and constants.BinaryPathFilename.
		ConfigPath: "./etc/istio/proxy",
		BinaryPath: "/usr/local/bin/envoy",
		// constants.ServiceClusterName.
		ClusterName: &meshconfig.ProxyConfig_ServiceCluster{ServiceCluster: "istio-proxy"},
		// proxy.proto drainDuration: "MUST be >=1s ... Default drain duration
		// is `45s`"; terminationDrainDuration: "If not set, a default of `5s`
		// will be applied."
		DrainDuration:            durationpb.New(45 * time.Second),
		TerminationDrainDuration: durationpb.New(5 * time.Second),
		// proxy.proto: "Port on which Envoy should listen for administrative
		// commands. Default port is `15000`."
		ProxyAdminPort: 15000,
		// DefaultProxyConfig: istiod's xDS port with mutual TLS. Concurrency
		// stays unset, as proxy.proto recommends ("If unset, which is
		// recommended, this will be automatically determined").
		DiscoveryAddress:       "istiod.istio-system.svc:15012",
		ControlPlaneAuthPolicy: meshconfig.AuthenticationPolicy_MUTUAL_TLS,
		// proxy.proto statNameLength: "The default value is set to 189
		// characters"; statusPort: "Default is set to port `15020`."
		StatNameLength: 189,
		StatusPort:     15020,
		// DefaultProxyConfig: Zipkin at the address Istio's samples deploy it.
		Tracing: &meshconfig.Tracing{
			Tracer: &meshconfig.Tracing_Zipkin_{
				Zipkin: &meshconfig.Tracing_Zipkin{Address: "zipkin.istio-system:9411"},
			},
		},
	}
}
