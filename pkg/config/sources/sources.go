package sources

import (
	"log/slog"
	"slices"
	"time"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
)

// Options tune how configuration is read.
type Options struct {
	// Registry is the set of kinds; nil means schema.Builtin().
	Registry *schema.Registry
	// Domain is the cluster's DNS domain, recorded on every Config.
	Domain string
	// Kinds limits the kinds read; nil means every kind of the registry
	// that the source can read.
	Kinds []config.GroupVersionKind
	// Debugger registers every collection for /debug/krtz.
	Debugger *krt.DebugHandler
	// Logger is where rejections and problems are logged.
	Logger *slog.Logger
	// Metrics counts rejections; nil counts nothing.
	Metrics *Metrics
	// Debounce is the quiet period of the folder watch (file mode).
	Debounce time.Duration
}

func (o Options) registry() *schema.Registry {
	if o.Registry == nil {
		return schema.Builtin()
	}
	return o.Registry
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

func (o Options) wants(gvk config.GroupVersionKind) bool {
	return o.Kinds == nil || slices.Contains(o.Kinds, gvk)
}

// collection returns the options of a collection of this package.
func (o Options) collection(stop <-chan struct{}, name string) []krt.CollectionOption {
	return []krt.CollectionOption{krt.WithStop(stop), krt.WithName(name), krt.WithDebugging(o.Debugger), krt.WithLogger(o.logger())}
}

// Sources is the configuration read by one source, kind by kind.
type Sources struct {
	registry *schema.Registry
	kinds    []*Kind
	// unreadable holds the documents of a folder that could not be read
	// as any object (file mode only).
	unreadable krt.Collection[Document]
}

// Kind returns the configuration of one kind, or nil if it is not read.
func (s *Sources) Kind(gvk config.GroupVersionKind) *Kind {
	for _, k := range s.kinds {
		if k.Schema.GVK == gvk {
			return k
		}
	}
	return nil
}

// Kinds returns every kind read, in registry order.
func (s *Sources) Kinds() []*Kind { return slices.Clone(s.kinds) }

// HasSynced reports whether every kind has its initial state.
func (s *Sources) HasSynced() bool {
	for _, k := range s.kinds {
		if !k.Configs.HasSynced() || !k.Verdicts.HasSynced() {
			return false
		}
	}
	return true
}

// WaitUntilSynced waits until every kind has its initial state, or stop.
func (s *Sources) WaitUntilSynced(stop <-chan struct{}) bool {
	for _, k := range s.kinds {
		if !k.Configs.WaitUntilSynced(stop) || !k.Verdicts.WaitUntilSynced(stop) {
			return false
		}
	}
	return true
}
