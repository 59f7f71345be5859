package bootstrap

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// serve starts the xDS, debug and metrics servers.
func (s *Server) serve() error {
	if err := s.XDS.Start(s.stop); err != nil {
		return err
	}
	if s.opts.DebugAddr != "" {
		if err := s.listenAndServe(s.opts.DebugAddr, s.debugMux()); err != nil {
			return fmt.Errorf("debug server: %w", err)
		}
	}
	if s.opts.MetricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{Registry: s.metrics}))
		if err := s.listenAndServe(s.opts.MetricsAddr, mux); err != nil {
			return fmt.Errorf("metrics server: %w", err)
		}
	}
	return nil
}

// debugMux routes the debug endpoints.
func (s *Server) debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /debug/krtz", s.debug)
	mux.Handle("GET /debug/configz", s.Sources)
	mux.Handle("GET /debug/syncz", s.XDS.SyncHandler())
	mux.Handle("GET /debug/config_dump", envoy.ConfigDumpHandler(s.XDS))
	if s.mesh != nil {
		mux.Handle("GET /debug/mesh", s.mesh)
	}
	if s.gatewayStatus != nil {
		mux.Handle("GET /debug/gateway-status", s.gatewayStatus)
	}
	mux.HandleFunc("GET /ready", s.ready)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		// Alive means serving HTTP; /ready says whether the graph is loaded.
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "meshcp controlplane: /debug/krtz /debug/configz /debug/syncz /debug/config_dump?proxyID= /debug/mesh /debug/gateway-status (file mode) /ready /healthz /debug/pprof/")
	})
	return mux
}

// ready answers 200 once every collection of the graph has its initial
// state, and 503 with the names of those still loading before.
func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	if unsynced := s.debug.Unsynced(); len(unsynced) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: waiting for %s\n", strings.Join(unsynced, ", "))
		return
	}
	fmt.Fprintln(w, "ready")
}

func (s *Server) listenAndServe(addr string, h http.Handler) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: l.Addr().String(), Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.listen = append(s.listen, l)
	s.servers = append(s.servers, srv)
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errs <- fmt.Errorf("serving %s: %w", srv.Addr, err)
		}
	}()
	return nil
}

// DebugAddr is the address the debug server listens on, or "".
func (s *Server) DebugAddr() string { return s.addr(s.opts.DebugAddr, 0) }

// MetricsAddr is the address the metrics server listens on, or "".
func (s *Server) MetricsAddr() string {
	if s.opts.DebugAddr == "" {
		return s.addr(s.opts.MetricsAddr, 0)
	}
	return s.addr(s.opts.MetricsAddr, 1)
}

func (s *Server) addr(configured string, i int) string {
	if configured == "" || i >= len(s.listen) {
		return ""
	}
	return s.listen[i].Addr().String()
}
