package mesh

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshcp/meshcp/pkg/config/validation"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/files"
)

// Options tunes a Watcher. The zero value is usable.
type Options struct {
	// Registerer receives the Watcher's metrics (see Watcher). Nil leaves
	// them unregistered; there is no fallback to a global registry.
	Registerer prometheus.Registerer

	// Logger receives why each version of the file was accepted or
	// rejected, and is handed to the collections. Nil means slog.Default()
	// for the former and krt's default for the latter.
	Logger *slog.Logger

	// Debounce is how long the file must stay quiet after a change before
	// it is read (files.Options.Debounce). Zero means files.DefaultDebounce.
	Debounce time.Duration
}

// Watcher is the mesh config in force, as a krt singleton: Istio's
// defaults (Default) merged with a watched file (Apply). Transformations
// read it with krt.FetchOne(ctx, watcher.AsCollection()), which always
// finds a value.
//
// What is in force:
//
//   - No file, or an empty one: the defaults. A file removed at run time
//     brings the defaults back, as in istiod: no file means no overrides.
//   - A file that Apply accepts: the defaults merged with it.
//   - A file that Apply rejects: at start-up the defaults; at run time the
//     last config accepted from the file, which keeps the mesh as it was
//     rather than reverting settings like outboundTrafficPolicy to their
//     defaults. A rejected file never produces an event.
//
// Each outcome is logged with its reason and shown by Status and
// DebugHandler. Metrics, registered on Options.Registerer:
//
//   - meshcp_mesh_config_valid: 1 when the file's current content is in
//     force (or there is no file), 0 while it is rejected.
//   - meshcp_mesh_config_rejected_loads_total: rejected contents.
//   - meshcp_mesh_config_last_load_success_timestamp_seconds.
type Watcher struct {
	krt.Singleton[MeshConfigResource]

	path    string
	logger  *slog.Logger
	metrics *metrics

	mu sync.Mutex
	// file holds what the file makes of the defaults: the last content
	// Apply accepted, or no value when the file is missing or empty, or has
	// not been valid since it appeared.
	file  krt.Singleton[MeshConfigResource]
	state loadState
}

// loadState is what the Watcher knows about the file's loads.
type loadState struct {
	// valid is false while the file's current content is rejected.
	valid bool
	// loadedAt is when the content in force was read; zero when the
	// defaults are in force.
	loadedAt time.Time
	// checkedAt is when content of the file was last read.
	checkedAt time.Time
	// warnings are those of the content in force.
	warnings []validation.Finding
	// lastError is the last rejection, kept after the file is fixed.
	lastError *LoadError
}

// NewWatcher watches the mesh config file at path until stop closes (see
// Watcher). The file's directory must exist; the file need not. opts
// configure the krt singleton (name, debugging, ...) as for any collection;
// the stop channel is set from stop. The file is read before NewWatcher
// returns, and the singleton is synced.
func NewWatcher(path string, stop <-chan struct{}, o Options, opts ...krt.CollectionOption) (*Watcher, error) {
	if stop == nil {
		return nil, fmt.Errorf("watching mesh config %s: a stop channel is required", path)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, fmt.Errorf("watching mesh config %s: %w", path, err)
	}
	w := &Watcher{
		path:    path,
		logger:  logger.With("meshConfig", path),
		metrics: m,
		state:   loadState{valid: true},
	}

	fileOpts := append(slices.Clone(opts), krt.WithName("mesh/MeshConfigFile["+path+"]"))
	file, err := files.NewFileSingletonWithOptions(path, w.parse, stop,
		files.Options{Debounce: o.Debounce, Logger: o.Logger}, fileOpts...)
	if err != nil {
		m.unregister()
		return nil, fmt.Errorf("watching mesh config %s: %w", path, err)
	}
	w.mu.Lock()
	w.file = file
	w.mu.Unlock()
	// Registered before looking at the value, so that a removal right
	// after the first read is not missed.
	file.Register(func(e krt.Event[MeshConfigResource]) {
		if e.Event == krt.EventDelete {
			w.noFileValue(false)
		}
	})
	if file.Get() == nil {
		w.noFileValue(true)
	}

	meshOpts := []krt.CollectionOption{krt.WithName("mesh/MeshConfig")}
	if o.Logger != nil {
		meshOpts = append(meshOpts, krt.WithLogger(o.Logger))
	}
	meshOpts = append(append(meshOpts, opts...), krt.WithStop(stop))
	w.Singleton = krt.NewSingleton(func(ctx krt.HandlerContext) *MeshConfigResource {
		if f := krt.FetchOne(ctx, file.AsCollection()); f != nil {
			return f
		}
		return &MeshConfigResource{Default()}
	}, meshOpts...)
	if !w.AsCollection().WaitUntilSynced(stop) {
		m.unregister()
		return nil, fmt.Errorf("watching mesh config %s: stopped before the first read", path)
	}
	return w, nil
}

