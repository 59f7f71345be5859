package krt

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// DebugHandler is the registry of a running graph: every collection built
// WithDebugging registers under its name and a unique id, and leaves when
// it is stopped. It serves the whole graph at /debug/krtz (see ServeHTTP)
// and exports per-collection metrics (see Describe and Collect).
type DebugHandler struct {
	mu      sync.Mutex
	nextUID uint64
	entries map[storeHandle]*debugEntry
}

type debugEntry struct {
	uid        uint64
	collection debugCollection
}

// NewDebugHandler returns an empty registry.
func NewDebugHandler() *DebugHandler {
	return &DebugHandler{entries: map[storeHandle]*debugEntry{}}
}

// storeHandle is a collection's store seen without its type; its identity
// is the collection's identity in the registry and in graph edges.
type storeHandle interface {
	debugName() string
	HasSynced() bool
	objectCount() int
	setUID(uid uint64)
	statsOf() *collectionStats
	queueDepth() int
}

// debugCollection is what a registered collection shows of itself.
type debugCollection interface {
	storeHandle
	// dumpState renders the collection's state, restricted to one key when
	// key is not empty.
	dumpState(key string) CollectionDump
	// upstream lists the collections this one reads, for the graph.
	upstream() []graphEdge
}

// graphEdge is a collection another one reads, and how: its primary input
// ("input"), through Fetch ("fetch"), or as the owner of a status
// collection ("status").
type graphEdge struct {
	from storeHandle
	kind string
}

// CollectionDump is the state of one collection in /debug/krtz.
type CollectionDump struct {
	// Outputs holds every object by key, rendered as JSON (an object that
	// cannot be rendered shows an error string in its place).
	Outputs map[string]any `json:"outputs"`
	// Inputs holds, for a derived collection, what each input produced and
	// what it depends on.
	Inputs map[string]InputDump `json:"inputs,omitempty"`
	// Errors holds problems a source reports by key, such as files that do
	// not parse.
	Errors map[string]string `json:"errors,omitempty"`
	Synced bool              `json:"synced"`
}

// InputDump is one input of a derived collection in /debug/krtz.
type InputDump struct {
	// Outputs are the keys of the objects the input produced.
	Outputs []string `json:"outputs"`
	// Dependencies name each collection the input fetched from, with the
	// filters used, such as "Services FilterIndex(namespace=ns-0)".
	Dependencies []string `json:"dependencies"`
}

// DebugCollection is one entry of /debug/krtz.
type DebugCollection struct {
	UID   uint64         `json:"uid"`
	Name  string         `json:"name"`
	State CollectionDump `json:"state"`
}

// Collections returns the registered collections in registration order,
// with their state.
func (d *DebugHandler) Collections() []DebugCollection {
	return d.dump(func(string) bool { return true }, "")
}

// dump returns the state of the collections whose name passes keep,
// restricted to one key when key is not empty.
func (d *DebugHandler) dump(keep func(name string) bool, key string) []DebugCollection {
	entries := d.snapshot()
	out := make([]DebugCollection, 0, len(entries))
	for _, e := range entries {
		name := e.collection.debugName()
		if keep(name) {
			out = append(out, DebugCollection{UID: e.uid, Name: name, State: e.collection.dumpState(key)})
		}
	}
	return out
}

// snapshot returns the entries ordered by uid.
func (d *DebugHandler) snapshot() []debugEntry {
	d.mu.Lock()
	entries := make([]debugEntry, 0, len(d.entries))
	for _, e := range d.entries {
		entries = append(entries, *e)
	}
	d.mu.Unlock()
	slices.SortFunc(entries, func(a, b debugEntry) int { return cmp.Compare(a.uid, b.uid) })
	return entries
}

// register adds a collection under the identity of its store, which is how
// other collections' graph edges refer to it.
func (d *DebugHandler) register(key storeHandle, c debugCollection) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextUID++
	d.entries[key] = &debugEntry{uid: d.nextUID, collection: c}
	key.setUID(d.nextUID)
}

func (d *DebugHandler) unregister(c storeHandle) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.entries, c)
}

// Store-level parts of debugCollection, shared by every kind.

func (s *store[T]) debugName() string { return s.cfg.name }

func (s *store[T]) setUID(uid uint64) { s.uid.Store(uid) }

func (s *store[T]) objectCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.objects)
}

func (s *store[T]) statsOf() *collectionStats { return &s.stats }

// queueDepth is 0 for collections without a queue; derived collections and
// views report theirs.
func (s *store[T]) queueDepth() int { return 0 }

func (d *derived[I, O]) queueDepth() int { return d.queue.depth() }

func (v *view[T]) queueDepth() int { return v.queue.depth() }

