package envoy

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
)

// Resource is one generated xDS resource under its name.
type Resource struct {
	Name    string
	Message proto.Message
}

// Result is what a builder generated: resources ordered by name, and what
// it could not generate as configured.
type Result struct {
	Resources []Resource
	Warnings  []Warning
}

// ByName returns the resource with the given name, or nil.
func (r Result) ByName(name string) proto.Message {
	for _, res := range r.Resources {
		if res.Name == name {
			return res.Message
		}
	}
	return nil
}

// Names lists the resource names, in order.
func (r Result) Names() []string {
	out := make([]string, len(r.Resources))
	for i, res := range r.Resources {
		out[i] = res.Name
	}
	return out
}

// Size is the encoded size of all resources: about what one response
// carrying them weighs (gRPC clients refuse messages over 4 MiB by
// default).
func (r Result) Size() int {
	n := 0
	for _, res := range r.Resources {
		n += proto.Size(res.Message)
	}
	return n
}

// build is the state of one builder call.
type build struct {
	p *Proxy
	m *Model
	w warnings
}

func newBuild(p *Proxy, m *Model) *build { return &build{p: p, m: m} }

// result sorts resources by name, drops duplicates (the first wins), and
// attaches the warnings.
func (b *build) result(res []Resource) Result {
	slices.SortStableFunc(res, func(a, c Resource) int { return strings.Compare(a.Name, c.Name) })
	res = slices.CompactFunc(res, func(a, c Resource) bool { return a.Name == c.Name })
	return Result{Resources: res, Warnings: b.w}
}

// wanted filters by requested names; nil names mean every resource.
func wanted(names []string) func(string) bool {
	if len(names) == 0 {
		return func(string) bool { return true }
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return func(n string) bool { return set[n] }
}
