package xds

import (
	"maps"
	"time"

	"github.com/meshcp/meshcp/pkg/config"
)

// ConfigKey names one changed object: its kind and namespace/name.
type ConfigKey struct {
	Kind      config.GroupVersionKind
	Namespace string
	Name      string
}

// ResourceName is "namespace/name", or "name" for cluster-scoped objects:
// the name the object is distributed under.
func (k ConfigKey) ResourceName() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// ConfigKeyOf is the key of a Config.
func ConfigKeyOf(c config.Config) ConfigKey {
	return ConfigKey{Kind: c.GroupVersionKind, Namespace: c.Namespace, Name: c.Name}
}

// PushRequest is what changed, for a push: the changed objects (kinds and
// names), or Full when anything may have changed. Requests merge, so one
// push covers every change of a debounce window.
type PushRequest struct {
	// Generation numbers the push; the server sets it when the debounced
	// request is pushed. Later pushes have higher generations.
	Generation uint64
	// Full means every resource of every type may have changed.
	Full bool
	// Changed holds the objects that changed.
	Changed map[ConfigKey]struct{}
	// Start is when the earliest change of the request happened; the
	// change-to-ACK metric counts from it.
	Start time.Time
}

// NewPushRequest is a request for changed objects, started now.
func NewPushRequest(changed ...ConfigKey) *PushRequest {
	r := &PushRequest{Changed: make(map[ConfigKey]struct{}, len(changed)), Start: time.Now()}
	for _, k := range changed {
		r.Changed[k] = struct{}{}
	}
	return r
}

// Merge returns a request covering both; neither is changed.
func (r *PushRequest) Merge(o *PushRequest) *PushRequest {
	if r == nil {
		return o
	}
	if o == nil {
		return r
	}
	out := &PushRequest{
		Generation: max(r.Generation, o.Generation),
		Full:       r.Full || o.Full,
		Start:      r.Start,
	}
	if !o.Start.IsZero() && (out.Start.IsZero() || o.Start.Before(out.Start)) {
		out.Start = o.Start
	}
	if !out.Full {
		out.Changed = make(map[ConfigKey]struct{}, len(r.Changed)+len(o.Changed))
		maps.Copy(out.Changed, r.Changed)
		maps.Copy(out.Changed, o.Changed)
	}
	return out
}

// HasKind reports whether an object of a kind changed (always true for a
// full push).
func (r *PushRequest) HasKind(gvk config.GroupVersionKind) bool {
	if r.Full {
		return true
	}
	for k := range r.Changed {
		if k.Kind == gvk {
			return true
		}
	}
	return false
}
