package bench

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/meshcp/meshcp/pkg/krt"
)

// The selector fan-out world: 10k pods over 100 app labels, and 500
// policies, each selecting the pods of one app (5 policies per app). A
// policy's derived object lists the pods it applies to. The shape of
// istio/istio#60366, where relabelling pods stalled krt for over 30 minutes
// because label filters were neither reverse-indexed nor indexed for reads.
const (
	fanoutPods     = 10000
	fanoutApps     = 100
	fanoutPolicies = 500
	fanoutRelabel  = 1000
)

type fanoutPod struct {
	krt.Named
	Labels map[string]string
}

func (p fanoutPod) GetLabels() map[string]string { return p.Labels }

type policy struct {
	krt.Named
	Selector map[string]string
	Fence    int // changed to mark the end of an operation
}

func (p policy) Equals(o policy) bool {
	return p.Named == o.Named && p.Fence == o.Fence && maps.Equal(p.Selector, o.Selector)
}

// policyTargets is what a policy applies to.
type policyTargets struct {
	krt.Named
	Pods  []string
	Fence int
}

func (t policyTargets) Equals(o policyTargets) bool {
	return t.Named == o.Named && t.Fence == o.Fence && slices.Equal(t.Pods, o.Pods)
}

func fanoutApp(i int) string { return fmt.Sprintf("app-%03d", i%fanoutApps) }

type fanoutWorld struct {
	pods     krt.StaticCollection[fanoutPod]
	policies krt.StaticCollection[policy]
	targets  krt.Collection[policyTargets]
	computed atomic.Int64
	shift    int // how far the relabelled pods have moved
	fence    int
	done     chan struct{}
}

// newFanoutWorld builds the world; indexed chooses FilterLabel (reverse-
// and read-indexed by label) or the same test through FilterGeneric, which
// nothing can index: the cost a label filter has without indexes.
func newFanoutWorld(tb testing.TB, indexed bool) *fanoutWorld {
	stop := make(chan struct{})
	tb.Cleanup(func() { close(stop) })
	w := &fanoutWorld{done: make(chan struct{}, 1)}
	var pods []fanoutPod
	for i := range fanoutPods {
		pods = append(pods, fanoutPod{Named: krt.Named{Namespace: "ns", Name: fmt.Sprintf("pod-%05d", i)}, Labels: map[string]string{"app": fanoutApp(i)}})
	}
	var policies []policy
	for i := range fanoutPolicies {
		policies = append(policies, policy{Named: krt.Named{Namespace: "ns", Name: fmt.Sprintf("policy-%03d", i)}, Selector: map[string]string{"app": fanoutApp(i)}})
	}
	policies = append(policies, policy{Named: krt.Named{Namespace: "ns", Name: "fence"}, Selector: map[string]string{"app": "none"}})
	w.pods = krt.NewStaticCollection(nil, pods, krt.WithStop(stop), krt.WithName("Pods"))
	w.policies = krt.NewStaticCollection(nil, policies, krt.WithStop(stop), krt.WithName("Policies"))
	w.targets = krt.NewCollection(w.policies, func(ctx krt.HandlerContext, p policy) *policyTargets {
		w.computed.Add(1)
		var selected []fanoutPod
		if indexed {
			selected = krt.Fetch(ctx, krt.Collection[fanoutPod](w.pods), krt.FilterLabel(p.Selector))
		} else {
			selected = krt.Fetch(ctx, krt.Collection[fanoutPod](w.pods), krt.FilterGeneric(func(o any) bool {
				labels := o.(fanoutPod).Labels
				for k, v := range p.Selector {
					if labels[k] != v {
						return false
					}
				}
				return true
			}))
		}
		names := make([]string, len(selected))
		for i, pod := range selected {
			names[i] = pod.Name
		}
		return &policyTargets{Named: p.Named, Pods: names, Fence: p.Fence}
	}, krt.WithStop(stop), krt.WithName("PolicyTargets"))
	if !w.targets.WaitUntilSynced(stop) {
		tb.Fatal("never synced")
	}
	w.targets.RegisterBatch(func(events []krt.Event[policyTargets]) {
		for _, e := range events {
			if e.New != nil && e.New.Name == "fence" && e.New.Fence == w.fence {
				w.done <- struct{}{}
			}
		}
	}, false)
	return w
}

// relabel moves the app label of 1000 pods one app further, then waits
// until every policy has seen it: the fence policy is changed after the
// pods, and its new output comes in the batch that holds everything queued
// before it.
func (w *fanoutWorld) relabel() {
	w.shift++
	for i := range fanoutRelabel {
		pod := *w.pods.GetKey(fmt.Sprintf("ns/pod-%05d", i))
		pod.Labels = map[string]string{"app": fanoutApp(i + w.shift)}
		w.pods.UpdateObject(pod)
	}
	w.fence++
	fence := *w.policies.GetKey("ns/fence")
	fence.Fence = w.fence
	w.policies.UpdateObject(fence)
	<-w.done
}

// BenchmarkSelectorFanout: one op relabels 1000 of the 10k pods, moving each
// to the next app: every app loses 10 pods and gains 10, so all 500
// policies change. recomputations/op counts the policies computed again
// (the fence included; a policy touched in several batches counts more
// than once).
func BenchmarkSelectorFanout(b *testing.B) {
	for _, tc := range []struct {
		name    string
		indexed bool
	}{
		{"FilterLabel", true},
		{"FilterGeneric", false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := newFanoutWorld(b, tc.indexed)
			before := w.computed.Load()
			b.ReportAllocs()
			for b.Loop() {
				w.relabel()
			}
			b.ReportMetric(float64(w.computed.Load()-before)/float64(b.N), "recomputations/op")
		})
	}
}

// The fan-out world computes the right targets after a relabelling, with
// either filter.
func TestSelectorFanoutTargets(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		t.Run(fmt.Sprintf("indexed=%v", indexed), func(t *testing.T) {
			w := newFanoutWorld(t, indexed)
			w.relabel()
			// Pods 0..999 moved one app up.
			want := map[string][]string{}
			for i := range fanoutPods {
				app := fanoutApp(i)
				if i < fanoutRelabel {
					app = fanoutApp(i + 1)
				}
				want[app] = append(want[app], fmt.Sprintf("pod-%05d", i))
			}
			for i := range fanoutPolicies {
				got := w.targets.GetKey(fmt.Sprintf("ns/policy-%03d", i))
				if got == nil || !slices.Equal(got.Pods, want[fanoutApp(i)]) {
					t.Fatalf("policy %d targets %v, want %v", i, got, want[fanoutApp(i)])
				}
			}
		})
	}
}
