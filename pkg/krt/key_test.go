package krt_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshcp/meshcp/pkg/krt"
)

type hostname string

type pointerNamed struct{ name string }

func (p *pointerNamed) ResourceName() string { return "ptr:" + p.name }

// One key rule everywhere: ResourceName, then namespace/name (name alone
// when cluster-scoped), then strings as themselves.
func TestGetKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  func() string
		want string
	}{
		{"ResourceName on the value", func() string { return krt.GetKey(keyedByLabel{Key: "k"}) }, "k"},
		{"ResourceName on the pointer", func() string { return krt.GetKey(pointerNamed{name: "x"}) }, "ptr:x"},
		{"Named", func() string { return krt.GetKey(krt.Named{Namespace: "ns", Name: "a"}) }, "ns/a"},
		{"Named, cluster-scoped", func() string { return krt.GetKey(krt.Named{Name: "a"}) }, "a"},
		{"embedded Named", func() string { return krt.GetKey(workload{Named: krt.Named{Namespace: "ns", Name: "w"}}) }, "ns/w"},
		{"Kubernetes object", func() string {
			return krt.GetKey(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
		}, "ns/p"},
		{"cluster-scoped Kubernetes object", func() string {
			return krt.GetKey(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}})
		}, "ns"},
		{"string", func() string { return krt.GetKey("plain") }, "plain"},
		{"named string type", func() string { return krt.GetKey(hostname("a.example.com")) }, "a.example.com"},
	} {
		if got := tc.key(); got != tc.want {
			t.Errorf("%s: GetKey = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestGetKeyOfUnkeyedTypePanics(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "cannot compute a key for int") {
			t.Errorf("panic = %v, want one naming int", p)
		}
	}()
	krt.GetKey(42)
}
