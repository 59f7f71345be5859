// Package bootstrap assembles the daemon: it reads configuration (from a
// folder or from the API server) and the mesh config into the krt graph,
// translates Gateway API objects (writing their statuses back when it is
// the elected leader), builds the service registry, serves every accepted
// kind over xDS (package xds) and Envoy's CDS, EDS, LDS and RDS from the
// registry and the routing configs, derived ones included (package
// xds/envoy), and serves the graph for debugging (/debug/krtz,
// /debug/configz, /debug/syncz, /debug/config_dump?proxyID=, /debug/mesh,
// /debug/gateway-status in file mode),
// readiness (/ready), liveness (/healthz), profiles (pprof) and metrics.
// The command in cmd/controlplane parses flags into Options and calls
// Start.
package bootstrap

import (
	"errors"
	"fmt"
	"time"

	"github.com/meshcp/meshcp/pkg/gateway"
	"github.com/meshcp/meshcp/pkg/leader"
	"github.com/meshcp/meshcp/pkg/xds"
)

// Options is everything the daemon can be told.
type Options struct {
	// ConfigDir is the folder of configuration served in file mode. Empty
	// means the examples: ./examples/config in a checkout, else a copy of
	// the embedded examples.
	ConfigDir string
	// MeshConfigFile is the mesh config file, watched. Empty means the
	// examples' mesh.yaml in file mode and Istio's defaults in Kubernetes
	// mode.
	MeshConfigFile string
	// Kubeconfig switches to Kubernetes mode with these credentials;
	// InCluster does so with the pod's service account.
	Kubeconfig string
	InCluster  bool
	// Domain is the cluster's DNS domain.
	Domain string
	// DebugAddr serves /debug/*, /ready, /healthz and pprof; MetricsAddr serves
	// /metrics. An empty address disables the server.
	DebugAddr   string
	MetricsAddr string
	// LogLevel is a spec such as "info,krt=debug" (see logging.ParseLevels);
	// LogFormat is "text" or "json".
	LogLevel  string
	LogFormat string
	// Debounce is the quiet period of file watches.
	Debounce time.Duration
	// ShutdownTimeout bounds how long servers drain on shutdown.
	ShutdownTimeout time.Duration
	// GatewayControllerName is the controllerName of the GatewayClasses
	// meshcp handles (the class "meshcp" is handled without an object).
	GatewayControllerName string
	// LeaseName and LeaseNamespace name the Lease replicas elect the one
	// that writes Gateway API statuses with (Kubernetes mode).
	LeaseName      string
	LeaseNamespace string
	// LeaseDuration is how long a Lease held by a replica that stopped
	// renewing it (killed, partitioned) keeps the others from taking over;
	// RenewDeadline how long the holder keeps trying to renew before it
	// stops writing; RetryPeriod how often replicas try.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// XDS configures the xDS server: ports, TLS, push debounce, limits.
	XDS xds.Options
}

// DefaultOptions are the daemon's defaults: file mode on the examples,
// debug endpoints on localhost only (as istiod keeps them), metrics on
// 15014, xDS on 15010 (and 15012 with TLS files).
func DefaultOptions() Options {
	return Options{
		Domain:          "cluster.local",
		DebugAddr:       "localhost:8080",
		MetricsAddr:     ":15014",
		LogLevel:        "info",
		LogFormat:       "text",
		Debounce:        100 * time.Millisecond,
		ShutdownTimeout: 10 * time.Second,

		GatewayControllerName: gateway.DefaultControllerName,
		LeaseName:             "meshcp-gateway-status-leader",
		LeaseNamespace:        "default",
		LeaseDuration:         leader.DefaultLeaseDuration,
		RenewDeadline:         leader.DefaultRenewDeadline,
		RetryPeriod:           leader.DefaultRetryPeriod,

		XDS: xds.DefaultOptions(),
	}
}

// kubernetesMode reports whether the options ask for the API server.
func (o Options) kubernetesMode() bool { return o.Kubeconfig != "" || o.InCluster }

// validate rejects contradictory options.
func (o Options) validate() error {
	var errs []error
	if o.Kubeconfig != "" && o.InCluster {
		errs = append(errs, errors.New("--kubeconfig and --in-cluster are exclusive"))
	}
	if o.kubernetesMode() && o.ConfigDir != "" {
		errs = append(errs, errors.New("--config-dir is for file mode; in Kubernetes mode configuration comes from the API server"))
	}
	if o.LogFormat != "text" && o.LogFormat != "json" {
		errs = append(errs, errors.New("--log-format must be text or json"))
	}
	if o.Domain == "" {
		errs = append(errs, errors.New("--domain must not be empty"))
	}
	if o.kubernetesMode() && (o.LeaseName == "" || o.LeaseNamespace == "") {
		errs = append(errs, errors.New("--lease-name and --lease-namespace must not be empty in Kubernetes mode"))
	}
	if o.RetryPeriod <= 0 || o.RenewDeadline <= o.RetryPeriod || o.LeaseDuration <= o.RenewDeadline {
		errs = append(errs, fmt.Errorf("--lease-duration %s must exceed --lease-renew-deadline %s, which must exceed --lease-retry-period %s (> 0)", o.LeaseDuration, o.RenewDeadline, o.RetryPeriod))
	}
	if err := o.XDS.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
