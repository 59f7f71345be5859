package xds

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus metrics.
type metrics struct {
	server      *Server
	connections *prometheus.GaugeVec
	pushes      *prometheus.CounterVec
	nacks       *prometheus.CounterVec
	staleNonces *prometheus.CounterVec
	refused     *prometheus.CounterVec
	changeToAck *prometheus.HistogramVec
	generation  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		connections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meshcp_xds_connections", Help: "Open ADS streams, by protocol (sotw or delta).",
		}, []string{"protocol"}),
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshcp_xds_responses_total", Help: "Responses sent, by type.",
		}, []string{"type"}),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshcp_xds_nacks_total", Help: "Responses a client rejected, by type.",
		}, []string{"type"}),
		staleNonces: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshcp_xds_stale_nonces_total", Help: "Requests ignored (SotW) or whose ACK was ignored (delta) because their nonce was not the last sent, by type.",
		}, []string{"type"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshcp_xds_streams_refused_total", Help: "Streams refused, by reason.",
		}, []string{"reason"}),
		changeToAck: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "meshcp_xds_change_to_ack_seconds",
			Help:    "Time from a configuration change to a client's ACK of the push carrying it, by type.",
			Buckets: []float64{.01, .025, .05, .1, .15, .2, .3, .5, .75, 1, 2, 5, 10, 30},
		}, []string{"type"}),
		generation: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meshcp_xds_push_generation", Help: "Generation of the last push.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.connections, m.pushes, m.nacks, m.staleNonces, m.refused, m.changeToAck, m.generation} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// metricType shortens a type URL for a label: Envoy's lose their
// "type.googleapis.com/" prefix, config kinds stay "group/version/Kind".
func metricType(typeURL string) string {
	return strings.TrimPrefix(typeURL, "type.googleapis.com/")
}
