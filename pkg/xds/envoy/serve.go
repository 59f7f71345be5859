package envoy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/pkg/registry"
	"github.com/meshcp/meshcp/pkg/xds"
)

// Options tune a Generator.
type Options struct {
	// Registerer receives the generator's metrics; nil for none.
	Registerer prometheus.Registerer
}

// Generator serves the Envoy types to an xDS server (see Serve): for each
// push it builds one Model, shared by every connection, and generates each
// distinct request once, however many connections make it (a thousand
// proxyless clients of one namespace watching one target cost one
// generation per type); it tells the server which changes concern which
// types, so that pushes reach only what a change can alter.
type Generator struct {
	inputs func() Inputs

	mu   sync.Mutex
	push *pushState
	// last are the traits of the last Model built (see affects).
	last traits

	stats   stats
	metrics *generatorMetrics
}

// Stats count what a Generator did since it was made.
type Stats struct {
	// ModelBuilds is how many Models were built: one per push that
	// changed what a Model holds, plus the first.
	ModelBuilds int64
	// Generations is how many outputs were built; Reuses how many
	// requests got an output another connection's identical request had
	// built in the same push.
	Generations int64
	Reuses      int64
}

type stats struct{ modelBuilds, generations, reuses atomic.Int64 }

// NewGenerator returns a generator whose Models are built from what inputs
// returns, once per push that needs one.
func NewGenerator(inputs func() Inputs, opts Options) (*Generator, error) {
	m, err := newGeneratorMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	return &Generator{inputs: inputs, metrics: m}, nil
}

// Stats returns the counters.
func (g *Generator) Stats() Stats {
	return Stats{ModelBuilds: g.stats.modelBuilds.Load(), Generations: g.stats.generations.Load(), Reuses: g.stats.reuses.Load()}
}

// Prepare readies a push (the xDS server calls it before pushing any
// connection): a new Model when the push changed what it holds, the same
// one for endpoint changes alone (builders read endpoints from the
// registry as they go), and no outputs carried over from the last push
// unless nothing the builders read changed. The Model is built when the
// first connection of the push needs it, once for all of them.
func (g *Generator) Prepare(req *xds.PushRequest) {
	if !concernsBuilders(req) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	build := g.buildModel
	if prev := g.push; prev != nil && !rebuildsModel(req) {
		build = prev.sameModel()
	}
	g.push = newPushState(build, req.Generation, g.last)
}

// current is the state of the push in progress, or a first one.
func (g *Generator) current() *pushState {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.push == nil {
		g.push = newPushState(g.buildModel, 0, traits{})
	}
	return g.push
}

func (g *Generator) buildModel() *Model {
	g.stats.modelBuilds.Add(1)
	g.metrics.modelBuilds.Inc()
	m := NewModel(g.inputs())
	g.mu.Lock()
	g.last = m.traits
	g.mu.Unlock()
	return m
}

// For returns the xds.Generator (and xds.Scoper) of one Envoy type URL.
func (g *Generator) For(typeURL string) xds.Generator { return typeGenerator{g: g, typeURL: typeURL} }

// typeGenerator is the Generator of one type URL.
type typeGenerator struct {
	g       *Generator
	typeURL string
}

// Generate returns the resources the watch covers.
func (t typeGenerator) Generate(p *xds.Proxy, w *xds.Watch, _ *xds.PushRequest) (xds.Generated, error) {
	return t.g.generate(t.typeURL, p, w), nil
}

// Affects reports whether a push can change what the watch gets.
func (t typeGenerator) Affects(p *xds.Proxy, w *xds.Watch, req *xds.PushRequest) bool {
	return t.g.affects(t.typeURL, p, w, req)
}

// generate answers a watch from the push's outputs, building it the first
// time it is asked in this push.
func (g *Generator) generate(typeURL string, p *Proxy, w *xds.Watch) xds.Generated {
	if !w.Wildcard && len(w.Names) == 0 {
		return xds.Generated{}
	}
	ps := g.current()
	out, reused := ps.get(requestKey(typeURL, p, w), func() xds.Generated { return buildOutput(typeURL, p, w, ps.model()) })
	label := metricType(typeURL)
	if reused {
		g.stats.reuses.Add(1)
		g.metrics.outputs.WithLabelValues(label, "reused").Inc()
	} else {
		g.stats.generations.Add(1)
		g.metrics.outputs.WithLabelValues(label, "built").Inc()
	}
	return out
}

