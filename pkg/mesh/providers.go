package mesh

import (
	"fmt"
	"strconv"
	"strings"

	meshconfig "istio.io/api/mesh/v1alpha1"

	"github.com/meshcp/meshcp/pkg/config/validation"
)

// checkExtensionProviders checks extensionProviders with the rules of
// istiod's validateExtensionProvider, and that defaultProviders name
// declared providers. Every finding is a warning: istiod logs broken
// providers and carries on, and the resources that use a provider (a
// Telemetry, a CUSTOM AuthorizationPolicy) report it where it matters.
func checkExtensionProviders(r *validation.Result, m *meshconfig.MeshConfig) {
	names := map[string]int{}
	for i, ep := range m.ExtensionProviders {
		p := fmt.Sprintf("extensionProviders[%d]", i)
		switch j, dup := names[ep.GetName()]; {
		case ep.GetName() == "":
			r.Warnf(p+".name", "must be set")
		case dup:
			r.Warnf(p+".name", "duplicate name %q (also extensionProviders[%d])", ep.GetName(), j)
		default:
			names[ep.GetName()] = i
		}
		// Paths index the merged list; the name says which provider it is.
		var pr validation.Result
		checkProvider(&pr, p, ep)
		for _, f := range pr.Warnings {
			r.Warnf(f.Path, "provider %q: %s", ep.GetName(), f.Message)
		}
	}
	dp := m.GetDefaultProviders()
	for _, refs := range []struct {
		field string
		names []string
	}{
		{"tracing", dp.GetTracing()},
		{"metrics", dp.GetMetrics()},
		{"accessLogging", dp.GetAccessLogging()},
	} {
		for i, name := range refs.names {
			if _, ok := names[name]; !ok {
				r.Warnf(fmt.Sprintf("defaultProviders.%s[%d]", refs.field, i), "no extension provider is named %q", name)
			}
		}
	}
}

// service is what the providers that talk to a service share.
type service interface {
	GetService() string
	GetPort() uint32
}

// checkProvider checks the provider of one extension provider.
func checkProvider(r *validation.Result, p string, ep *meshconfig.MeshConfig_ExtensionProvider) {
	checkService := func(field string, s service) {
		if err := checkServiceRef(s.GetService()); err != nil {
			r.Warnf(p+"."+field+".service", "%v", err)
		}
		if err := checkPortNumber(int(s.GetPort())); err != nil {
			r.Warnf(p+"."+field+".port", "%v", err)
		}
	}
	//nolint:staticcheck // Lightstep and OpenCensus are deprecated, still accepted
	switch pr := ep.Provider.(type) {
	case nil:
		r.Warnf(p, "no provider is set (envoyExtAuthzHttp, zipkin, opentelemetry, ...)")
	case *meshconfig.MeshConfig_ExtensionProvider_EnvoyExtAuthzHttp:
		checkService("envoyExtAuthzHttp", pr.EnvoyExtAuthzHttp)
		checkStatusOnError(r, p+".envoyExtAuthzHttp.statusOnError", pr.EnvoyExtAuthzHttp.GetStatusOnError())
		if prefix := pr.EnvoyExtAuthzHttp.GetPathPrefix(); prefix != "" && !strings.HasPrefix(prefix, "/") {
			r.Warnf(p+".envoyExtAuthzHttp.pathPrefix", "%q must start with /", prefix)
		}
	case *meshconfig.MeshConfig_ExtensionProvider_EnvoyExtAuthzGrpc:
		checkService("envoyExtAuthzGrpc", pr.EnvoyExtAuthzGrpc)
		checkStatusOnError(r, p+".envoyExtAuthzGrpc.statusOnError", pr.EnvoyExtAuthzGrpc.GetStatusOnError())
	case *meshconfig.MeshConfig_ExtensionProvider_Zipkin:
		checkService("zipkin", pr.Zipkin)
	case *meshconfig.MeshConfig_ExtensionProvider_Lightstep:
		checkService("lightstep", pr.Lightstep)
		if pr.Lightstep.GetAccessToken() == "" {
			r.Warnf(p+".lightstep.accessToken", "must be set")
		}
	case *meshconfig.MeshConfig_ExtensionProvider_Datadog:
		checkService("datadog", pr.Datadog)
	case *meshconfig.MeshConfig_ExtensionProvider_Opencensus:
		checkService("opencensus", pr.Opencensus)
	case *meshconfig.MeshConfig_ExtensionProvider_Skywalking:
		checkService("skywalking", pr.Skywalking)
	case *meshconfig.MeshConfig_ExtensionProvider_Opentelemetry:
		checkService("opentelemetry", pr.Opentelemetry)
		if pr.Opentelemetry.GetHttp() != nil && pr.Opentelemetry.GetGrpc() != nil {
			r.Warnf(p+".opentelemetry", "http and grpc cannot both be set")
		}
	case *meshconfig.MeshConfig_ExtensionProvider_EnvoyOtelAls:
		checkService("envoyOtelAls", pr.EnvoyOtelAls)
	case *meshconfig.MeshConfig_ExtensionProvider_EnvoyHttpAls:
		checkService("envoyHttpAls", pr.EnvoyHttpAls)
	case *meshconfig.MeshConfig_ExtensionProvider_EnvoyTcpAls:
		checkService("envoyTcpAls", pr.EnvoyTcpAls)
	case *meshconfig.MeshConfig_ExtensionProvider_Sds:
		if pr.Sds.GetName() == "" {
			r.Warnf(p+".sds.name", "must be set")
		}
		checkService("sds", pr.Sds)
	case *meshconfig.MeshConfig_ExtensionProvider_Prometheus,
		*meshconfig.MeshConfig_ExtensionProvider_Stackdriver,
		*meshconfig.MeshConfig_ExtensionProvider_EnvoyFileAccessLog:
		// Nothing is required.
	default:
		r.Warnf(p, "unsupported provider %T", pr)
	}
}

// checkStatusOnError checks an ext_authz statusOnError: empty, or an HTTP
// status code that Envoy's StatusCode enum names.
func checkStatusOnError(r *validation.Result, p, status string) {
	if status == "" {
		return
	}
	code, err := strconv.Atoi(status)
	if err != nil || !envoyStatusCode(code) {
		r.Warnf(p, "%q is not an HTTP status code Envoy supports", status)
	}
}

// envoyStatusCode reports whether Envoy's type.v3.StatusCode names code.
func envoyStatusCode(code int) bool {
	switch {
	case code == 100,
		code >= 200 && code <= 208, code == 226,
		code >= 300 && code <= 305, code == 307, code == 308,
		code >= 400 && code <= 418, code >= 421 && code <= 424, code == 426, code == 428, code == 429, code == 431,
		code >= 500 && code <= 508, code == 510, code == 511:
		return true
	}
	return false
}
