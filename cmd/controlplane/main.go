// Command controlplane is the meshcp daemon. With no flags it serves the
// bundled examples from a watched folder (file mode); --kubeconfig or
// --in-cluster read configuration from a Kubernetes API server instead.
//
// Its debug server (localhost:8080 by default) answers /debug/krtz (the
// whole krt graph), /debug/configz (every object read, accepted or
// rejected with the reasons), /debug/syncz (the xDS connections and their
// ACKs), /debug/mesh, /debug/gateway-status (the Gateway API statuses, in
// file mode; in Kubernetes mode the elected replica writes them to the
// objects), /ready, /healthz and pprof; metrics are on :15014/metrics; xDS
// (ADS, SotW and delta) on :15010, and on :15012 with TLS files.
//
// "controlplane xds watch --type TYPE_URL" is an xDS client that prints
// what a server sends.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshcp/meshcp/pkg/bootstrap"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/version"
	"github.com/meshcp/meshcp/pkg/xds/xdsclient"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

// run parses flags and runs the daemon until SIGINT or SIGTERM; "xds ..."
// runs the xDS client instead.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "xds" {
		ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer cancel()
		return xdsclient.Run(ctx, args[1:], stdout, stderr)
	}
	opts, printVersion, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if printVersion {
		fmt.Fprintln(stdout, version.String())
		return nil
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	srv, err := bootstrap.Start(ctx, opts, stderr)
	if err != nil {
		return err
	}
	return srv.Wait()
}

func parseFlags(args []string, stderr io.Writer) (bootstrap.Options, bool, error) {
	opts := bootstrap.DefaultOptions()
	fs := flag.NewFlagSet("controlplane", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: controlplane [flags]\n       controlplane xds watch --type TYPE_URL [flags]\n\n"+
			"Runs the meshcp control plane. With no flags it serves the bundled examples\n"+
			"(file mode); --kubeconfig or --in-cluster read from the Kubernetes API.\n"+
			"It serves xDS on --xds-addr. \"xds watch\" is a client that prints what an xDS\n"+
			"server sends (controlplane xds watch --help).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&opts.ConfigDir, "config-dir", "", "folder of YAML configuration to serve in file mode (default: the bundled examples)")
	fs.StringVar(&opts.MeshConfigFile, "mesh-config", "", "mesh config file, watched (default: the examples' mesh.yaml in file mode, Istio's defaults otherwise)")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "kubeconfig file: read configuration from that API server")
	fs.BoolVar(&opts.InCluster, "in-cluster", false, "read configuration from the API server of the cluster this pod runs in")
	fs.StringVar(&opts.Domain, "domain", opts.Domain, "DNS domain of the cluster")
	fs.StringVar(&opts.DebugAddr, "debug-addr", opts.DebugAddr, "address of the debug server (/debug/krtz, /debug/configz, /debug/mesh, /ready, pprof); empty disables it")
	fs.StringVar(&opts.MetricsAddr, "metrics-addr", opts.MetricsAddr, "address of the metrics server (/metrics); empty disables it")
	fs.StringVar(&opts.LogLevel, "log-level", opts.LogLevel, `log levels: a default and per-scope levels, such as "info,krt=debug"; KRT_LOG_LEVEL and friends apply to scopes not named here`)
	fs.StringVar(&opts.LogFormat, "log-format", opts.LogFormat, "log format: text or json")
	fs.DurationVar(&opts.Debounce, "debounce", opts.Debounce, "quiet period before a changed file is read again")
	fs.DurationVar(&opts.ShutdownTimeout, "shutdown-timeout", opts.ShutdownTimeout, "how long servers drain on SIGTERM")
	fs.StringVar(&opts.GatewayControllerName, "gateway-controller-name", opts.GatewayControllerName, `controllerName of the GatewayClasses meshcp handles (the class "meshcp" is handled even without a GatewayClass object)`)
	fs.StringVar(&opts.LeaseName, "lease-name", opts.LeaseName, "name of the Lease replicas elect the one that writes Gateway API statuses with (Kubernetes mode)")
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		opts.LeaseNamespace = ns
	}
	fs.StringVar(&opts.LeaseNamespace, "lease-namespace", opts.LeaseNamespace, "namespace of that Lease (default: $POD_NAMESPACE, else default)")
	fs.DurationVar(&opts.LeaseDuration, "lease-duration", opts.LeaseDuration, "how long a Lease whose holder stopped renewing it (killed) keeps the other replicas from taking over")
	fs.DurationVar(&opts.RenewDeadline, "lease-renew-deadline", opts.RenewDeadline, "how long the holder keeps trying to renew the Lease before it stops writing statuses")
	fs.DurationVar(&opts.RetryPeriod, "lease-retry-period", opts.RetryPeriod, "how often replicas try to take or renew the Lease")
	opts.XDS.RegisterFlags(fs)
	checks := fs.String("krt-checks", os.Getenv(krt.ChecksEnv), `krt debugging checks: "mutation", "purity", "purity-strict" or "all", comma-separated (slow; sets `+krt.ChecksEnv+`)`)
	printVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return opts, false, err
	}
	if fs.NArg() > 0 {
		return opts, false, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *checks != "" {
		if _, err := krt.ParseChecks(*checks); err != nil {
			return opts, false, err
		}
		// The checks apply to every collection; krt reads them from here.
		if err := os.Setenv(krt.ChecksEnv, *checks); err != nil {
			return opts, false, err
		}
	}
	return opts, *printVersion, nil
}
