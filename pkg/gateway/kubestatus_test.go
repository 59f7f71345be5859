package gateway_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/gateway"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
	"github.com/meshcp/meshcp/test/apiserver"
)

// startWithGateway starts an API server holding namespace infra and a
// Gateway web of class meshcp there.
func startWithGateway(t *testing.T) (*apiserver.Server, gatewayclient.Interface, *gatewayv1.Gateway) {
	t.Helper()
	srv := apiserver.Start(t)
	kc := kubernetes.NewForConfigOrDie(srv.Config)
	gc := gatewayclient.NewForConfigOrDie(srv.Config)
	if _, err := kc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "infra"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gw, err := gc.GatewayV1().Gateways("infra").Create(t.Context(), &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "infra"},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: "meshcp", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return srv, gc, gw
}

// Against a real API server: statuses land on the objects, merged with
// what others wrote (another controller's route parent, a condition type
// meshcp does not set), and a change that leaves the status as it is
// writes nothing.
func TestKubeStatusSink(t *testing.T) {
	srv, gc, gw := startWithGateway(t)
	ctx := t.Context()
	gw.Status.Conditions = append(gw.Status.Conditions, metav1.Condition{Type: "example.com/Audited", Status: "True", Reason: "Audited", LastTransitionTime: metav1.Now()})
	if _, err := gc.GatewayV1().Gateways("infra").UpdateStatus(ctx, gw, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	route, err := gc.GatewayV1().HTTPRoutes("infra").Create(ctx, &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "infra"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "web"}, {Name: "elsewhere"}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	route.Status.Parents = []gatewayv1.RouteParentStatus{{
		ParentRef: gatewayv1.ParentReference{Name: "elsewhere"}, ControllerName: "example.com/other",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: metav1.Now()}},
	}}
	if _, err := gc.GatewayV1().HTTPRoutes("infra").UpdateStatus(ctx, route, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	stop := krttest.Stop(t)
	client, err := kube.NewClient(srv.Config, kube.WithLogger(krttest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Shutdown)
	src, err := sources.FromKubernetes(client, stop, sources.Options{Domain: "cluster.local", Logger: krttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := gateway.New(gateway.InputsFrom(src), stop, gateway.Options{Logger: krttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	w, err := gateway.NewStatusWriter(c, gateway.NewKubeStatusSink(client.GatewayAPI(), c.ControllerName), gateway.StatusWriterOptions{Logger: krttest.Logger(t), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	var live *gatewayv1.HTTPRoute
	waitFor(t, "the route's status", func() bool {
		live, err = gc.GatewayV1().HTTPRoutes("infra").Get(ctx, "shop", metav1.GetOptions{})
		return err == nil && len(live.Status.Parents) == 2
	})
	if p := live.Status.Parents[0]; p.ControllerName != "example.com/other" || p.ParentRef.Name != "elsewhere" {
		t.Errorf("the other controller's parent moved or changed: %+v", p)
	}
	ours := live.Status.Parents[1]
	if ours.ControllerName != gateway.DefaultControllerName || ours.ParentRef.Name != "web" || len(ours.Conditions) != 2 ||
		ours.Conditions[0].Type != "Accepted" || ours.Conditions[0].Status != "True" || ours.Conditions[0].LastTransitionTime.IsZero() {
		t.Errorf("meshcp's parent = %+v", ours)
	}
	waitFor(t, "the Gateway's status", func() bool {
		g, err := gc.GatewayV1().Gateways("infra").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(g.Status.Listeners) != 1 || g.Status.Listeners[0].AttachedRoutes != 1 {
			return false
		}
		types := map[string]metav1.ConditionStatus{}
		for _, c := range g.Status.Conditions {
			types[c.Type] = c.Status
		}
		return types["example.com/Audited"] == "True" && types["Accepted"] == "True"
	})

	// A change that does not change the status: nothing is written. First
	// the echo of meshcp's own write is looked at (and found unchanged).
	waitFor(t, "meshcp's own write to come back", func() bool {
		s := c.Statuses.HTTPRoutes.GetKey("infra/shop")
		return s != nil && s.Object.ResourceVersion == live.ResourceVersion && writes(reg, "HTTPRoute", "unchanged") > 0
	})
	written, unchanged := writes(reg, "HTTPRoute", "written"), writes(reg, "HTTPRoute", "unchanged")
	live.Annotations = map[string]string{"touched": "yes"}
	touched, err := gc.GatewayV1().HTTPRoutes("infra").Update(ctx, live, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the touched route to be looked at", func() bool {
		s := c.Statuses.HTTPRoutes.GetKey("infra/shop")
		return s.Object.ResourceVersion == touched.ResourceVersion && writes(reg, "HTTPRoute", "unchanged") > unchanged
	})
	after, err := gc.GatewayV1().HTTPRoutes("infra").Get(ctx, "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != touched.ResourceVersion || writes(reg, "HTTPRoute", "written") != written {
		t.Errorf("an unchanged status was written: resourceVersion %s -> %s", touched.ResourceVersion, after.ResourceVersion)
	}
}

// A status computed from a version of the object that is no longer the
// latest is not written over a newer one: the API server refuses it, and
// the writer is told to retry on the newer version.
func TestKubeStatusSinkConflict(t *testing.T) {
	_, gc, gw := startWithGateway(t)
	ctx := t.Context()
	read, err := schema.Builtin().FromObject(gw, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	// Someone else writes after meshcp read the object.
	gw.Status.Conditions = append(gw.Status.Conditions, metav1.Condition{Type: "example.com/Audited", Status: "True", Reason: "Audited", LastTransitionTime: metav1.Now()})
	newer, err := gc.GatewayV1().Gateways("infra").UpdateStatus(ctx, gw, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := &gatewayv1.GatewayStatus{Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", Message: "Resource accepted"}}}
	sink := gateway.NewKubeStatusSink(gc, gateway.DefaultControllerName)
	written, err := sink.Write(ctx, schema.KubernetesGateway, gateway.ObjectStatus{Object: read, Status: want})
	if written || !errors.Is(err, gateway.ErrStatusConflict) {
		t.Fatalf("a write on the old version: written %v, error %v", written, err)
	}
	// On the newer version, as the informer delivers it, it goes through
	// and keeps the other writer's condition.
	if read, err = schema.Builtin().FromObject(newer, "cluster.local"); err != nil {
		t.Fatal(err)
	}
	if written, err := sink.Write(ctx, schema.KubernetesGateway, gateway.ObjectStatus{Object: read, Status: want}); !written || err != nil {
		t.Fatalf("a write on the newer version: written %v, error %v", written, err)
	}
	got, err := gc.GatewayV1().Gateways("infra").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, c := range got.Status.Conditions {
		types = append(types, c.Type)
	}
	if !slices.Contains(types, "example.com/Audited") || !slices.Contains(types, "Accepted") {
		t.Errorf("conditions %v", types)
	}
}

// writes reads one series of meshcp_gateway_status_writes_total.
func writes(reg *prometheus.Registry, kind, result string) float64 {
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() != "meshcp_gateway_status_writes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == kind && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(krttest.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
