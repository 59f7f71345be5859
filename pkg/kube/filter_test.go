package kube_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
)

func TestFilterByNamespace(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(t,
		&corev1.Secret{ObjectMeta: objectMeta("a/one", nil)},
		&corev1.Secret{ObjectMeta: objectMeta("b/two", nil)},
	)
	stop := krttest.Stop(t)
	secrets := mustCollection[*corev1.Secret](t, c, kube.Filter{Namespace: "a"}, stop)
	waitSynced(t, secrets, stop)
	if got := keysOf(secrets); got != "a/one" {
		t.Fatalf("initial state %q, want a/one", got)
	}
	for _, key := range []string{"b/three", "a/four"} {
		meta := objectMeta(key, nil)
		if _, err := c.Kube().CoreV1().Secrets(meta.Namespace).Create(ctx, &corev1.Secret{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitKeys(t, secrets, "a/four a/one")
}

// The fake applies label selectors to lists and (through kubefake's watch
// reactor) to watches, as the API server does.
func TestFilterByLabel(t *testing.T) {
	ctx := context.Background()
	web := map[string]string{"app": "web"}
	c := newFakeClient(t,
		&corev1.Pod{ObjectMeta: objectMeta("ns/web-1", web)},
		&corev1.Pod{ObjectMeta: objectMeta("ns/db-1", map[string]string{"app": "db"})},
	)
	stop := krttest.Stop(t)
	pods := mustCollection[*corev1.Pod](t, c, kube.Filter{LabelSelector: "app=web"}, stop)
	waitSynced(t, pods, stop)
	if got := keysOf(pods); got != "ns/web-1" {
		t.Fatalf("initial state %q, want ns/web-1", got)
	}
	tracker := krttest.NewTracker[*corev1.Pod](t)
	pods.Register(tracker.Track)
	tracker.WaitOrdered("add/ns/web-1")

	podsAPI := c.Kube().CoreV1().Pods("ns")
	for _, p := range []*corev1.Pod{
		{ObjectMeta: objectMeta("ns/db-2", map[string]string{"app": "db"})},
		{ObjectMeta: objectMeta("ns/web-2", web)},
	} {
		if _, err := podsAPI.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tracker.WaitOrdered("add/ns/web-2")

	// Relabelled out of the selector: gone from the collection.
	moved, err := podsAPI.Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	moved = moved.DeepCopy()
	moved.Labels = map[string]string{"app": "db"}
	if _, err := podsAPI.Update(ctx, moved, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tracker.WaitOrdered("delete/ns/web-1")
	if got := keysOf(pods); got != "ns/web-2" {
		t.Fatalf("after relabelling %q, want ns/web-2", got)
	}
	time.Sleep(10 * time.Millisecond)
	tracker.Empty()
}

// Field selectors are passed to the API server, which is the only one that
// can evaluate them: client-go's fakes ignore them, so this checks the
// requests the informer sends instead of what it receives. The namespace
// and the (normalised) label selector go along.
func TestFilterRequests(t *testing.T) {
	c := newFakeClient(t)
	stop := krttest.Stop(t)
	filter := kube.Filter{Namespace: "ns", LabelSelector: "tier!=db, app=web", FieldSelector: "spec.nodeName=node-1"}
	pods := mustCollection[*corev1.Pod](t, c, filter, stop)
	waitSynced(t, pods, stop)

	var listed, watched bool
	waitFor(t, func() bool {
		for _, action := range c.KubeFake.Actions() {
			if action.GetResource().Resource != "pods" {
				continue
			}
			switch a := action.(type) {
			case clienttesting.ListActionImpl:
				checkRequest(t, "list", a.GetNamespace(), a.GetListRestrictions().Labels.String(), a.GetListRestrictions().Fields.String())
				listed = true
			case clienttesting.WatchActionImpl:
				checkRequest(t, "watch", a.GetNamespace(), a.GetWatchRestrictions().Labels.String(), a.GetWatchRestrictions().Fields.String())
				watched = true
			}
		}
		return listed && watched
	})
}

func checkRequest(t *testing.T, verb, ns, labels, fields string) {
	t.Helper()
	if ns != "ns" || labels != "app=web,tier!=db" || fields != "spec.nodeName=node-1" {
		t.Errorf("%s of pods in %q with labels %q and fields %q; want ns, app=web,tier!=db and spec.nodeName=node-1", verb, ns, labels, fields)
	}
}