func (s *store[T]) dumpState(key string) CollectionDump {
	return s.dumpStore(key)
}

func (s *store[T]) upstream() []graphEdge {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.extraUpstream)
}

// dumpStore renders the objects (and reported errors) of the store.
func (s *store[T]) dumpStore(key string) CollectionDump {
	s.mu.RLock()
	objects := make(map[string]*T, len(s.objects))
	if key == "" {
		maps.Copy(objects, s.objects)
	} else if o, ok := s.objects[key]; ok {
		objects[key] = o
	}
	s.mu.RUnlock()
	dump := CollectionDump{Outputs: make(map[string]any, len(objects)), Synced: s.HasSynced()}
	for k, o := range objects {
		dump.Outputs[k] = render(*o)
	}
	if s.cfg.errors != nil {
		for k, msg := range s.cfg.errors() {
			if key == "" || key == k {
				if dump.Errors == nil {
					dump.Errors = map[string]string{}
				}
				dump.Errors[k] = msg
			}
		}
	}
	return dump
}

// render turns one object into JSON for the dump. It never fails: an object
// that cannot be rendered (or panics while rendering) becomes an error
// string, and the rest of the dump is unaffected.
func render(obj any) (out any) {
	defer func() {
		if p := recover(); p != nil {
			out = fmt.Sprintf("error: rendering %T panicked: %v", obj, p)
		}
	}()
	var b []byte
	var err error
	if m, ok := obj.(proto.Message); ok {
		b, err = protojson.Marshal(m)
	} else {
		b, err = json.Marshal(obj)
	}
	if err != nil {
		return fmt.Sprintf("error: cannot render %T: %v", obj, err)
	}
	return json.RawMessage(b)
}

// Derived collections add their inputs and dependencies.

func (d *derived[I, O]) dumpState(key string) CollectionDump {
	dump := d.dumpStore(key)
	d.mu.RLock()
	defer d.mu.RUnlock()
	dump.Inputs = make(map[string]InputDump, len(d.inputs))
	for k, rec := range d.inputs {
		if key != "" && k != key && !hasOutputKey(rec.outputs, key) {
			continue
		}
		in := InputDump{Outputs: make([]string, len(rec.outputs)), Dependencies: []string{}}
		for i, o := range rec.outputs {
			in.Outputs[i] = o.key
		}
		if rec.deps != nil {
			for _, dep := range rec.deps.deps {
				in.Dependencies = append(in.Dependencies, dep.describe())
			}
		}
		dump.Inputs[k] = in
	}
	return dump
}

func hasOutputKey[O any](refs []outputRef[O], key string) bool {
	return slices.ContainsFunc(refs, func(r outputRef[O]) bool { return r.key == key })
}

func (d *derived[I, O]) upstream() []graphEdge {
	edges := []graphEdge{{from: d.parent, kind: "input"}}
	d.watchMu.Lock()
	for src, w := range d.watched {
		if h, ok := w.Syncer.(storeHandle); ok && src != d.src {
			edges = append(edges, graphEdge{from: h, kind: "fetch"})
		}
	}
	d.watchMu.Unlock()
	return edges
}

// describe names a dependency: the collection, then each filter used.
func (d *dependency) describe() string {
	parts := []string{d.src.name}
	f := &d.filter
	if f.has(kindKeys) {
		if len(f.keys) == 1 {
			parts = append(parts, "FilterKey("+f.keys[0]+")")
		} else {
			parts = append(parts, "FilterKeys("+strings.Join(f.keys, ",")+")")
		}
	}
	if f.has(kindIndex) {
		parts = append(parts, fmt.Sprintf("FilterIndex(%s=%s)", f.index.ref.indexName(), f.index.key))
	}
	if f.has(kindNamespace) {
		parts = append(parts, "FilterNamespace("+f.namespace+")")
	}
	if f.has(kindLabel) {
		parts = append(parts, "FilterLabel("+formatLabels(f.labels)+")")
	}
	if f.has(kindSelects) {
		name := "FilterSelects"
		if f.selectsMode == selectsNonEmpty {
			name = "FilterSelectsNonEmpty"
		}
		parts = append(parts, name+"("+formatLabels(f.selects)+")")
	}
	for range f.generic {
		parts = append(parts, "FilterGeneric")
	}
	return strings.Join(parts, " ")
}

func formatLabels(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	return strings.Join(pairs, ",")
}

// Unsynced returns the names of the registered collections that do not
// have their initial state yet, in registration order; a daemon is ready
// when it is empty. Unlike Collections, it renders nothing.
func (d *DebugHandler) Unsynced() []string {
	var out []string
	for _, e := range d.snapshot() {
		if !e.collection.HasSynced() {
			out = append(out, e.collection.debugName())
		}
	}
	return out
}
