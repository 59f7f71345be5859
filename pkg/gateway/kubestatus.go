package gateway

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
)

// KubeStatusSink writes statuses to the API server. A write is skipped
// when the object, as the informer last saw it, already has the status;
// otherwise the object is read afresh, the status merged into its current
// one and written to the status subresource, again from a fresh read when
// someone else wrote in between (a conflict).
type KubeStatusSink struct {
	client     gatewayclient.Interface
	controller gatewayv1.GatewayController
	now        func() time.Time
}

// NewKubeStatusSink writes through client for the controller name.
func NewKubeStatusSink(client gatewayclient.Interface, controller gatewayv1.GatewayController) *KubeStatusSink {
	return &KubeStatusSink{client: client, controller: controller, now: time.Now}
}

// Forget does nothing: an object that is gone has no status to clean.
func (k *KubeStatusSink) Forget(config.GroupVersionKind, string) {}

// Write implements StatusSink.
func (k *KubeStatusSink) Write(ctx context.Context, kind config.GroupVersionKind, s ObjectStatus) (bool, error) {
	now := statusTime(k.now())
	if _, changed, err := mergeStatus(kind, s.Object.Status, s.Status, k.controller, now); err != nil || !changed {
		return false, err
	}
	gw := k.client.GatewayV1()
	ns, name := s.Object.Namespace, s.Object.Name
	switch kind {
	case schema.GatewayClass:
		return writeStatus(ctx, gw.GatewayClasses(), name, s, k, now,
			func(o *gatewayv1.GatewayClass) config.Status { return &o.Status },
			func(o *gatewayv1.GatewayClass, m any) { o.Status = *m.(*gatewayv1.GatewayClassStatus) })
	case schema.KubernetesGateway:
		return writeStatus(ctx, gw.Gateways(ns), name, s, k, now,
			func(o *gatewayv1.Gateway) config.Status { return &o.Status },
			func(o *gatewayv1.Gateway, m any) { o.Status = *m.(*gatewayv1.GatewayStatus) })
	case schema.HTTPRoute:
		return writeRouteStatus(ctx, gw.HTTPRoutes(ns), s, k, now, func(o *gatewayv1.HTTPRoute) *gatewayv1.RouteStatus { return &o.Status.RouteStatus })
	case schema.GRPCRoute:
		return writeRouteStatus(ctx, gw.GRPCRoutes(ns), s, k, now, func(o *gatewayv1.GRPCRoute) *gatewayv1.RouteStatus { return &o.Status.RouteStatus })
	case schema.TCPRoute:
		return writeRouteStatus(ctx, gw.TCPRoutes(ns), s, k, now, func(o *gatewayv1.TCPRoute) *gatewayv1.RouteStatus { return &o.Status.RouteStatus })
	case schema.TLSRoute:
		return writeRouteStatus(ctx, gw.TLSRoutes(ns), s, k, now, func(o *gatewayv1.TLSRoute) *gatewayv1.RouteStatus { return &o.Status.RouteStatus })
	}
	return false, fmt.Errorf("no status writer for %s", kind)
}

// writeRouteStatus is writeStatus for a route kind, whose status embeds a
// RouteStatus that status points to.
func writeRouteStatus[O metav1.Object](ctx context.Context, c statusClient[O], s ObjectStatus, k *KubeStatusSink, now metav1.Time,
	status func(O) *gatewayv1.RouteStatus,
) (bool, error) {
	return writeStatus(ctx, c, s.Object.Name, s, k, now,
		func(o O) config.Status { return status(o) },
		func(o O, m any) { *status(o) = *m.(*gatewayv1.RouteStatus) })
}

// statusClient is the part of a typed Gateway API client a status write
// needs.
type statusClient[O metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (O, error)
	UpdateStatus(ctx context.Context, obj O, opts metav1.UpdateOptions) (O, error)
}

// writeStatus reads the object, merges s into its status and writes it,
// retrying on conflict. It writes nothing when the object is gone, is not
// the one the status was computed for, or has a newer generation (a
// status for it is on its way), or when its status already matches.
func writeStatus[O metav1.Object](ctx context.Context, c statusClient[O], name string, s ObjectStatus, k *KubeStatusSink, now metav1.Time,
	statusOf func(O) config.Status, set func(O, any),
) (bool, error) {
	written := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := c.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", s.Object.GroupVersionKind.Kind, s.Object.ResourceName(), err)
		}
		if obj.GetUID() != types.UID(s.Object.UID) || obj.GetGeneration() > s.Object.Generation {
			return nil
		}
		merged, changed, err := mergeStatus(s.Object.GroupVersionKind, statusOf(obj), s.Status, k.controller, now)
		if err != nil || !changed {
			return err
		}
		set(obj, merged)
		if _, err := c.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			return err
		}
		written = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("writing the status of %s %s: %w", s.Object.GroupVersionKind.Kind, s.Object.ResourceName(), err)
	}
	return written, nil
}

// fieldManager names meshcp in the managedFields of what it writes.
const fieldManager = "meshcp-gateway-controller"
