package gateway

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config/schema"
)

var (
	t0 = metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
)

func cond(typ string, status metav1.ConditionStatus, reason string, gen int64, at metav1.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: reason, ObservedGeneration: gen, LastTransitionTime: at}
}

// Conditions merge as the Gateway API asks: the transition time moves only
// when the status changes, conditions of other types stay where they are,
// and a condition written for a newer generation than meshcp computed for
// is left alone.
func TestMergeConditions(t *testing.T) {
	live := []metav1.Condition{
		cond("example.com/Custom", "True", "Theirs", 1, t0),
		cond("Accepted", "True", "Accepted", 1, t0),
		cond("Programmed", "False", "Pending", 1, t0),
		cond("ResolvedRefs", "True", "ResolvedRefs", 9, t0),
	}
	want := []metav1.Condition{
		cond("Accepted", "True", "Accepted", 2, metav1.Time{}),
		cond("Programmed", "True", "Programmed", 2, metav1.Time{}),
		cond("ResolvedRefs", "False", "BackendNotFound", 2, metav1.Time{}),
		cond("Conflicted", "False", "NoConflicts", 2, metav1.Time{}),
	}
	got := mergeConditions(live, want, t1)
	expect := []metav1.Condition{
		cond("example.com/Custom", "True", "Theirs", 1, t0),
		cond("Accepted", "True", "Accepted", 2, t0),         // same status: time kept
		cond("Programmed", "True", "Programmed", 2, t1),     // changed: now
		cond("ResolvedRefs", "True", "ResolvedRefs", 9, t0), // newer generation: untouched
		cond("Conflicted", "False", "NoConflicts", 2, t1),   // new: now
	}
	if len(got) != len(expect) {
		t.Fatalf("got %d conditions: %+v", len(got), got)
	}
	for i := range expect {
		if got[i] != expect[i] {
			t.Errorf("condition %d:\n got  %+v\n want %+v", i, got[i], expect[i])
		}
	}
}

// A route's parents written by other controllers stay; meshcp's are
// replaced, stale ones removed, and unchanged ones keep their times; the
// result equals the live status when nothing changed, so no write is due.
func TestMergeRouteStatus(t *testing.T) {
	ours := gatewayv1.GatewayController("meshcp.io/gateway-controller")
	sectionA, sectionB := gatewayv1.SectionName("a"), gatewayv1.SectionName("b")
	live := &gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{
		{ParentRef: gatewayv1.ParentReference{Name: "other-gw"}, ControllerName: "example.com/other",
			Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted", 1, t0)}},
		{ParentRef: gatewayv1.ParentReference{Name: "gw", SectionName: &sectionA}, ControllerName: ours,
			Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted", 1, t0), cond("PartiallyInvalid", "True", "UnsupportedValue", 1, t0)}},
		{ParentRef: gatewayv1.ParentReference{Name: "gone"}, ControllerName: ours,
			Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted", 1, t0)}},
	}}}
	want := &gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{
		{ParentRef: gatewayv1.ParentReference{Name: "gw", SectionName: &sectionA}, ControllerName: ours,
			Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted", 1, metav1.Time{})}},
		{ParentRef: gatewayv1.ParentReference{Name: "gw", SectionName: &sectionB}, ControllerName: ours,
			Conditions: []metav1.Condition{cond("Accepted", "False", "NoMatchingParent", 1, metav1.Time{})}},
	}}
	merged, changed, err := mergeStatus(schema.HTTPRoute, live, want, ours, t1)
	if err != nil || !changed {
		t.Fatalf("merge: changed %v, err %v", changed, err)
	}
	got := merged.(*gatewayv1.RouteStatus).Parents
	if len(got) != 3 || got[0].ControllerName != "example.com/other" || *got[1].ParentRef.SectionName != "a" || *got[2].ParentRef.SectionName != "b" {
		t.Fatalf("parents = %+v", got)
	}
	if c := got[1].Conditions; len(c) != 1 || c[0].LastTransitionTime != t0 {
		t.Errorf("meshcp's kept parent: conditions %+v (PartiallyInvalid gone, time kept)", c)
	}
	if c := got[2].Conditions; len(c) != 1 || c[0].LastTransitionTime != t1 {
		t.Errorf("meshcp's new parent: conditions %+v", c)
	}

	// Merging again into the result changes nothing.
	again := &gatewayv1.HTTPRouteStatus{RouteStatus: *merged.(*gatewayv1.RouteStatus)}
	if _, changed, _ := mergeStatus(schema.HTTPRoute, again, want, ours, metav1.NewTime(t1.Add(time.Hour))); changed {
		t.Error("merging the same status again is a change")
	}
	// A route meshcp has nothing to say about is left alone.
	foreign := &gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: live.Parents[:1]}}
	if _, changed, _ := mergeStatus(schema.HTTPRoute, foreign, &gatewayv1.RouteStatus{}, ours, t1); changed {
		t.Error("a route with only another controller's parents would be written")
	}
	if _, changed, _ := mergeStatus(schema.HTTPRoute, nil, &gatewayv1.RouteStatus{}, ours, t1); changed {
		t.Error("a route without status would be written an empty one")
	}
}

// A Gateway's listeners are meshcp's: their set follows the spec, each
// listener's conditions merge like the Gateway's.
func TestMergeGatewayStatus(t *testing.T) {
	live := &gatewayv1.GatewayStatus{
		Conditions: []metav1.Condition{cond("Accepted", "Unknown", "Pending", 0, t0)},
		Listeners: []gatewayv1.ListenerStatus{
			{Name: "http", Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted", 1, t0)}},
			{Name: "removed", Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted", 1, t0)}},
		},
	}
	want := &gatewayv1.GatewayStatus{
		Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted", 2, metav1.Time{})},
		Listeners: []gatewayv1.ListenerStatus{
			{Name: "http", AttachedRoutes: 3, Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted", 2, metav1.Time{})}},
		},
	}
	merged, changed, err := mergeStatus(schema.KubernetesGateway, live, want, "", t1)
	if err != nil || !changed {
		t.Fatalf("merge: changed %v, err %v", changed, err)
	}
	got := merged.(*gatewayv1.GatewayStatus)
	if got.Conditions[0].LastTransitionTime != t1 || len(got.Listeners) != 1 || got.Listeners[0].AttachedRoutes != 3 ||
		got.Listeners[0].Conditions[0].LastTransitionTime != t0 {
		t.Errorf("merged = %+v", got)
	}
	if live.Conditions[0].Status != "Unknown" {
		t.Error("the live status was changed in place")
	}
}
