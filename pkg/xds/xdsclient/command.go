package xdsclient

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Run is the `xds` command line: `xds watch [flags]`. It returns
// flag.ErrHelp after printing help.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "watch" {
		fmt.Fprintln(stderr, "Usage: controlplane xds watch --type TYPE_URL [flags]\n\nSubcommands:\n  watch   subscribe to a type over ADS and print every response as a JSON line")
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			return flag.ErrHelp
		}
		return fmt.Errorf("xds: unknown subcommand %q", args[0])
	}
	var o Options
	var names stringList
	var timeout time.Duration
	fs := flag.NewFlagSet("xds watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: controlplane xds watch --type TYPE_URL [flags]\n\n"+
			"Subscribes to TYPE_URL over ADS, ACKs every response and prints it as one\n"+
			"JSON line. Config kinds are \"group/version/Kind\", for example\n"+
			"networking.istio.io/v1/VirtualService; Envoy types are\n"+
			"type.googleapis.com/envoy.config.cluster.v3.Cluster and friends.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Addr, "addr", "localhost:15010", "xDS server address")
	fs.StringVar(&o.TypeURL, "type", "", "type URL to watch (required)")
	fs.Var(&names, "name", "resource name to watch (repeatable, or comma-separated); none watches every resource")
	fs.StringVar(&o.NodeID, "node-id", "", `node id to announce (default "xds-watch~HOSTNAME")`)
	fs.BoolVar(&o.Delta, "delta", false, "use the delta (incremental) protocol")
	fs.BoolVar(&o.ProxylessGRPC, "grpc", false, "announce a proxyless gRPC client (GENERATOR=grpc node metadata)")
	fs.IntVar(&o.Count, "count", 0, "exit after this many responses (0: watch until interrupted)")
	fs.DurationVar(&timeout, "timeout", 0, "give up after this long (0: no limit)")
	fs.StringVar(&o.CAFile, "ca", "", "CA bundle: connect with TLS, trusting it")
	fs.StringVar(&o.CertFile, "cert", "", "client certificate (TLS)")
	fs.StringVar(&o.KeyFile, "key", "", "client key (TLS)")
	fs.StringVar(&o.ServerName, "server-name", "", "server name to verify (TLS; default: the host of --addr)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("xds watch: unexpected arguments %q", fs.Args())
	}
	o.Names = names
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return Watch(ctx, o, stdout)
}

// stringList is a repeatable, comma-separated flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}
