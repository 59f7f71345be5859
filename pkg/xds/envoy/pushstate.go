package envoy

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/meshcp/meshcp/pkg/xds"
)

// pushState is what every connection of one push shares: the Model, built
// once for the push, and the outputs generated from it, each built once
// for all the connections that ask the same thing (istiod's push context
// and its caches, for one push).
type pushState struct {
	generation uint64
	// The Model is built when a connection first needs it, so a push that
	// reaches no Envoy client (a daemon serving config distribution only)
	// builds none.
	modelOnce sync.Once
	built     atomic.Pointer[Model]
	build     func() *Model

	// prev are the traits of the last Model built before this push's:
	// what was sent before may depend on them.
	prev traits

	mu      sync.Mutex
	outputs map[string]*output
}

// output is one generated answer, built by the first connection asking
// for it while the others wait.
type output struct {
	once      sync.Once
	generated xds.Generated
}

// newPushState is the state of a push whose Model build makes, when it
// is first needed.
func newPushState(build func() *Model, generation uint64, prev traits) *pushState {
	return &pushState{build: build, generation: generation, prev: prev, outputs: map[string]*output{}}
}

// traits are those of this push's Model or the last one's: what the push
// may change.
func (ps *pushState) traits() traits { return ps.prev.or(ps.model().traits) }

// model returns the push's Model, building it the first time.
func (ps *pushState) model() *Model {
	ps.modelOnce.Do(func() { ps.built.Store(ps.build()) })
	return ps.built.Load()
}

// sameModel is how the next push gets this push's Model: the Model when
// it was built, else the way to build it; never this push's state, whose
// outputs would then be kept for as long as pushes reuse the Model.
func (ps *pushState) sameModel() func() *Model {
	if m := ps.built.Load(); m != nil {
		return func() *Model { return m }
	}
	return ps.build
}

// get returns the output under key, building it with build the first
// time; reused reports whether another connection had asked first.
func (ps *pushState) get(key string, build func() xds.Generated) (out xds.Generated, reused bool) {
	ps.mu.Lock()
	o, reused := ps.outputs[key]
	if !reused {
		o = &output{}
		ps.outputs[key] = o
	}
	ps.mu.Unlock()
	o.once.Do(func() { o.generated = build() })
	return o.generated, reused
}

// requestKey names what a request's output depends on: the type, the
// proxy's kind, namespace and labels (the only parts of a proxy the
// builders read), and the names asked for ("*" for all of them). Two
// proxyless clients of one namespace watching the same target get the
// same key, and so the same resources.
func requestKey(typeURL string, p *Proxy, w *xds.Watch) string {
	// Every part is length-prefixed, so no name a client sends can make
	// two different requests read alike.
	var b strings.Builder
	put := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	put(typeURL)
	put(string(p.Kind))
	put(p.Namespace)
	b.WriteString(strconv.Itoa(len(p.Labels)))
	for _, k := range slices.Sorted(maps.Keys(p.Labels)) {
		put(k)
		put(p.Labels[k])
	}
	if w.Wildcard {
		b.WriteByte('*')
		return b.String()
	}
	b.WriteString(strconv.Itoa(len(w.Names)))
	for _, n := range slices.Sorted(maps.Keys(w.Names)) {
		put(n)
	}
	return b.String()
}
