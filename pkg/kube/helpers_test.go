package kube_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
	"github.com/meshcp/meshcp/pkg/kube/kubefake"
)

// newFakeClient returns a fake client logging to the test, shut down when
// the test ends (after the stop channels the test makes later close).
func newFakeClient(t *testing.T, objects ...runtime.Object) *kubefake.Client {
	t.Helper()
	return kubefake.NewClientWithOptions(t, []kube.ClientOption{kube.WithLogger(krttest.Logger(t))}, objects...)
}

// mustCollection builds a collection of T or fails the test.
func mustCollection[T kube.Object](t *testing.T, c *kubefake.Client, f kube.Filter, stop <-chan struct{}) krt.Collection[T] {
	t.Helper()
	col, err := kube.NewCollection[T](c.Client, f, stop, krt.WithLogger(krttest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	return col
}

func waitSynced[T any](t *testing.T, c krt.Collection[T], stop <-chan struct{}) {
	t.Helper()
	if !c.WaitUntilSynced(stop) {
		t.Fatal("collection never synced")
	}
}

// keysOf returns the sorted keys of the collection.
func keysOf[T any](c krt.Collection[T]) string {
	var keys []string
	for _, o := range c.List() {
		keys = append(keys, krt.GetKey(o))
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}

// waitKeys waits until the collection holds exactly want (sorted keys,
// space-separated).
func waitKeys[T any](t *testing.T, c krt.Collection[T], want string) {
	t.Helper()
	if !krttest.Eventually(c, func() bool { return keysOf(c) == want }) {
		t.Fatalf("keys = %q, want %q", keysOf(c), want)
	}
}

func objectMeta(key string, labels map[string]string) metav1.ObjectMeta {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		ns, name = "", key
	}
	return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}
}

// crd returns a CustomResourceDefinition; see kubefake.CRD.
func crd(resource, group string, established bool, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	return kubefake.CRD(resource, group, established, versions...)
}

func createCRD(t *testing.T, c *kubefake.Client, def *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if _, err := c.Extensions().ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), def, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deleteCRD(t *testing.T, c *kubefake.Client, name string) {
	t.Helper()
	if err := c.Extensions().ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// logBuffer is a slog handler's output, safe for concurrent writes, that
// also goes to the test log.
type logBuffer struct {
	t  *testing.T
	mu sync.Mutex
	b  bytes.Buffer
}

func newLogBuffer(t *testing.T) (*logBuffer, *slog.Logger) {
	lb := &logBuffer{t: t}
	return lb, slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.t.Context().Err() == nil {
		l.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return l.b.Write(p)
}

// count returns how many lines contain s.
func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// debugNames returns the names of the collections registered with d.
func debugNames(t *testing.T, d *krt.DebugHandler) string {
	t.Helper()
	var names []string
	for _, c := range d.Collections() {
		names = append(names, c.Name)
	}
	return strings.Join(names, ",")
}
