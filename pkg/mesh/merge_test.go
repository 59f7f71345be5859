package mesh_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
	meshconfig "istio.io/api/mesh/v1alpha1"

	"github.com/meshcp/meshcp/pkg/config/validation"
	"github.com/meshcp/meshcp/pkg/mesh"
)

// apply is Apply over the defaults, failing the test on an error.
func apply(t *testing.T, file string) (*meshconfig.MeshConfig, validation.Result) {
	t.Helper()
	m, res, err := mesh.Apply(mesh.Default(), []byte(file))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return m, res
}

func TestApplyReplacesTopLevelFields(t *testing.T) {
	m, res := apply(t, `
enableTracing: false            # a zero value still overrides
trustDomain: example.org
connectTimeout: 2s
defaultServiceExportTo: ["."]
outboundTrafficPolicy:
  mode: REGISTRY_ONLY
localityLbSetting: {}           # replaced whole: enabled is gone
ingressClass: null              # null: not given
`)
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	want := mesh.Default()
	want.EnableTracing = false
	want.TrustDomain = "example.org"
	want.ConnectTimeout.Seconds = 2
	want.DefaultServiceExportTo = []string{"."}
	want.OutboundTrafficPolicy.Mode = meshconfig.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY
	want.LocalityLbSetting.Enabled = nil
	if !proto.Equal(m, want) {
		t.Fatalf("got  %v\nwant %v", m, want)
	}
}

// TestApplyMergesDefaultConfigFieldByField: a file setting one ProxyConfig
// field keeps every other proxy default.
func TestApplyMergesDefaultConfigFieldByField(t *testing.T) {
	m, _ := apply(t, "defaultConfig:\n  proxyAdminPort: 15555\n")
	want := mesh.DefaultProxyConfig()
	want.ProxyAdminPort = 15555
	if !proto.Equal(m.DefaultConfig, want) {
		t.Fatalf("defaultConfig = %v\nwant %v", m.DefaultConfig, want)
	}
	// The rest of the mesh config is untouched too.
	rest := proto.Clone(m).(*meshconfig.MeshConfig)
	rest.DefaultConfig = mesh.DefaultProxyConfig()
	if !proto.Equal(rest, mesh.Default()) {
		t.Fatalf("fields outside defaultConfig changed: %v", rest)
	}
}

func TestApplyMergesProxyConfigAsIstiodDoes(t *testing.T) {
	base := mesh.Default()
	base.DefaultConfig.ProxyMetadata = map[string]string{"A": "base", "B": "base"}
	base.DefaultConfig.ProxyHeaders = &meshconfig.ProxyConfig_ProxyHeaders{
		RequestId: &meshconfig.ProxyConfig_ProxyHeaders_RequestId{Disabled: wrapperspb.Bool(true)},
	}
	m, _, err := mesh.Apply(base, []byte(`
defaultConfig:
  proxyMetadata: {B: file, C: file}     # merged key by key
  proxyHeaders:                          # merged field by field
    server: {disabled: true}
  tracing: {sampling: 10}                # replaced whole: no zipkin any more
  drainDuration: 30s
`))
	if err != nil {
		t.Fatal(err)
	}
	pc := m.DefaultConfig
	if got, want := pc.ProxyMetadata, map[string]string{"A": "base", "B": "file", "C": "file"}; !maps.Equal(got, want) {
		t.Errorf("proxyMetadata = %v, want %v", got, want)
	}
	if !pc.GetProxyHeaders().GetRequestId().GetDisabled().GetValue() || !pc.GetProxyHeaders().GetServer().GetDisabled().GetValue() {
		t.Errorf("proxyHeaders = %v, want requestId (base) and server (file) disabled", pc.ProxyHeaders)
	}
	if pc.GetTracing().GetZipkin() != nil || pc.GetTracing().GetSampling() != 10 {
		t.Errorf("tracing = %v, want the file's, replacing the default", pc.Tracing)
	}
	if pc.GetDrainDuration().AsDuration() != 30*time.Second || pc.GetProxyAdminPort() != 15000 {
		t.Errorf("drainDuration %v, proxyAdminPort %d", pc.GetDrainDuration().AsDuration(), pc.GetProxyAdminPort())
	}
	if base.DefaultConfig.ProxyMetadata["B"] != "base" || base.DefaultConfig.ProxyHeaders.Server != nil {
		t.Error("Apply modified its base")
	}
}

