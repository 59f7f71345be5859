package xds

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// feed is config distribution: the Configs of each kind, from one or more
// collections, held as ready-to-send Resources under the kind's type URL
// ("group/version/Kind"). Each kind is also the Generator of its type.
type feed struct {
	mu    sync.Mutex
	kinds map[config.GroupVersionKind]*feedKind
	order []*feedKind
}

// feedKind is one kind of configuration being distributed.
type feedKind struct {
	gvk         config.GroupVersionKind
	collections []krt.Collection[config.Config]
	reg         krt.HandlerRegistration

	mu     sync.RWMutex
	byName map[string]*Resource
	list   []*Resource // byName's values sorted by name; replaced, never changed
}

// add registers a collection of one kind; several collections of a kind
// are served as their union (the first one added wins a name).
func (f *feed) add(gvk config.GroupVersionKind, c krt.Collection[config.Config]) *feedKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kinds == nil {
		f.kinds = map[config.GroupVersionKind]*feedKind{}
	}
	k := f.kinds[gvk]
	if k == nil {
		k = &feedKind{gvk: gvk, byName: map[string]*Resource{}}
		f.kinds[gvk] = k
		f.order = append(f.order, k)
	}
	k.collections = append(k.collections, c)
	return k
}

// start subscribes to every collection; notify receives what changed.
func (f *feed) start(stop <-chan struct{}, debug *krt.DebugHandler, log *slog.Logger, notify func(*PushRequest)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.order {
		src := k.collections[0]
		if len(k.collections) > 1 {
			src = krt.JoinCollection(k.collections, krt.WithName("xds/"+k.gvk.String()), krt.WithStop(stop), krt.WithDebugging(debug), krt.WithLogger(log))
		}
		k.reg = src.RegisterBatch(func(events []krt.Event[config.Config]) {
			if req := k.apply(events, log); req != nil {
				notify(req)
			}
		}, true)
	}
}

// hasSynced reports whether every kind holds its initial state.
func (f *feed) hasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.order {
		if k.reg == nil || !k.reg.HasSynced() {
			return false
		}
	}
	return true
}

// waitUntilSynced blocks until hasSynced or stop.
func (f *feed) waitUntilSynced(stop <-chan struct{}) bool {
	f.mu.Lock()
	regs := make([]krt.HandlerRegistration, 0, len(f.order))
	for _, k := range f.order {
		regs = append(regs, k.reg)
	}
	f.mu.Unlock()
	for _, r := range regs {
		if r == nil || !r.WaitUntilSynced(stop) {
			return false
		}
	}
	return true
}

// kind returns the feed of a kind, or nil.
func (f *feed) kind(gvk config.GroupVersionKind) *feedKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kinds[gvk]
}

// typeURLs lists the kinds served.
func (f *feed) typeURLs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.order))
	for _, k := range f.order {
		out = append(out, k.gvk.String())
	}
	return out
}

// apply takes a batch of changes in and returns the push they call for. A
// Config that cannot be packed is logged and its previous version kept, so
// one bad object stops nothing else.
func (k *feedKind) apply(events []krt.Event[config.Config], log *slog.Logger) *PushRequest {
	req := NewPushRequest()
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range events {
		c := e.Latest()
		key := ConfigKeyOf(c)
		name := key.ResourceName()
		if e.New == nil {
			delete(k.byName, name)
			req.Changed[key] = struct{}{}
			continue
		}
		r, err := mcpResourceOf(*e.New)
		if err != nil {
			log.Error("config distribution: cannot send object; its previous version stays", "kind", k.gvk.String(), "object", name, "error", err)
			continue
		}
		k.byName[name] = r
		req.Changed[key] = struct{}{}
	}
	if len(req.Changed) == 0 {
		return nil
	}
	list := make([]*Resource, 0, len(k.byName))
	for _, r := range k.byName {
		list = append(list, r)
	}
	slices.SortFunc(list, func(a, b *Resource) int { return strings.Compare(a.name, b.name) })
	k.list = list
	return req
}

// Generate returns the Configs a watch covers.
func (k *feedKind) Generate(_ *Proxy, w *Watch, _ *PushRequest) (Generated, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if w.Wildcard {
		return Generated{Resources: k.list}, nil
	}
	out := make([]*Resource, 0, len(w.Names))
	for name := range w.Names {
		if r, ok := k.byName[name]; ok {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *Resource) int { return strings.Compare(a.name, b.name) })
	return Generated{Resources: out}, nil
}

// Affects reports whether a push changed a Config the watch covers.
func (k *feedKind) Affects(_ *Proxy, w *Watch, req *PushRequest) bool {
	for key := range req.Changed {
		if key.Kind == k.gvk && w.Wants(key.ResourceName()) {
			return true
		}
	}
	return false
}

// String names the kind, for logs.
func (k *feedKind) String() string { return fmt.Sprintf("config %s", k.gvk) }
