package mesh

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Watcher's Prometheus metrics.
type metrics struct {
	reg         prometheus.Registerer // nil when unregistered
	valid       prometheus.Gauge
	rejected    prometheus.Counter
	lastSuccess prometheus.Gauge
}

// newMetrics builds the metrics and registers them on reg, when reg is not
// nil. Registering twice on one registry is an error: one Watcher per
// registry.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		valid: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meshcp_mesh_config_valid",
			Help: "1 when the mesh config file's current content is in force (or there is no file, and Istio's defaults are), 0 when it was rejected and the last good config (or the defaults) stays in force.",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "meshcp_mesh_config_rejected_loads_total",
			Help: "Mesh config file contents rejected as unreadable or invalid.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meshcp_mesh_config_last_load_success_timestamp_seconds",
			Help: "When the mesh config file was last loaded successfully, in seconds since the epoch; 0 if never.",
		}),
	}
	m.valid.Set(1)
	if reg == nil {
		return m, nil
	}
	collectors := m.collectors()
	for i, c := range collectors {
		if err := reg.Register(c); err != nil {
			for _, done := range collectors[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("registering mesh config metrics: %w", err)
		}
	}
	m.reg = reg
	return m, nil
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.valid, m.rejected, m.lastSuccess}
}

// unregister takes the metrics off their registry, for a Watcher that
// failed to start.
func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range m.collectors() {
		m.reg.Unregister(c)
	}
}

// accepted records a successful load at t.
func (m *metrics) accepted(t time.Time) {
	m.valid.Set(1)
	m.lastSuccess.Set(float64(t.UnixNano()) / 1e9)
}

// rejectedLoad records a rejected load.
func (m *metrics) rejectedLoad() {
	m.valid.Set(0)
	m.rejected.Inc()
}

// cleared records that no file content is rejected any more, the file
// being gone or empty.
func (m *metrics) cleared() { m.valid.Set(1) }
