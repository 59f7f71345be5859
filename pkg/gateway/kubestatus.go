package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
)

// KubeStatusSink writes statuses to the status subresource of the objects
// in the API server. It reads nothing itself: the object as the informer
// last saw it is the read of the read-modify-write the Gateway API asks
// for. When it already has the status, nothing is written; otherwise the
// status is merged into its status and written with the object's
// resourceVersion and UID as preconditions, so that a write by someone
// else in between is never overwritten: the API server answers with a
// conflict (ErrStatusConflict), and the write is retried once the
// informer has the newer version (the StatusWriter requeues it).
type KubeStatusSink struct {
	client     gatewayclient.Interface
	controller gatewayv1.GatewayController
	now        func() time.Time
}

// ErrStatusConflict says a status write lost to another write of the same
// object; it is retried against the newer version.
var ErrStatusConflict = errors.New("the object changed since it was read")

// NewKubeStatusSink writes through client for the controller name.
func NewKubeStatusSink(client gatewayclient.Interface, controller gatewayv1.GatewayController) *KubeStatusSink {
	return &KubeStatusSink{client: client, controller: controller, now: time.Now}
}

// Forget does nothing: an object that is gone has no status to clean.
func (k *KubeStatusSink) Forget(config.GroupVersionKind, string) {}

// Write implements StatusSink.
func (k *KubeStatusSink) Write(ctx context.Context, kind config.GroupVersionKind, s ObjectStatus) (bool, error) {
	merged, changed, err := mergeStatus(kind, s.Object.Status, s.Status, k.controller, statusTime(k.now()))
	if err != nil || !changed {
		return false, err
	}
	gw := k.client.GatewayV1()
	meta, ns := s.Object.ObjectMeta(), s.Object.Namespace
	opts := metav1.UpdateOptions{FieldManager: fieldManager}
	switch kind {
	case schema.GatewayClass:
		spec, _ := s.Object.Spec.(*gatewayv1.GatewayClassSpec)
		obj := &gatewayv1.GatewayClass{ObjectMeta: meta, Spec: deref(spec), Status: *merged.(*gatewayv1.GatewayClassStatus)}
		_, err = gw.GatewayClasses().UpdateStatus(ctx, obj, opts)
	case schema.KubernetesGateway:
		spec, _ := s.Object.Spec.(*gatewayv1.GatewaySpec)
		obj := &gatewayv1.Gateway{ObjectMeta: meta, Spec: deref(spec), Status: *merged.(*gatewayv1.GatewayStatus)}
		_, err = gw.Gateways(ns).UpdateStatus(ctx, obj, opts)
	case schema.HTTPRoute:
		spec, _ := s.Object.Spec.(*gatewayv1.HTTPRouteSpec)
		obj := &gatewayv1.HTTPRoute{ObjectMeta: meta, Spec: deref(spec), Status: gatewayv1.HTTPRouteStatus{RouteStatus: *merged.(*gatewayv1.RouteStatus)}}
		_, err = gw.HTTPRoutes(ns).UpdateStatus(ctx, obj, opts)
	case schema.GRPCRoute:
		spec, _ := s.Object.Spec.(*gatewayv1.GRPCRouteSpec)
		obj := &gatewayv1.GRPCRoute{ObjectMeta: meta, Spec: deref(spec), Status: gatewayv1.GRPCRouteStatus{RouteStatus: *merged.(*gatewayv1.RouteStatus)}}
		_, err = gw.GRPCRoutes(ns).UpdateStatus(ctx, obj, opts)
	case schema.TCPRoute:
		spec, _ := s.Object.Spec.(*gatewayv1.TCPRouteSpec)
		obj := &gatewayv1.TCPRoute{ObjectMeta: meta, Spec: deref(spec), Status: gatewayv1.TCPRouteStatus{RouteStatus: *merged.(*gatewayv1.RouteStatus)}}
		_, err = gw.TCPRoutes(ns).UpdateStatus(ctx, obj, opts)
	case schema.TLSRoute:
		spec, _ := s.Object.Spec.(*gatewayv1.TLSRouteSpec)
		obj := &gatewayv1.TLSRoute{ObjectMeta: meta, Spec: deref(spec), Status: gatewayv1.TLSRouteStatus{RouteStatus: *merged.(*gatewayv1.RouteStatus)}}
		_, err = gw.TLSRoutes(ns).UpdateStatus(ctx, obj, opts)
	default:
		return false, fmt.Errorf("no status writer for %s", kind)
	}
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil // deleted meanwhile: nothing to report on
	case apierrors.IsConflict(err):
		return false, fmt.Errorf("writing the status of %s %s: %w", kind.Kind, s.Object.ResourceName(), ErrStatusConflict)
	}
	return false, fmt.Errorf("writing the status of %s %s: %w", kind.Kind, s.Object.ResourceName(), err)
}

// deref copies the spec an object is sent with; the status subresource
// ignores it, but the object must have one.
func deref[S any](spec *S) S {
	if spec == nil {
		var zero S
		return zero
	}
	return *spec
}

// fieldManager names meshcp in the managedFields of what it writes.
const fieldManager = "meshcp-gateway-controller"
