package sources

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshcp/meshcp/pkg/config"
)

// Metrics counts what the configuration sources reject.
type Metrics struct {
	rejections *prometheus.CounterVec
}

// NewMetrics registers the configuration metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meshcp_config_rejections_total",
		Help: "Objects rejected by validation, counted each time an object becomes rejected or its reasons change.",
	}, []string{"kind"})}
	if err := reg.Register(m.rejections); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Metrics) rejected(gvk config.GroupVersionKind) {
	if m != nil {
		m.rejections.WithLabelValues(gvk.String()).Inc()
	}
}

var objectsDesc = prometheus.NewDesc("meshcp_config_objects",
	"Objects read, by kind and verdict (accepted or rejected); a rejected object's previous accepted version may still be in force.",
	[]string{"kind", "verdict"}, nil)

// Describe and Collect make Sources a prometheus.Collector of the current
// number of accepted and rejected objects of each kind.
func (s *Sources) Describe(ch chan<- *prometheus.Desc) { ch <- objectsDesc }

// Collect sends the current counts.
func (s *Sources) Collect(ch chan<- prometheus.Metric) {
	for _, k := range s.kinds {
		var accepted, rejected int
		for _, v := range k.Verdicts.List() {
			if v.Status.Accepted {
				accepted++
			} else {
				rejected++
			}
		}
		kind := k.Schema.GVK.String()
		ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(accepted), kind, "accepted")
		ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(rejected), kind, "rejected")
	}
}
