package gateway

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Statuses are merged into what the object has, as the Gateway API asks
// of every controller: conditions of types meshcp does not set, and route
// parents of other controllers, stay as they are and where they are;
// conditions meshcp sets replace those of the same type, keeping their
// lastTransitionTime unless their status changes; a condition whose
// observedGeneration is newer than the one meshcp computed for is left
// alone, since meshcp's copy of the object is then stale.

// mergeConditions merges want into live; see above.
func mergeConditions(live, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(live)+len(want))
	out = append(out, live...)
	return mergeInto(out, want, now)
}

// replaceConditions is mergeConditions for a list meshcp owns whole (the
// conditions of a route parent entry of its own): conditions it no
// longer sets are removed.
func replaceConditions(live, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	var kept []metav1.Condition
	for _, c := range live {
		if conditionIndex(want, c.Type) >= 0 {
			kept = append(kept, c)
		}
	}
	return mergeInto(kept, want, now)
}

// mergeInto merges want into out, in place.
func mergeInto(out, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	for _, w := range want {
		i := conditionIndex(out, w.Type)
		if i < 0 {
			w.LastTransitionTime = now
			out = append(out, w)
			continue
		}
		cur := out[i]
		if cur.ObservedGeneration > w.ObservedGeneration {
			continue
		}
		w.LastTransitionTime = cur.LastTransitionTime
		if cur.Status != w.Status || w.LastTransitionTime.IsZero() {
			w.LastTransitionTime = now
		}
		out[i] = w
	}
	return out
}

func conditionIndex(conds []metav1.Condition, typ string) int {
	for i, c := range conds {
		if c.Type == typ {
			return i
		}
	}
	return -1
}

// mergeGatewayClassStatus merges a computed GatewayClass status into the
// live one.
func mergeGatewayClassStatus(live, want *gatewayv1.GatewayClassStatus, now metav1.Time) *gatewayv1.GatewayClassStatus {
	out := live.DeepCopy()
	if out == nil {
		out = &gatewayv1.GatewayClassStatus{}
	}
	out.Conditions = mergeConditions(out.Conditions, want.Conditions, now)
	out.SupportedFeatures = want.DeepCopy().SupportedFeatures
	return out
}

// mergeGatewayStatus merges a computed Gateway status into the live one:
// the addresses and the listeners are meshcp's (a Gateway has one
// controller), each listener's conditions merged like the Gateway's.
func mergeGatewayStatus(live, want *gatewayv1.GatewayStatus, now metav1.Time) *gatewayv1.GatewayStatus {
	out := live.DeepCopy()
	if out == nil {
		out = &gatewayv1.GatewayStatus{}
	}
	w := want.DeepCopy()
	out.Addresses = w.Addresses
	out.Conditions = mergeConditions(out.Conditions, w.Conditions, now)
	listeners := make([]gatewayv1.ListenerStatus, len(w.Listeners))
	for i, l := range w.Listeners {
		var liveConds []metav1.Condition
		for _, cur := range out.Listeners {
			if cur.Name == l.Name {
				liveConds = cur.Conditions
			}
		}
		l.Conditions = mergeConditions(liveConds, l.Conditions, now)
		listeners[i] = l
	}
	out.Listeners = listeners
	return out
}

// mergeRouteStatus merges a computed route status into the live one:
// parents written by other controllers stay; meshcp's are replaced by the
// computed ones (matched by parentRef, conditions merged), and those it no
// longer computes are removed.
func mergeRouteStatus(live, want *gatewayv1.RouteStatus, controller gatewayv1.GatewayController, now metav1.Time) *gatewayv1.RouteStatus {
	out := &gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{}}
	w := want.DeepCopy()
	used := make([]bool, len(w.Parents))
	var lp []gatewayv1.RouteParentStatus
	if live != nil {
		lp = live.DeepCopy().Parents
	}
	for _, cur := range lp {
		if cur.ControllerName != controller {
			out.Parents = append(out.Parents, cur)
			continue
		}
		for i, p := range w.Parents {
			if !used[i] && equality.Semantic.DeepEqual(p.ParentRef, cur.ParentRef) {
				p.Conditions = replaceConditions(cur.Conditions, p.Conditions, now)
				out.Parents = append(out.Parents, p)
				used[i] = true
				break
			}
		}
	}
	for i, p := range w.Parents {
		if !used[i] {
			p.Conditions = replaceConditions(nil, p.Conditions, now)
			out.Parents = append(out.Parents, p)
		}
	}
	return out
}
