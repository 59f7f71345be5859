package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/gateway"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/kube"
	"github.com/meshcp/meshcp/pkg/logging"
	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/registry"
	"github.com/meshcp/meshcp/pkg/version"
	"github.com/meshcp/meshcp/pkg/xds"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// Server is a running daemon: the krt graph and the HTTP servers over it.
type Server struct {
	opts    Options
	log     *slog.Logger
	levels  *logging.Levels
	handler slog.Handler
	stop    chan struct{}
	debug   *krt.DebugHandler
	metrics *prometheus.Registry

	// Sources is the configuration read, kind by kind.
	Sources *sources.Sources
	// Mesh is the mesh config in force, for transformations to FetchOne.
	Mesh krt.Singleton[mesh.MeshConfigResource]
	// XDS serves the configuration to proxies and other control planes.
	XDS  *xds.Server
	kube *kube.Client
	mesh http.Handler

	// Registry is the service registry the Envoy types are built from.
	Registry *registry.Registry
	// Gateway is the Gateway API translation: its Gateways and
	// VirtualServices (Istio configs) are for the xDS server to distribute.
	Gateway *gateway.Controller
	// gatewayStatus serves /debug/gateway-status in file mode.
	gatewayStatus http.Handler
	// beforeStop run, in order, before the graph stops: background work
	// on the graph ends first.
	beforeStop []func()

	servers  []*http.Server
	listen   []net.Listener
	errs     chan error
	ctx      context.Context
	cleanups []func()
	once     sync.Once
}

// Start builds the graph and starts serving; it returns once the servers
// listen. The daemon runs until ctx is done (see Wait).
func Start(ctx context.Context, opts Options, logOutput io.Writer) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	levels, err := logging.ParseLevels(opts.LogLevel)
	if err != nil {
		return nil, err
	}
	var handler slog.Handler = slog.NewTextHandler(logOutput, &slog.HandlerOptions{Level: slog.LevelDebug})
	if opts.LogFormat == "json" {
		handler = slog.NewJSONHandler(logOutput, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	s := &Server{
		opts:    opts,
		levels:  levels,
		handler: handler,
		log:     levels.Logger(handler, "bootstrap"),
		stop:    make(chan struct{}),
		debug:   krt.NewDebugHandler(),
		metrics: prometheus.NewRegistry(),
		errs:    make(chan error, 4),
		ctx:     ctx,
	}
	if err := s.build(); err != nil {
		s.shutdown()
		return nil, err
	}
	if err := s.serve(); err != nil {
		s.shutdown()
		return nil, err
	}
	s.log.Info("controlplane started", "version", version.Version(), "mode", s.mode(), "debug", s.DebugAddr(), "metrics", s.MetricsAddr(), "xds", s.XDS.Addr())
	return s, nil
}

func (s *Server) mode() string {
	if s.opts.kubernetesMode() {
		return "kubernetes"
	}
	return "file"
}

// build assembles the graph.
func (s *Server) build() error {
	s.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), s.debug)
	configMetrics, err := sources.NewMetrics(s.metrics)
	if err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	srcOpts := sources.Options{
		Domain:   s.opts.Domain,
		Debugger: s.debug,
		Logger:   s.levels.Logger(s.handler, "config"),
		Metrics:  configMetrics,
		Debounce: s.opts.Debounce,
	}
	if s.opts.kubernetesMode() {
		restConfig, err := s.restConfig()
		if err != nil {
			return err
		}
		s.kube, err = kube.NewClient(restConfig, kube.WithLogger(s.levels.Logger(s.handler, "kube")))
		if err != nil {
			return fmt.Errorf("connecting to the API server: %w", err)
		}
		s.cleanups = append(s.cleanups, s.kube.Shutdown)
		s.Sources, err = sources.FromKubernetes(s.kube, s.stop, srcOpts)
		if err != nil {
			return err
		}
	} else {
		dir, err := s.configDir()
		if err != nil {
			return err
		}
		s.Sources, err = sources.FromFolder(dir, s.stop, srcOpts)
		if err != nil {
			return err
		}
		s.log.Info("file mode", "config", dir)
	}
	s.metrics.MustRegister(s.Sources)
	if err := s.buildMesh(); err != nil {
		return err
	}
	if err := s.buildGateway(); err != nil {
		return err
	}
	return s.buildXDS()
}

