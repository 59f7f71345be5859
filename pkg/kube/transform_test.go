package kube_test

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
	"github.com/meshcp/meshcp/pkg/kube/kubefake"
)

// fatConfigMap has everything the default transform and the named
// annotations remove.
func fatConfigMap(key string) *corev1.ConfigMap {
	meta := objectMeta(key, nil)
	meta.Annotations = map[string]string{
		corev1.LastAppliedConfigAnnotation: `{"apiVersion":"v1","kind":"ConfigMap"}`,
		"keep":                             "me",
	}
	meta.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	return &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"big": "value"}}
}

func TestTransformStripsBeforeStoring(t *testing.T) {
	ctx := context.Background()
	var ran atomic.Int32
	c := kubefake.NewClientWithOptions(t, []kube.ClientOption{
		kube.WithLogger(krttest.Logger(t)),
		kube.WithStrippedAnnotations(corev1.LastAppliedConfigAnnotation),
		kube.WithTransform(func(cm *corev1.ConfigMap) *corev1.ConfigMap {
			ran.Add(1)
			cm.Data = nil
			return cm
		}),
		kube.WithTransform(func(cm *corev1.ConfigMap) *corev1.ConfigMap {
			return nil // a nil result keeps the object
		}),
	}, fatConfigMap("ns/before"), &corev1.Secret{ObjectMeta: objectMeta("ns/s", nil), Data: map[string][]byte{"k": []byte("v")}})
	stop := krttest.Stop(t)
	cms := mustCollection[*corev1.ConfigMap](t, c, kube.Filter{}, stop)
	secrets := mustCollection[*corev1.Secret](t, c, kube.Filter{}, stop)
	waitSynced(t, cms, stop)
	waitSynced(t, secrets, stop)
	if _, err := c.Kube().CoreV1().ConfigMaps("ns").Create(ctx, fatConfigMap("ns/after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitKeys(t, cms, "ns/after ns/before")

	// The fake itself still has it all: the collection's copy was stripped.
	stored, err := c.Kube().CoreV1().ConfigMaps("ns").Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.ManagedFields) == 0 || stored.Annotations[corev1.LastAppliedConfigAnnotation] == "" {
		t.Fatal("the fake lost the fields the test needs")
	}
	for _, key := range []string{"ns/before", "ns/after"} {
		cm := *cms.GetKey(key)
		if len(cm.ManagedFields) != 0 {
			t.Errorf("%s: managedFields kept: %v", key, cm.ManagedFields)
		}
		if _, ok := cm.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
			t.Errorf("%s: last-applied-configuration kept", key)
		}
		if cm.Annotations["keep"] != "me" {
			t.Errorf("%s: annotations %v, want keep=me", key, cm.Annotations)
		}
		if cm.Data != nil {
			t.Errorf("%s: the caller's transform did not run: data %v", key, cm.Data)
		}
	}
	if n := ran.Load(); n < 2 {
		t.Errorf("caller transform ran %d times, want at least 2", n)
	}
	// A transform for ConfigMaps leaves Secrets alone.
	if s := *secrets.GetKey("ns/s"); string(s.Data["k"]) != "v" {
		t.Errorf("secret data %v, want k=v", s.Data)
	}
}

// By default only managedFields go; annotations stay.
func TestTransformDefault(t *testing.T) {
	c := newFakeClient(t, fatConfigMap("ns/cm"))
	stop := krttest.Stop(t)
	cms := mustCollection[*corev1.ConfigMap](t, c, kube.Filter{}, stop)
	waitSynced(t, cms, stop)
	cm := *cms.GetKey("ns/cm")
	if len(cm.ManagedFields) != 0 {
		t.Errorf("managedFields kept: %v", cm.ManagedFields)
	}
	if len(cm.Annotations) != 2 || cm.Data["big"] != "value" {
		t.Errorf("default transform took more than managedFields: %v %v", cm.Annotations, cm.Data)
	}
}