func TestApplyMergesExtensionProvidersByName(t *testing.T) {
	m, res := apply(t, `
extensionProviders:
- name: added-first
  zipkin: {service: zipkin.tracing.svc.cluster.local, port: 9411}
- name: envoy                     # replaces the default, in place
  envoyFileAccessLog: {path: /dev/stderr}
- name: added-second
  envoyExtAuthzGrpc: {service: authz.authz.svc.cluster.local, port: 9000}
`)
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	if got, want := providerNames(m), []string{"prometheus", "stackdriver", "envoy", "added-first", "added-second"}; !slices.Equal(got, want) {
		t.Fatalf("providers = %v, want %v", got, want)
	}
	if got := m.ExtensionProviders[2].GetEnvoyFileAccessLog().GetPath(); got != "/dev/stderr" {
		t.Errorf("envoy provider path = %q, want the file's", got)
	}
	if m.ExtensionProviders[3].GetZipkin().GetPort() != 9411 || m.ExtensionProviders[4].GetEnvoyExtAuthzGrpc().GetPort() != 9000 {
		t.Errorf("added providers = %v", m.ExtensionProviders[3:])
	}
}

func TestApplyDuplicateProviderNameInFileLaterWins(t *testing.T) {
	m, res := apply(t, `
extensionProviders:
- name: x
  zipkin: {service: a.b.svc.cluster.local, port: 1}
- name: x
  zipkin: {service: a.b.svc.cluster.local, port: 2}
`)
	if len(m.ExtensionProviders) != 4 || m.ExtensionProviders[3].GetZipkin().GetPort() != 2 {
		t.Fatalf("providers = %v, want one x, the later", m.ExtensionProviders)
	}
	assertFinding(t, res.Warnings, "extensionProviders[1].name", "duplicate name")
}

