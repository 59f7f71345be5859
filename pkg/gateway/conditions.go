package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// condition builds a condition as the translation computes it: for the
// object's generation, without a lastTransitionTime. Transformations must
// not read the clock; the time is set when the status is written, and
// only when the condition's status changes (see mergeConditions).
func condition[T, R ~string](typ T, ok bool, reason R, message string, generation int64) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{
		Type:               string(typ),
		Status:             status,
		Reason:             string(reason),
		Message:            message,
		ObservedGeneration: generation,
	}
}

// conditionTrue reports whether the condition of type typ is True.
func conditionTrue(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
