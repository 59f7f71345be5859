package xds

import "sync"

// Watch is what one connection asks for of one type URL. Generators read
// it; only the server changes it.
type Watch struct {
	// TypeURL is the type watched.
	TypeURL string
	// Wildcard is set when the client asked for every resource of the type
	// (an explicit "*", or no names on its first request).
	Wildcard bool
	// Names are the resources subscribed to by name.
	Names map[string]struct{}
}

// Wants reports whether the watch covers a resource name.
func (w *Watch) Wants(name string) bool {
	if w.Wildcard {
		return true
	}
	_, ok := w.Names[name]
	return ok
}

// A Generator builds the resources of one type URL for a client. It returns
// every resource the watch covers (all of them for a wildcard watch, the
// named ones that exist otherwise); the server works out what the client
// does not have yet. Generate is called from many connections at once and
// must not change the Resources it hands out.
type Generator interface {
	Generate(proxy *Proxy, w *Watch, req *PushRequest) (Generated, error)
}

// Generated is what a Generator made for one watch: the resources, and
// warnings about configuration it could not generate as written (a route
// a gRPC client cannot follow, a destination that does not exist). The
// server shows the warnings of each connection's last generation on
// /debug/syncz and logs each distinct one once.
type Generated struct {
	Resources []*Resource
	Warnings  []string
}

// A Scoper is a Generator that can tell, cheaply, whether a change can alter
// what it generates for a watch. Connections whose watches it rules out are
// not pushed at all; a Generator that is no Scoper is asked on every push.
// An EDS generator answering true only for endpoint changes, and a CDS
// generator answering false for them, is how an endpoint change re-sends
// only EDS.
type Scoper interface {
	Affects(proxy *Proxy, w *Watch, req *PushRequest) bool
}

// GeneratorFunc adapts a function to a Generator.
type GeneratorFunc func(proxy *Proxy, w *Watch, req *PushRequest) (Generated, error)

// Generate calls f.
func (f GeneratorFunc) Generate(proxy *Proxy, w *Watch, req *PushRequest) (Generated, error) {
	return f(proxy, w, req)
}

// Generators picks the generator of a type URL for a client kind: one
// registered for that kind, else one registered for every kind.
type Generators struct {
	mu     sync.RWMutex
	byKind map[ClientKind]map[string]Generator
	any    map[string]Generator
}

// NewGenerators returns an empty set.
func NewGenerators() *Generators {
	return &Generators{byKind: map[ClientKind]map[string]Generator{}, any: map[string]Generator{}}
}

// Register serves typeURL with g for every client kind without a generator
// of its own for it.
func (g *Generators) Register(typeURL string, gen Generator) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.any[typeURL] = gen
}

// RegisterFor serves typeURL with gen for clients of one kind.
func (g *Generators) RegisterFor(kind ClientKind, typeURL string, gen Generator) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byKind[kind] == nil {
		g.byKind[kind] = map[string]Generator{}
	}
	g.byKind[kind][typeURL] = gen
}

// For returns the generator of typeURL for a client kind, or nil when the
// type is unknown.
func (g *Generators) For(kind ClientKind, typeURL string) Generator {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if gen, ok := g.byKind[kind][typeURL]; ok {
		return gen
	}
	return g.any[typeURL]
}

// Known reports whether any client kind has a generator for typeURL.
func (g *Generators) Known(typeURL string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if _, ok := g.any[typeURL]; ok {
		return true
	}
	for _, m := range g.byKind {
		if _, ok := m[typeURL]; ok {
			return true
		}
	}
	return false
}

// affects reports whether a push request can change what gen generates for
// w.
func affects(gen Generator, proxy *Proxy, w *Watch, req *PushRequest) bool {
	if req.Full {
		return true
	}
	if s, ok := gen.(Scoper); ok {
		return s.Affects(proxy, w, req)
	}
	return true
}