// buildXDS sets up the xDS server over the graph: every kind read, and
// the configs derived from Gateway API objects, are distributed under
// their type URLs.
func (s *Server) buildXDS() error {
	var err error
	s.XDS, err = xds.NewServer(s.opts.XDS, s.levels.Logger(s.handler, "xds"), s.metrics, s.debug)
	if err != nil {
		return err
	}
	for _, k := range s.Sources.Kinds() {
		s.XDS.AddConfigs(k.Schema.GVK, k.Configs)
	}
	// Gateway API objects reach clients as the Istio configs they become,
	// beside those read (which win a name both hold).
	s.XDS.AddConfigs(schema.Gateway, s.Gateway.Gateways)
	s.XDS.AddConfigs(schema.VirtualService, s.Gateway.VirtualServices)
	// Envoy's types (CDS, EDS, LDS, RDS) from the registry and the same
	// routing configs, derived ones included.
	s.Registry = registry.New(s.Sources, s.stop, registry.Options{
		Domain: s.opts.Domain, Debugger: s.debug, Logger: s.levels.Logger(s.handler, "krt"),
	})
	_, err = envoy.Serve(s.XDS, envoy.Sources{
		Registry: s.Registry,
		Configs:  s.Sources,
		Derived:  []krt.Collection[config.Config]{s.Gateway.Gateways, s.Gateway.VirtualServices},
		Mesh:     s.Mesh,
		Domain:   s.opts.Domain,
	}, s.stop, envoy.Options{Registerer: s.metrics})
	return err
}

// configDir returns the folder served in file mode.
func (s *Server) configDir() (string, error) {
	if s.opts.ConfigDir != "" {
		return s.opts.ConfigDir, nil
	}
	dir, cleanup, err := examplesDir()
	if err != nil {
		return "", err
	}
	s.cleanups = append(s.cleanups, cleanup)
	if s.opts.MeshConfigFile == "" {
		s.opts.MeshConfigFile = dir + "/mesh.yaml"
	}
	return dir + "/config", nil
}

func (s *Server) restConfig() (*rest.Config, error) {
	if s.opts.InCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster credentials: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.opts.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", s.opts.Kubeconfig, err)
	}
	return cfg, nil
}

// Wait runs until the context given to Start is done or a server fails,
// then shuts down: servers drain for at most ShutdownTimeout, then the
// graph stops.
func (s *Server) Wait() error {
	var err error
	select {
	case <-s.ctx.Done():
		s.log.Info("shutting down", "reason", context.Cause(s.ctx))
	case err = <-s.errs:
		s.log.Error("a server failed; shutting down", "error", err)
	}
	return errors.Join(err, s.shutdown())
}

// shutdown stops servers and the graph, once.
func (s *Server) shutdown() error {
	var err error
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
		defer cancel()
		for _, srv := range s.servers {
			if e := srv.Shutdown(ctx); e != nil {
				err = errors.Join(err, fmt.Errorf("stopping %s: %w", srv.Addr, e))
			}
		}
		for _, l := range s.listen {
			_ = l.Close()
		}
		for _, f := range s.beforeStop {
			f()
		}
		close(s.stop)
		if s.XDS != nil {
			s.XDS.Wait()
		}
		for i := len(s.cleanups) - 1; i >= 0; i-- {
			s.cleanups[i]()
		}
	})
	return err
}

// Debug returns the krt debug handler, for tests and embedding.
func (s *Server) Debug() *krt.DebugHandler { return s.debug }
