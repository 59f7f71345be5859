package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
)

// MemoryStatusSink keeps statuses in memory, for file mode, where there is
// no API server to write them to: each object's status as it would be
// written, merged with the same rules, lastTransitionTime included, and
// served on /debug/gateway-status.
type MemoryStatusSink struct {
	controller gatewayv1.GatewayController
	now        func() time.Time

	mu       sync.Mutex
	statuses map[statusKey]StoredStatus
}

// StoredStatus is one object's status in a MemoryStatusSink.
type StoredStatus struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Generation is the object's metadata.generation.
	Generation int64 `json:"generation,omitempty"`
	Status     any   `json:"status"`
}

// NewMemoryStatusSink returns an empty sink for the controller name.
func NewMemoryStatusSink(controller gatewayv1.GatewayController) *MemoryStatusSink {
	return &MemoryStatusSink{controller: controller, now: time.Now, statuses: map[statusKey]StoredStatus{}}
}

// Write implements StatusSink. The first status of an object is merged
// into the status its file holds, if any.
func (m *MemoryStatusSink) Write(_ context.Context, kind config.GroupVersionKind, s ObjectStatus) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := statusKey{kind, s.Object.ResourceName()}
	live := s.Object.Status
	if cur, ok := m.statuses[k]; ok {
		live = cur.Status
	}
	merged, changed, err := mergeStatus(kind, live, s.Status, m.controller, statusTime(m.now()))
	if err != nil {
		return false, err
	}
	_, known := m.statuses[k]
	m.statuses[k] = StoredStatus{Kind: kind.Kind, Namespace: s.Object.Namespace, Name: s.Object.Name, Generation: s.Object.Generation, Status: merged}
	return changed || !known, nil
}

// Forget drops the status of an object meshcp no longer computes one for.
func (m *MemoryStatusSink) Forget(kind config.GroupVersionKind, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.statuses, statusKey{kind, key})
}

// Statuses returns every status held, by kind, namespace and name.
func (m *MemoryStatusSink) Statuses() []StoredStatus {
	m.mu.Lock()
	out := make([]StoredStatus, 0, len(m.statuses))
	for _, s := range m.statuses {
		out = append(out, s)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b StoredStatus) int {
		return strings.Compare(a.Kind+"/"+a.Namespace+"/"+a.Name, b.Kind+"/"+b.Namespace+"/"+b.Name)
	})
	return out
}

// ServeHTTP serves /debug/gateway-status: the statuses as a JSON array
// of {kind, namespace, name, generation, status}; ?kind= keeps one kind
// (Gateway, HTTPRoute...).
func (m *MemoryStatusSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	statuses := m.Statuses()
	if kind := r.URL.Query().Get("kind"); kind != "" {
		statuses = slices.DeleteFunc(statuses, func(s StoredStatus) bool { return s.Kind != kind })
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(statuses)
}
