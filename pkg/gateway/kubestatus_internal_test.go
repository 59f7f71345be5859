package gateway

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	cschema "github.com/meshcp/meshcp/pkg/config/schema"
)

// conflictingGateways is a Gateway client whose first status update
// loses to a write by someone else, who adds a condition of their own.
type conflictingGateways struct {
	current  *gatewayv1.Gateway
	gets     int
	updates  int
	conflict bool
}

func (c *conflictingGateways) Get(context.Context, string, metav1.GetOptions) (*gatewayv1.Gateway, error) {
	c.gets++
	return c.current.DeepCopy(), nil
}

func (c *conflictingGateways) UpdateStatus(_ context.Context, g *gatewayv1.Gateway, _ metav1.UpdateOptions) (*gatewayv1.Gateway, error) {
	c.updates++
	if !c.conflict {
		c.conflict = true
		c.current.Status.Conditions = append(c.current.Status.Conditions, metav1.Condition{Type: "example.com/Seen", Status: "True", Reason: "Seen"})
		c.current.ResourceVersion = "2"
		return nil, apierrors.NewConflict(schema.GroupResource{Group: gatewayv1.GroupName, Resource: "gateways"}, g.Name, nil)
	}
	c.current = g.DeepCopy()
	return g, nil
}

// On a conflict the object is read again and the status merged into what
// the other writer left: their condition survives.
func TestWriteStatusRetriesOnConflict(t *testing.T) {
	client := &conflictingGateways{current: &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "infra", UID: "u1", Generation: 1, ResourceVersion: "1"}}}
	s := ObjectStatus{
		Object: config.Config{Meta: config.Meta{GroupVersionKind: cschema.KubernetesGateway, Name: "web", Namespace: "infra", UID: "u1", Generation: 1}},
		Status: &gatewayv1.GatewayStatus{Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", ObservedGeneration: 1}}},
	}
	sink := NewKubeStatusSink(nil, DefaultControllerName)
	written, err := writeStatus(context.Background(), statusClient[*gatewayv1.Gateway](client), "web", s, sink, t1,
		func(o *gatewayv1.Gateway) config.Status { return &o.Status },
		func(o *gatewayv1.Gateway, m any) { o.Status = *m.(*gatewayv1.GatewayStatus) })
	if err != nil || !written {
		t.Fatalf("written %v, err %v", written, err)
	}
	if client.gets != 2 || client.updates != 2 {
		t.Errorf("%d reads and %d writes, want 2 of each", client.gets, client.updates)
	}
	conds := client.current.Status.Conditions
	if len(conds) != 2 || conds[0].Type != "example.com/Seen" || conds[1].Type != "Accepted" {
		t.Errorf("conditions = %+v", conds)
	}

	// An object of a newer generation than the status was computed for is
	// left alone: a status for that generation is on its way.
	client.current.Generation = 2
	client.current.Status = gatewayv1.GatewayStatus{}
	if written, err := writeStatus(context.Background(), statusClient[*gatewayv1.Gateway](client), "web", s, sink, t1,
		func(o *gatewayv1.Gateway) config.Status { return &o.Status },
		func(o *gatewayv1.Gateway, m any) { o.Status = *m.(*gatewayv1.GatewayStatus) }); written || err != nil {
		t.Errorf("stale status: written %v, err %v", written, err)
	}
}
