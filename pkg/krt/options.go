package krt

import (
	"fmt"
	"log/slog"
	"reflect"

	"github.com/meshcp/meshcp/pkg/logging"
)

// CollectionOption configures a collection at construction time.
type CollectionOption func(*collectionOptions)

type collectionOptions struct {
	name     string
	stop     <-chan struct{}
	metadata Metadata
	debugger *DebugHandler
	logger   *slog.Logger
	equal    any // func(a, b T) bool, checked against T at construction
	selector any // func(T) map[string]string, checked against T at construction
	errors   func() map[string]string
	checks   *Checks
	// violation reports a failed check; panic unless a test replaces it.
	violation func(msg string)
}

// WithName names the collection in logs and in the debug dump. Names should
// be unique and read like a path: "gateway/GatewayConfigs".
func WithName(name string) CollectionOption {
	return func(o *collectionOptions) { o.name = name }
}

// WithStop is mandatory: closing stop stops the collection, its goroutines
// and every handler registered on it.
func WithStop(stop <-chan struct{}) CollectionOption {
	return func(o *collectionOptions) { o.stop = stop }
}

// WithMetadata attaches metadata, returned by Collection.Metadata.
func WithMetadata(m Metadata) CollectionOption {
	return func(o *collectionOptions) { o.metadata = m }
}

// WithDebugging registers the collection with a DebugHandler for as long as
// it runs.
func WithDebugging(d *DebugHandler) CollectionOption {
	return func(o *collectionOptions) { o.debugger = d }
}

// WithLogger sets the logger. The default writes through slog.Default() in
// the "krt" scope, at the level KRT_LOG_LEVEL (or LOG_LEVEL) sets. The
// collection adds its name to every line.
func WithLogger(l *slog.Logger) CollectionOption {
	return func(o *collectionOptions) { o.logger = l }
}

// WithEquality replaces Equal for the collection's own objects. It is meant
// for sources whose objects carry a cheaper and exact change marker, such as
// the ResourceVersion of a Kubernetes object. The type must match the
// collection's object type.
func WithEquality[T any](equal func(a, b T) bool) CollectionOption {
	return func(o *collectionOptions) { o.equal = equal }
}

// WithSelector tells the selector filters how to read the label selector of
// the collection's objects when the type has no GetLabelSelector method (a
// Kubernetes Service keeps its selector in Spec.Selector, for example). The
// type must match the collection's object type.
func WithSelector[T any](selector func(obj T) map[string]string) CollectionOption {
	return func(o *collectionOptions) { o.selector = selector }
}

// WithDebugErrors attaches a source of errors to show in the debug dump,
// by key: the files of a folder that failed to parse, say. errs is called
// each time the dump is taken and must be safe for concurrent use.
func WithDebugErrors(errs func() map[string]string) CollectionOption {
	return func(o *collectionOptions) { o.errors = errs }
}

// collectionConfig is the checked, typed form of the options of one
// collection of T.
type collectionConfig[T any] struct {
	name      string
	stop      <-chan struct{}
	metadata  Metadata
	debugger  *DebugHandler
	logger    *slog.Logger
	access    *objectAccess[T]
	errors    func() map[string]string
	checks    Checks
	violation func(msg string)
}

// newConfig applies opts for a collection of T, panicking on a programming
// error: a missing stop channel or an option of the wrong type.
func newConfig[T any](kind string, opts []CollectionOption) collectionConfig[T] {
	var o collectionOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.name == "" {
		o.name = fmt.Sprintf("%s[%v]", kind, reflect.TypeFor[T]())
	}
	if o.stop == nil {
		panic(fmt.Sprintf("krt: collection %q has no stop channel: pass krt.WithStop", o.name))
	}
	if o.logger == nil {
		// The "krt" scope of slog's default logger, at KRT_LOG_LEVEL.
		o.logger = slog.New(logging.NewScopedHandler(slog.Default().Handler(), "krt", logging.LevelFromEnv("krt", slog.LevelInfo)))
	}
	access := newObjectAccess[T]()
	if o.equal == nil {
		access.equal = equalFuncFor[T]()
	} else {
		eq, ok := o.equal.(func(a, b T) bool)
		if !ok {
			panic(fmt.Sprintf("krt: collection %q of %v: WithEquality got %T", o.name, reflect.TypeFor[T](), o.equal))
		}
		access.equal = func(a, b *T) bool { return eq(*a, *b) }
	}
	if o.selector != nil {
		sel, ok := o.selector.(func(T) map[string]string)
		if !ok {
			panic(fmt.Sprintf("krt: collection %q of %v: WithSelector got %T", o.name, reflect.TypeFor[T](), o.selector))
		}
		access.selector = func(p *T) map[string]string { return sel(*p) }
	}
	if o.violation == nil {
		o.violation = func(msg string) { panic(msg) }
	}
	checks := checksFromEnv()
	if o.checks != nil {
		checks = *o.checks
	}
	return collectionConfig[T]{
		name:      o.name,
		stop:      o.stop,
		metadata:  o.metadata,
		debugger:  o.debugger,
		logger:    o.logger.With("collection", o.name),
		access:    access,
		errors:    o.errors,
		checks:    checks,
		violation: o.violation,
	}
}
