package krt

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ServeHTTP serves /debug/krtz: the registered collections as the JSON array
//
//	[{"uid", "name", "state": {"outputs", "inputs": {key: {"outputs", "dependencies"}}, "errors", "synced"}}]
//
// ordered by uid. Query parameters narrow it down:
//
//   - collection=NAME keeps the collection named NAME, or, when none has
//     that exact name, every collection whose name starts with NAME;
//   - key=K keeps only key K in outputs and inputs (and the inputs that
//     produced K);
//   - format=dot or format=mermaid draws the graph of collections instead:
//     one node per collection with its object count and sync state, an
//     edge from each collection to those that read it (solid: primary
//     input, dashed: Fetch, dotted: status).
func (d *DebugHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	keep := d.nameFilter(q.Get("collection"))
	switch format := q.Get("format"); format {
	case "", "json":
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d.dump(keep, q.Get("key"))); err != nil {
			// The dump renders every object on its own, so this is a
			// broken connection; nothing more can be sent.
			return
		}
	case "dot", "mermaid":
		g := d.graph(keep)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if format == "dot" {
			fmt.Fprint(w, g.dot())
		} else {
			fmt.Fprint(w, g.mermaid())
		}
	default:
		http.Error(w, fmt.Sprintf("unknown format %q: use json, dot or mermaid", format), http.StatusBadRequest)
	}
}

// nameFilter keeps the collection called name if one exists, otherwise the
// collections whose name starts with it; an empty name keeps everything.
func (d *DebugHandler) nameFilter(name string) func(string) bool {
	if name == "" {
		return func(string) bool { return true }
	}
	for _, e := range d.snapshot() {
		if e.collection.debugName() == name {
			return func(n string) bool { return n == name }
		}
	}
	return func(n string) bool { return strings.HasPrefix(n, name) }
}

// collectionGraph is the graph of registered collections.
type collectionGraph struct {
	nodes []graphNode
	edges []graphLink
}

type graphNode struct {
	uid     uint64
	name    string
	objects int
	synced  bool
}

type graphLink struct {
	from, to uint64
	kind     string
}

// graph builds the graph of the collections that pass keep, with the edges
// between them.
func (d *DebugHandler) graph(keep func(string) bool) collectionGraph {
	d.mu.Lock()
	uids := make(map[storeHandle]uint64, len(d.entries))
	for h, e := range d.entries {
		uids[h] = e.uid
	}
	d.mu.Unlock()

	var g collectionGraph
	kept := map[uint64]bool{}
	entries := d.snapshot()
	for _, e := range entries {
		if name := e.collection.debugName(); keep(name) {
			kept[e.uid] = true
			g.nodes = append(g.nodes, graphNode{uid: e.uid, name: name, objects: e.collection.objectCount(), synced: e.collection.HasSynced()})
		}
	}
	for _, e := range entries {
		for _, edge := range e.collection.upstream() {
			if from, ok := uids[edge.from]; ok && kept[from] && kept[e.uid] {
				g.edges = append(g.edges, graphLink{from: from, to: e.uid, kind: edge.kind})
			}
		}
	}
	return g
}

func (n graphNode) label(newline string) string {
	state := "synced"
	if !n.synced {
		state = "not synced"
	}
	return fmt.Sprintf("%s%s%d objects, %s", n.name, newline, n.objects, state)
}

func (g collectionGraph) dot() string {
	var b strings.Builder
	b.WriteString("digraph krt {\n  rankdir=LR;\n  node [shape=box];\n")
	for _, n := range g.nodes {
		color := "black"
		if !n.synced {
			color = "red"
		}
		fmt.Fprintf(&b, "  c%d [label=%q, color=%s];\n", n.uid, n.label("\n"), color)
	}
	for _, e := range g.edges {
		style := map[string]string{"input": "solid", "fetch": "dashed", "status": "dotted"}[e.kind]
		fmt.Fprintf(&b, "  c%d -> c%d [style=%s, label=%q];\n", e.from, e.to, style, e.kind)
	}
	b.WriteString("}\n")
	return b.String()
}

func (g collectionGraph) mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, n := range g.nodes {
		fmt.Fprintf(&b, "  c%d[%q]\n", n.uid, n.label("<br/>"))
	}
	for _, e := range g.edges {
		arrow := map[string]string{"input": "-->", "fetch": "-.->", "status": "-.-"}[e.kind]
		fmt.Fprintf(&b, "  c%d %s|%s| c%d\n", e.from, arrow, e.kind, e.to)
	}
	return b.String()
}
