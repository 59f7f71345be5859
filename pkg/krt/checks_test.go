package krt_test

import (
	"strings"
	"sync"
	"testing"

	istioapi "istio.io/api/networking/v1"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// violations collects the reports of failed checks.
type violations struct {
	mu   sync.Mutex
	msgs []string
	got  chan struct{}
}

func newViolations() *violations { return &violations{got: make(chan struct{}, 16)} }

func (v *violations) report(msg string) {
	v.mu.Lock()
	v.msgs = append(v.msgs, msg)
	v.mu.Unlock()
	v.got <- struct{}{}
}

func (v *violations) wait(t *testing.T, want ...string) {
	t.Helper()
	<-v.got
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, w := range want {
		if !strings.Contains(v.msgs[0], w) {
			t.Fatalf("violation %q does not mention %q", v.msgs[0], w)
		}
	}
}

// The mutation detector names the collection and key when a transformation
// changes its input or an object it fetched, or a handler changes an event's
// object.
func TestMutationDetector(t *testing.T) {
	newSource := func(stop chan struct{}) krt.StaticCollection[labelled] {
		return krt.NewStaticCollection(nil, []labelled{{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"x": "1"}}},
			krt.WithStop(stop), krt.WithName("source"))
	}
	for _, tc := range []struct {
		name string
		run  func(stop chan struct{}, v *violations)
		want []string
	}{
		{"transformation changes its input", func(stop chan struct{}, v *violations) {
			krt.NewCollection(newSource(stop), func(ctx krt.HandlerContext, l labelled) *labelled {
				l.Labels["x"] = "changed" // the map is shared with the source
				return &l
			}, krt.WithStop(stop), krt.WithName("mutator"), krt.WithViolationHandler(v.report))
		}, []string{`collection "mutator"`, `object "ns/a" of collection "source"`}},
		{"transformation changes a fetched object", func(stop chan struct{}, v *violations) {
			fetched := newSource(stop)
			trigger := krt.NewStaticCollection(nil, []object{{Named: krt.Named{Name: "t"}}}, krt.WithStop(stop))
			krt.NewCollection(trigger, func(ctx krt.HandlerContext, o object) *object {
				for _, l := range krt.Fetch(ctx, krt.Collection[labelled](fetched)) {
					l.Labels["y"] = "2"
				}
				return &o
			}, krt.WithStop(stop), krt.WithName("fetcher"), krt.WithViolationHandler(v.report))
		}, []string{`collection "fetcher"`, `object "ns/a" of collection "source"`}},
		{"handler changes an event's object", func(stop chan struct{}, v *violations) {
			c := krt.NewStaticCollection(nil, []labelled{{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"x": "1"}}},
				krt.WithStop(stop), krt.WithName("watched"), krt.WithViolationHandler(v.report))
			c.Register(func(e krt.Event[labelled]) { e.New.Labels["x"] = "handler" })
		}, []string{`a handler of collection "watched"`, `object "ns/a"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop := krttest.Stop(t)
			v := newViolations()
			tc.run(stop, v)
			v.wait(t, tc.want...)
		})
	}
}

// The purity check reports a transformation whose two runs differ.
func TestPurityCheck(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []labelled{{Named: krt.Named{Namespace: "ns", Name: "a"}, Labels: map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}}},
		krt.WithStop(stop))
	var mu sync.Mutex
	calls := 0
	v := newViolations()
	impure := krt.NewCollection(src, func(ctx krt.HandlerContext, l labelled) *versioned {
		mu.Lock()
		defer mu.Unlock()
		calls++ // a counter leaking into the output: never the same twice
		return &versioned{Named: l.Named, Value: calls}
	}, krt.WithStop(stop), krt.WithName("impure"), krt.WithViolationHandler(v.report), krt.WithLogger(krttest.Logger(t)))
	v.wait(t, `collection "impure" is not pure`, `input "ns/a"`)
	if krt.PurityViolations(impure) == 0 {
		t.Error("the violation was not counted")
	}

}

// The mutation detector handles Kubernetes objects that hold protobuf
// messages by value, as Istio's do, and sees changes to their specs.
func TestMutationDetectorOnProtoSpecs(t *testing.T) {
	stop := krttest.Stop(t)
	src := krt.NewStaticCollection(nil, []*networkingv1.VirtualService{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vs"},
		Spec:       istioapi.VirtualService{Hosts: []string{"a.example.com"}},
	}}, krt.WithStop(stop), krt.WithName("virtualservices"))
	v := newViolations()
	krt.NewCollection(src, func(ctx krt.HandlerContext, vs *networkingv1.VirtualService) *object {
		vs.Spec.Hosts[0] = "b.example.com"
		return &object{Named: krt.NewNamed(vs)}
	}, krt.WithStop(stop), krt.WithName("rewriter"), krt.WithViolationHandler(v.report))
	v.wait(t, `collection "rewriter"`, `object "ns/vs" of collection "virtualservices"`)
}