// buildOutput runs the builders for a watch and packs what they made,
// once for every connection the output goes to.
func buildOutput(typeURL string, p *Proxy, w *xds.Watch, m *Model) xds.Generated {
	var names []string
	if !w.Wildcard {
		names = slices.Sorted(maps.Keys(w.Names))
	}
	res := Builders{}.Generate(Request{Proxy: p, TypeURL: typeURL, Names: names}, m)
	out := xds.Generated{Resources: make([]*xds.Resource, 0, len(res.Resources))}
	for _, r := range res.Resources {
		out.Resources = append(out.Resources, xds.NewResource(r.Name, mustAny(r.Message)))
	}
	for _, warning := range res.Warnings {
		out.Warnings = append(out.Warnings, warning.String())
	}
	return out
}

// Serve wires the builders into an xDS server, for every client kind:
//
//   - CDS, EDS, LDS and RDS are generated by a Generator whose Model is
//     built from src once per push (srv.BeforePush);
//   - changes of the registry's services and endpoints, of the routing
//     configs read and derived, and of the mesh config are pushed, named
//     so that each reaches only the types it can alter (see affects);
//   - streams wait until the registry and the routing configs hold their
//     initial state (srv.WaitForSync).
//
// Call it before srv.Start. The subscriptions end when stop is closed.
func Serve(srv *xds.Server, src Sources, stop <-chan struct{}, opts Options) (*Generator, error) {
	if src.Registry == nil {
		return nil, fmt.Errorf("envoy: serving xDS needs the service registry")
	}
	g, err := NewGenerator(func() Inputs { return InputsFrom(src) }, opts)
	if err != nil {
		return nil, err
	}
	for _, typeURL := range Types() {
		srv.Generators().Register(typeURL, g.For(typeURL))
	}
	srv.BeforePush(g.Prepare)
	srv.WaitForSync(src.Registry)

	var regs []krt.HandlerRegistration
	regs = append(regs, pushChanges(srv, src.Registry.Services, func(s registry.Service) xds.ConfigKey {
		return xds.ConfigKey{Kind: ServiceChange, Namespace: s.Namespace, Name: s.Hostname}
	}))
	regs = append(regs, pushChanges(srv, src.Registry.Endpoints, func(e registry.Endpoint) xds.ConfigKey {
		ns, _, _ := strings.Cut(e.Service, "/")
		return xds.ConfigKey{Kind: EndpointsChange, Namespace: ns, Name: e.Hostname}
	}))
	var routing []krt.Collection[config.Config]
	if src.Configs != nil {
		for _, gvk := range routingKinds {
			if k := src.Configs.Kind(gvk); k != nil {
				routing = append(routing, k.Configs)
			}
		}
	}
	for _, c := range append(routing, src.Derived...) {
		srv.WaitForSync(c)
		regs = append(regs, pushChanges(srv, c, xds.ConfigKeyOf))
	}
	if src.Mesh != nil {
		regs = append(regs, src.Mesh.Register(func(krt.Event[mesh.MeshConfigResource]) {
			srv.Push(xds.NewPushRequest(xds.ConfigKey{Kind: schema.MeshConfig, Name: "mesh"}))
		}))
	}
	go func() {
		<-stop
		for _, r := range regs {
			r.UnregisterHandler()
		}
	}()
	return g, nil
}

// pushChanges pushes every batch of changes of a collection, each object
// (before and after) named by key.
func pushChanges[T any](srv *xds.Server, c krt.Collection[T], key func(T) xds.ConfigKey) krt.HandlerRegistration {
	return c.RegisterBatch(func(events []krt.Event[T]) {
		req := xds.NewPushRequest()
		for _, e := range events {
			for _, item := range e.Items() {
				req.Changed[key(item)] = struct{}{}
			}
		}
		if len(req.Changed) > 0 {
			srv.Push(req)
		}
	}, false)
}

// generatorMetrics are a Generator's Prometheus metrics.
type generatorMetrics struct {
	modelBuilds prometheus.Counter
	outputs     *prometheus.CounterVec
}

func newGeneratorMetrics(reg prometheus.Registerer) (*generatorMetrics, error) {
	m := &generatorMetrics{
		modelBuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "meshcp_xds_envoy_model_builds_total",
			Help: "Models of the mesh built for Envoy xDS: one per push that changed services or routing config.",
		}),
		outputs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshcp_xds_envoy_outputs_total",
			Help: "Envoy xDS answers by type: built, or reused from an identical request of another connection in the same push.",
		}, []string{"type", "result"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.modelBuilds, m.outputs} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("envoy generator metrics: %w", err)
		}
	}
	return m, nil
}

// metricType shortens a type URL for a label.
func metricType(typeURL string) string { return strings.TrimPrefix(typeURL, "type.googleapis.com/") }