func TestApplyTrustDomainAliasesAreTheSortedUnion(t *testing.T) {
	base := mesh.Default()
	base.TrustDomainAliases = []string{"base.local"}
	m, _, err := mesh.Apply(base, []byte("trustDomainAliases: [b.local, a.local, b.local]"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.TrustDomainAliases, []string{"a.local", "b.local", "base.local"}; !slices.Equal(got, want) {
		t.Fatalf("trustDomainAliases = %v, want %v", got, want)
	}
}

func TestApplyUnknownFieldIsAWarningAndTheRestApplies(t *testing.T) {
	m, res := apply(t, `
trustDomain: example.org
notAField: 1
defaultConfig:
  proxyAdminPort: 15555
  tracing:
    zipkin: {address: "zipkin:9411", bogus: true}
extensionProviders:
- name: x
  zipkin: {service: z.ns.svc.cluster.local, port: 9411, nope: 1}
`)
	if m.TrustDomain != "example.org" || m.DefaultConfig.ProxyAdminPort != 15555 || m.DefaultConfig.Tracing.GetZipkin().GetAddress() != "zipkin:9411" {
		t.Fatalf("the known fields were not applied: %v", m)
	}
	assertFinding(t, res.Warnings, "notAField", "unknown field")
	assertFinding(t, res.Warnings, "defaultConfig.tracing.zipkin.bogus", "unknown field")
	assertFinding(t, res.Warnings, "extensionProviders[0].zipkin.nope", "unknown field")
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
}

func TestApplyAcceptsProtoFieldNames(t *testing.T) {
	m, _ := apply(t, "trust_domain: example.org\ndefault_config: {proxy_admin_port: 15555}\n")
	if m.TrustDomain != "example.org" || m.DefaultConfig.ProxyAdminPort != 15555 || m.DefaultConfig.StatusPort != 15020 {
		t.Fatalf("got %v", m)
	}
}

func TestApplyTypeErrorsNameTheFieldAndWhatItWants(t *testing.T) {
	for _, tc := range []struct {
		file, path, msg string
	}{
		{"defaultConfig: {proxyAdminPort: abc}", "defaultConfig.proxyAdminPort", `want an integer (int32), got string "abc"`},
		{"defaultConfig: {proxyAdminPort: 99999999999}", "defaultConfig.proxyAdminPort", "want an integer (int32)"},
		{"connectTimeout: 10 seconds", "connectTimeout", `want a duration such as "10s"`},
		{"enableTracing: maybe", "enableTracing", "want true or false"},
		{"enableAutoMtls: [true]", "enableAutoMtls", "want true or false, got a list"},
		{"outboundTrafficPolicy: {mode: SOMETIMES}", "outboundTrafficPolicy.mode", `want one of "REGISTRY_ONLY", "ALLOW_ANY"`},
		{"outboundTrafficPolicy: REGISTRY_ONLY", "outboundTrafficPolicy", "want an object (OutboundTrafficPolicy)"},
		{"defaultServiceExportTo: '*'", "defaultServiceExportTo", "want a list"},
		{"defaultServiceExportTo: ['*', {a: 1}]", "defaultServiceExportTo[1]", "want a string, got an object"},
		{"extensionProviders: [{name: x, zipkin: {port: '80a'}}]", "extensionProviders[0].zipkin.port", "want a non-negative integer (uint32)"},
		{"defaultConfig: {proxyMetadata: {A: [1]}}", "defaultConfig.proxyMetadata[A]", "want a string, got a list"},
		{"defaultConfig: {proxyMetadata: [A]}", "defaultConfig.proxyMetadata", "want an object"},
		{"defaultConfig: {tracing: {zipkin: {address: a:1}, datadog: {address: b:2}}}", "defaultConfig.tracing.zipkin", "cannot be given together"},
		{"trustDomain: td\ntrust_domain: td2", "trust_domain", "given twice"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			m, res, err := mesh.Apply(mesh.Default(), []byte(tc.file))
			if err == nil || m != nil {
				t.Fatalf("Apply(%q) = %v, nil error; want an error", tc.file, m)
			}
			if errors.Is(err, mesh.ErrNotYAML) {
				t.Fatalf("error %v wraps ErrNotYAML", err)
			}
			assertFinding(t, res.Errors, tc.path, tc.msg)
			if !strings.Contains(err.Error(), tc.path+": ") {
				t.Errorf("error %q does not name %s", err, tc.path)
			}
		})
	}
}

func TestApplyRejectsWhatIsNotAYAMLObject(t *testing.T) {
	for _, file := range []string{"a: [", "[1, 2]", "just a string", "{\"a\": 1"} {
		_, _, err := mesh.Apply(mesh.Default(), []byte(file))
		if !errors.Is(err, mesh.ErrNotYAML) {
			t.Errorf("Apply(%q) error = %v, want ErrNotYAML", file, err)
		}
	}
}

func TestApplyEmptyFileIsTheBase(t *testing.T) {
	for _, file := range []string{"", "# only a comment\n", "null", "{}"} {
		m, res, err := mesh.Apply(mesh.Default(), []byte(file))
		if err != nil || !proto.Equal(m, mesh.Default()) || len(res.Warnings) > 0 {
			t.Errorf("Apply(%q) = %v, %v, %v; want the defaults", file, m, res, err)
		}
	}
}

func TestApplyValidatesTheResult(t *testing.T) {
	_, res, err := mesh.Apply(mesh.Default(), []byte("defaultConfig: {statusPort: 0}\n"))
	if err == nil {
		t.Fatal("want an error")
	}
	assertFinding(t, res.Errors, "defaultConfig.statusPort", "not in 1..65535")
}

func TestApplyNilBaseIsTheDefaults(t *testing.T) {
	m, _, err := mesh.Apply(nil, []byte("trustDomain: example.org"))
	if err != nil {
		t.Fatal(err)
	}
	want := mesh.Default()
	want.TrustDomain = "example.org"
	if !proto.Equal(m, want) {
		t.Fatalf("got %v", m)
	}
}

// assertFinding fails unless findings hold one at path whose message
// contains msg.
func assertFinding(t *testing.T, findings []validation.Finding, path, msg string) {
	t.Helper()
	for _, f := range findings {
		if f.Path == path && strings.Contains(f.Message, msg) {
			return
		}
	}
	t.Errorf("no finding at %s containing %q in %v", path, msg, findings)
}

func TestApplyErrorMessageIsBounded(t *testing.T) {
	file := "defaultServiceExportTo: [" + strings.Repeat("Bad, ", 29) + "Bad]"
	_, res, err := mesh.Apply(mesh.Default(), []byte(file))
	if len(res.Errors) < 30 {
		t.Fatalf("%d errors, want at least 30", len(res.Errors))
	}
	if err == nil || !strings.HasSuffix(err.Error(), fmt.Sprintf("and %d more errors", len(res.Errors)-20)) {
		t.Fatalf("error = %v", err)
	}
}

// TestApplyIstioInstallMeshConfig applies the mesh config Istio's Helm
// chart writes into the istio ConfigMap: it must apply cleanly.
func TestApplyIstioInstallMeshConfig(t *testing.T) {
	m, res := apply(t, `
accessLogFile: /dev/stdout
defaultConfig:
  discoveryAddress: istiod.istio-system.svc:15012
  proxyMetadata: {}
  tracing:
    zipkin:
      address: zipkin.istio-system:9411
defaultProviders:
  metrics:
  - prometheus
enablePrometheusMerge: true
rootNamespace: istio-system
trustDomain: cluster.local
`)
	if len(res.Warnings) > 0 {
		t.Fatalf("warnings: %v", res.Warnings)
	}
	if m.AccessLogFile != "/dev/stdout" || !slices.Equal(m.DefaultProviders.Metrics, []string{"prometheus"}) ||
		m.DefaultConfig.ProxyAdminPort != 15000 {
		t.Fatalf("got %v", m)
	}
}
