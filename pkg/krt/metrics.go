package krt

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics every registered collection exports, labelled by collection
// name and uid (names should be unique, but a duplicate must not break the
// whole scrape). They are read from the collections' own counters when scraped, so
// collecting them costs nothing while the graph runs.
var (
	metricEventsIn = prometheus.NewDesc("krt_collection_events_in_total",
		"Changes a collection received: of its primary input (source=input) or of collections it fetched from (source=fetch).",
		[]string{"collection", "uid", "source"}, nil)
	metricEventsOut = prometheus.NewDesc("krt_collection_events_out_total",
		"Events a collection announced to its handlers.", []string{"collection", "uid"}, nil)
	metricRecomputations = prometheus.NewDesc("krt_collection_recomputations_total",
		"Runs of a collection's transformation.", []string{"collection", "uid"}, nil)
	metricPanics = prometheus.NewDesc("krt_collection_panics_total",
		"Runs of a collection's transformation that panicked and were recovered.", []string{"collection", "uid"}, nil)
	metricPurityViolations = prometheus.NewDesc("krt_collection_purity_violations_total",
		"Inputs whose transformation gave two different results for the same state (KRT_CHECKS=purity).", []string{"collection", "uid"}, nil)
	metricImpact = prometheus.NewDesc("krt_collection_dependency_impact",
		"Inputs recomputed per batch of changes of a fetched collection.", []string{"collection", "uid"}, nil)
	metricQueueDepth = prometheus.NewDesc("krt_collection_queue_depth",
		"Work waiting in a collection's queue.", []string{"collection", "uid"}, nil)
	metricObjects = prometheus.NewDesc("krt_collection_objects",
		"Objects a collection holds.", []string{"collection", "uid"}, nil)
	metricSyncSeconds = prometheus.NewDesc("krt_collection_sync_seconds",
		"Time from a collection's construction to its initial state; absent until it is synced.", []string{"collection", "uid"}, nil)
)

// Describe sends the descriptions of the collection metrics; with Collect,
// it makes the DebugHandler a prometheus.Collector.
func (d *DebugHandler) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{metricEventsIn, metricEventsOut, metricRecomputations, metricPanics,
		metricPurityViolations, metricImpact, metricQueueDepth, metricObjects, metricSyncSeconds} {
		ch <- desc
	}
}

// Collect sends the current metrics of every registered collection.
func (d *DebugHandler) Collect(ch chan<- prometheus.Metric) {
	for _, e := range d.snapshot() {
		c := e.collection
		name, uid := c.debugName(), strconv.FormatUint(e.uid, 10)
		s := c.statsOf()
		counter := func(desc *prometheus.Desc, v uint64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), append([]string{name, uid}, labels...)...)
		}
		gauge := func(desc *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, name, uid)
		}
		counter(metricEventsIn, s.inputEvents.Load(), "input")
		counter(metricEventsIn, s.fetchedEvents.Load(), "fetch")
		counter(metricEventsOut, s.eventsOut.Load())
		counter(metricRecomputations, s.recomputations.Load())
		counter(metricPanics, s.panics.Load())
		counter(metricPurityViolations, s.purityViolations.Load())
		gauge(metricObjects, float64(c.objectCount()))
		gauge(metricQueueDepth, float64(c.queueDepth()))
		if synced := s.syncedAfter.Load(); synced > 0 {
			gauge(metricSyncSeconds, float64(synced)/1e9)
		}
		buckets := make(map[float64]uint64, len(impactBounds))
		var cumulative uint64
		for i, bound := range impactBounds {
			cumulative += s.impacts.buckets[i].Load()
			buckets[bound] = cumulative
		}
		ch <- prometheus.MustNewConstHistogram(metricImpact, s.impacts.count.Load(), float64(s.impacts.sum.Load()), buckets, name, uid)
	}
}
