package kube_test

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	clienttesting "k8s.io/client-go/testing"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
)

// Collections of one kind and filter share an informer, selectors being
// compared in canonical form; another filter or the metadata-only mode
// gets its own. An informer stops with its last collection.
func TestInformerSharing(t *testing.T) {
	c := newFakeClient(t, &corev1.ConfigMap{ObjectMeta: objectMeta("a/one", map[string]string{"x": "1", "y": "2"})})
	stopFirst, stopSecond := make(chan struct{}), make(chan struct{})
	stopOther := krttest.Stop(t)
	first := mustCollection[*corev1.ConfigMap](t, c, kube.Filter{Namespace: "a", LabelSelector: "x=1,y=2"}, stopFirst)
	second := mustCollection[*corev1.ConfigMap](t, c, kube.Filter{Namespace: "a", LabelSelector: " y=2, x=1"}, stopSecond)
	other := mustCollection[*corev1.ConfigMap](t, c, kube.Filter{Namespace: "a"}, stopOther)
	if _, err := kube.NewMetadataCollection(c.Client, corev1.SchemeGroupVersion.WithResource("configmaps"), kube.Filter{Namespace: "a"}, stopOther); err != nil {
		t.Fatal(err)
	}
	for _, col := range []interface{ WaitUntilSynced(<-chan struct{}) bool }{first, second, other} {
		if !col.WaitUntilSynced(stopOther) {
			t.Fatal("never synced")
		}
	}
	if keysOf(first) != "a/one" || keysOf(second) != "a/one" {
		t.Fatalf("shared informer collections: %q and %q, want a/one each", keysOf(first), keysOf(second))
	}
	want := map[string]int{
		"/v1, Resource=configmaps (ns=a,labels=x=1,y=2)": 2,
		"/v1, Resource=configmaps (ns=a)":                1,
		"metadata /v1, Resource=configmaps (ns=a)":       1,
	}
	if got := kube.InformerUsers(c.Client); !maps.Equal(got, want) {
		t.Fatalf("informers = %v, want %v", got, want)
	}
	// One list per informer reached the API: the shared one listed once.
	lists := 0
	for _, action := range c.KubeFake.Actions() {
		if _, ok := action.(clienttesting.ListActionImpl); ok && action.GetResource().Resource == "configmaps" {
			lists++
		}
	}
	if lists != 2 {
		t.Errorf("%d lists of configmaps, want 2 (one per typed informer)", lists)
	}

	close(stopFirst)
	waitFor(t, func() bool {
		return kube.InformerUsers(c.Client)["/v1, Resource=configmaps (ns=a,labels=x=1,y=2)"] == 1
	})
	close(stopSecond)
	waitFor(t, func() bool {
		_, running := kube.InformerUsers(c.Client)["/v1, Resource=configmaps (ns=a,labels=x=1,y=2)"]
		return !running
	})
	if n := kube.InformerCount(c.Client); n != 2 {
		t.Errorf("%d informers after the shared one stopped, want 2", n)
	}
}