// Path is the file the Watcher watches.
func (w *Watcher) Path() string { return w.path }

// parse is the file singleton's parse function: the defaults merged with
// the file's content. It records the outcome; on an error the files
// package keeps the last good value, or none.
func (w *Watcher) parse(data []byte) (*MeshConfigResource, error) {
	mc, res, err := Apply(Default(), data)
	now := time.Now()

	w.mu.Lock()
	// Before the files package stores this result, the value it holds is
	// what stays in force if this content is rejected.
	keepsLastGood := w.file != nil && w.file.Get() != nil
	w.state.checkedAt = now
	if err != nil {
		w.state.valid = false
		errs, omittedErrs := capFindings(res.Errors)
		warns, omittedWarns := capFindings(res.Warnings)
		w.state.lastError = &LoadError{At: now, Message: err.Error(), Errors: errs, Warnings: warns, Omitted: omittedErrs + omittedWarns}
		w.metrics.rejectedLoad()
		w.mu.Unlock()
		if keepsLastGood {
			w.logger.Error("mesh config file rejected; keeping the last good mesh config", "error", err)
		} else {
			w.logger.Error("mesh config file rejected; using Istio's defaults", "error", err)
		}
		return nil, err
	}
	warnings, omitted := capFindings(res.Warnings)
	w.state.valid = true
	w.state.loadedAt = now
	w.state.warnings = warnings
	w.metrics.accepted(now)
	w.mu.Unlock()

	w.logger.Info("mesh config file loaded", "warnings", len(res.Warnings))
	for _, f := range warnings {
		w.logger.Warn("mesh config warning", "path", f.Path, "warning", f.Message)
	}
	if omitted > 0 {
		w.logger.Warn("more mesh config warnings not shown", "count", omitted)
	}
	return &MeshConfigResource{mc}, nil
}

// noFileValue records that the file gives no config: at start-up (initial)
// or when the file was removed. The file is looked at again, under the
// lock parse also takes, since it may have come back by now: if it has
// content, its read reports on it, before or after this.
func (w *Watcher) noFileValue(initial bool) {
	w.mu.Lock()
	info, err := os.Stat(w.path)
	var msg string
	switch {
	case errors.Is(err, fs.ErrNotExist) && initial:
		msg = "mesh config file does not exist; using Istio's defaults"
	case errors.Is(err, fs.ErrNotExist):
		msg = "mesh config file removed; using Istio's defaults"
	case err == nil && info.Size() == 0:
		msg = "mesh config file is empty; using Istio's defaults"
	case initial && w.state.checkedAt.IsZero():
		// The file has content that parse never saw: it could not be read.
		// The files package logs it; record it as a rejection.
		if _, rerr := os.ReadFile(w.path); rerr != nil {
			now := time.Now()
			w.state.valid = false
			w.state.lastError = &LoadError{At: now, Message: rerr.Error()}
			w.metrics.rejectedLoad()
			w.mu.Unlock()
			w.logger.Error("cannot read the mesh config file; using Istio's defaults", "error", rerr)
			return
		}
		w.mu.Unlock()
		return
	default:
		w.mu.Unlock()
		return
	}
	w.state.valid = true
	w.state.loadedAt = time.Time{}
	w.state.warnings = nil
	w.metrics.cleared()
	w.mu.Unlock()
	w.logger.Warn(msg)
}
