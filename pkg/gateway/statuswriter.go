package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
)

// StatusSink is where a StatusWriter writes: the API server, or memory in
// file mode.
type StatusSink interface {
	// Write makes the status of s's object its current status with s's
	// merged in (see mergeStatus), and reports whether anything changed.
	Write(ctx context.Context, kind config.GroupVersionKind, s ObjectStatus) (bool, error)
	// Forget is told that meshcp no longer computes a status for the
	// object (it was deleted, or is no longer meshcp's).
	Forget(kind config.GroupVersionKind, key string)
}

// StatusWriter writes the statuses a Controller computes to a sink, one
// object at a time, retrying failures with backoff.
type StatusWriter struct {
	statuses map[config.GroupVersionKind]krt.Collection[ObjectStatus]
	sink     StatusSink
	log      *slog.Logger
	writes   *prometheus.CounterVec
}

// StatusWriterOptions tune a StatusWriter.
type StatusWriterOptions struct {
	// Logger receives failed writes; nil means slog.Default().
	Logger *slog.Logger
	// Registerer, if set, gets the counter
	// meshcp_gateway_status_writes_total{kind, result}, result being
	// "written", "unchanged", "conflict" (retried) or "failed" (retried).
	Registerer prometheus.Registerer
}

// NewStatusWriter returns a writer of c's statuses to sink. Nothing is
// written until Run.
func NewStatusWriter(c *Controller, sink StatusSink, opts StatusWriterOptions) (*StatusWriter, error) {
	w := &StatusWriter{
		statuses: c.Statuses.ByKind(),
		sink:     sink,
		log:      opts.Logger,
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshcp_gateway_status_writes_total",
			Help: "Status writes of Gateway API objects, by kind and result: written, unchanged (the object already had it), conflict or failed (both retried).",
		}, []string{"kind", "result"}),
	}
	if w.log == nil {
		w.log = slog.Default()
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(w.writes); err != nil {
			return nil, fmt.Errorf("registering the status write metric: %w", err)
		}
	}
	return w, nil
}

// statusKey names one object's status.
type statusKey struct {
	kind config.GroupVersionKind
	key  string
}

// Run writes statuses until ctx is done: first every status computed so
// far, then each one that changes. A leader runs it for as long as it
// leads; each run starts from the current state, so a new leader catches
// up with everything that changed under the previous one.
func (w *StatusWriter) Run(ctx context.Context) {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[statusKey](100*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[statusKey]{Name: "gateway-status"})
	var regs []krt.HandlerRegistration
	for kind, c := range w.statuses {
		regs = append(regs, c.RegisterBatch(func(events []krt.Event[ObjectStatus]) {
			for _, e := range events {
				if e.New == nil {
					w.sink.Forget(kind, e.Old.ResourceName())
					continue
				}
				queue.Add(statusKey{kind, e.New.ResourceName()})
			}
		}, true))
	}
	defer func() {
		for _, r := range regs {
			r.UnregisterHandler()
		}
	}()
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
		}
		queue.ShutDown()
	}()
	for {
		k, quit := queue.Get()
		if quit {
			return
		}
		w.process(ctx, queue, k)
		queue.Done(k)
	}
}

// process writes one object's status.
func (w *StatusWriter) process(ctx context.Context, queue workqueue.TypedRateLimitingInterface[statusKey], k statusKey) {
	s := w.statuses[k.kind].GetKey(k.key)
	if s == nil {
		queue.Forget(k)
		return
	}
	written, err := w.sink.Write(ctx, k.kind, *s)
	switch {
	case errors.Is(err, ErrStatusConflict):
		// Someone wrote first; the informer brings the newer version
		// (and with it, usually, this key again) in a moment.
		w.writes.WithLabelValues(k.kind.Kind, "conflict").Inc()
		w.log.Debug("status write conflicted; retrying on the newer version", "kind", k.kind.Kind, "object", k.key)
		queue.AddRateLimited(k)
	case err != nil:
		if ctx.Err() != nil {
			return
		}
		w.writes.WithLabelValues(k.kind.Kind, "failed").Inc()
		w.log.Warn("writing the status of a Gateway API object failed; retrying", "kind", k.kind.Kind, "object", k.key, "error", err)
		queue.AddRateLimited(k)
	case written:
		w.writes.WithLabelValues(k.kind.Kind, "written").Inc()
		queue.Forget(k)
	default:
		w.writes.WithLabelValues(k.kind.Kind, "unchanged").Inc()
		queue.Forget(k)
	}
}

// mergeStatus merges the status meshcp computed (want, see ObjectStatus)
// into an object's current status (live, the object's own status type),
// returning the result in want's type and whether it differs from live.
func mergeStatus(kind config.GroupVersionKind, live config.Status, want any, controller gatewayv1.GatewayController, now metav1.Time) (any, bool, error) {
	switch w := want.(type) {
	case *gatewayv1.GatewayClassStatus:
		cur, _ := live.(*gatewayv1.GatewayClassStatus)
		merged := mergeGatewayClassStatus(cur, w, now)
		return merged, !statusEqual(cur, merged), nil
	case *gatewayv1.GatewayStatus:
		cur, _ := live.(*gatewayv1.GatewayStatus)
		merged := mergeGatewayStatus(cur, w, now)
		return merged, !statusEqual(cur, merged), nil
	case *gatewayv1.RouteStatus:
		cur := routeStatusOf(live)
		merged := mergeRouteStatus(cur, w, controller, now)
		return merged, !statusEqual(cur, merged), nil
	}
	return nil, false, fmt.Errorf("%s: no status of type %T", kind.Kind, want)
}

// routeStatusOf returns the RouteStatus of any route kind's status.
func routeStatusOf(live config.Status) *gatewayv1.RouteStatus {
	switch s := live.(type) {
	case *gatewayv1.HTTPRouteStatus:
		return &s.RouteStatus
	case *gatewayv1.GRPCRouteStatus:
		return &s.RouteStatus
	case *gatewayv1.TCPRouteStatus:
		return &s.RouteStatus
	case *gatewayv1.TLSRouteStatus:
		return &s.RouteStatus
	case *gatewayv1.RouteStatus:
		return s
	}
	return nil
}

// statusEqual compares a live status (nil: none) with a merged one. No
// status and an empty one are the same.
func statusEqual[S any](live *S, merged *S) bool {
	if live == nil {
		var zero S
		live = &zero
	}
	return equality.Semantic.DeepEqual(normalizeStatus(live), normalizeStatus(merged))
}

// normalizeStatus treats a nil list of route parents as an empty one,
// as the API server does.
func normalizeStatus(s any) any {
	if r, ok := s.(*gatewayv1.RouteStatus); ok && r.Parents == nil {
		return &gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{}}
	}
	return s
}

// statusTime is the lastTransitionTime written: the API server keeps
// seconds, so a finer time would read back as a change.
func statusTime(now time.Time) metav1.Time { return metav1.NewTime(now.Truncate(time.Second)) }
