package krt_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// labelled is an object with labels and a selector.
type labelled struct {
	krt.Named
	Labels   map[string]string
	Selector map[string]string
}

func (l labelled) GetLabels() map[string]string        { return l.Labels }
func (l labelled) GetLabelSelector() map[string]string { return l.Selector }

// fetchKeys runs Fetch inside a Singleton and returns the keys it got.
func fetchKeys[T any](t *testing.T, c krt.Collection[T], filters ...krt.FetchOption) []string {
	t.Helper()
	stop := make(chan struct{})
	defer close(stop)
	s := krt.NewSingleton(func(ctx krt.HandlerContext) *[]string {
		keys := []string{}
		for _, o := range krt.Fetch(ctx, c, filters...) {
			keys = append(keys, krt.GetKey(o))
		}
		return &keys
	}, krt.WithStop(stop))
	s.AsCollection().WaitUntilSynced(stop)
	return *s.Get()
}

func labelledWorld(t *testing.T) (krt.StaticCollection[labelled], krt.Index[string, labelled]) {
	c := krt.NewStaticCollection(nil, []labelled{
		{Named: krt.Named{Namespace: "a", Name: "app-x"}, Labels: map[string]string{"app": "x"}, Selector: map[string]string{"app": "x"}},
		{Named: krt.Named{Namespace: "a", Name: "app-x-v1"}, Labels: map[string]string{"app": "x", "version": "v1"}, Selector: map[string]string{"app": "x", "version": "v1"}},
		{Named: krt.Named{Namespace: "b", Name: "app-y"}, Labels: map[string]string{"app": "y"}, Selector: map[string]string{"app": "y"}},
		{Named: krt.Named{Namespace: "b", Name: "empty"}},
	}, krt.WithStop(krttest.Stop(t)))
	return c, krt.NewNamespaceIndex[labelled](c)
}

// The semantics of every filter, as the seed's table gives them.
func TestFilterSemantics(t *testing.T) {
	c, byNamespace := labelledWorld(t)
	byApp := krt.NewIndex[string, labelled](c, "app", func(l labelled) []string {
		if app, ok := l.Labels["app"]; ok {
			return []string{app}
		}
		return nil
	})
	for _, tc := range []struct {
		name    string
		filters []krt.FetchOption
		want    []string
	}{
		{"no filter", nil, []string{"a/app-x", "a/app-x-v1", "b/app-y", "b/empty"}},
		{"FilterKey", []krt.FetchOption{krt.FilterKey("b/app-y")}, []string{"b/app-y"}},
		{"FilterKey missing", []krt.FetchOption{krt.FilterKey("b/nope")}, []string{}},
		{"FilterKeys", []krt.FetchOption{krt.FilterKeys("b/empty", "a/app-x", "zzz")}, []string{"a/app-x", "b/empty"}},
		{"FilterObjectName", []krt.FetchOption{krt.FilterObjectName(types.NamespacedName{Namespace: "a", Name: "app-x"})}, []string{"a/app-x"}},
		{"FilterNamespace", []krt.FetchOption{krt.FilterNamespace("b")}, []string{"b/app-y", "b/empty"}},
		{"FilterIndex namespace", []krt.FetchOption{krt.FilterIndex(byNamespace, "a")}, []string{"a/app-x", "a/app-x-v1"}},
		{"FilterIndex custom", []krt.FetchOption{krt.FilterIndex(byApp, "x")}, []string{"a/app-x", "a/app-x-v1"}},
		// FilterLabel: the given labels are a subset of the object's.
		{"FilterLabel subset", []krt.FetchOption{krt.FilterLabel(map[string]string{"app": "x"})}, []string{"a/app-x", "a/app-x-v1"}},
		{"FilterLabel superset of object", []krt.FetchOption{krt.FilterLabel(map[string]string{"app": "x", "version": "v1"})}, []string{"a/app-x-v1"}},
		{"FilterLabel empty matches all", []krt.FetchOption{krt.FilterLabel(nil)}, []string{"a/app-x", "a/app-x-v1", "b/app-y", "b/empty"}},
		// FilterSelects: the object's selector is a subset of the given
		// labels; an empty selector matches.
		{"FilterSelects", []krt.FetchOption{krt.FilterSelects(map[string]string{"app": "x"})}, []string{"a/app-x", "b/empty"}},
		{"FilterSelects more labels", []krt.FetchOption{krt.FilterSelects(map[string]string{"app": "x", "version": "v1", "extra": "1"})}, []string{"a/app-x", "a/app-x-v1", "b/empty"}},
		{"FilterSelects no labels", []krt.FetchOption{krt.FilterSelects(nil)}, []string{"b/empty"}},
		// FilterSelectsNonEmpty: the same, but an empty selector matches
		// nothing.
		{"FilterSelectsNonEmpty", []krt.FetchOption{krt.FilterSelectsNonEmpty(map[string]string{"app": "x"})}, []string{"a/app-x"}},
		{"FilterSelectsNonEmpty no labels", []krt.FetchOption{krt.FilterSelectsNonEmpty(nil)}, []string{}},
		{"FilterGeneric", []krt.FetchOption{krt.FilterGeneric(func(o any) bool { return strings.HasSuffix(o.(labelled).Name, "v1") })}, []string{"a/app-x-v1"}},
		{"combined", []krt.FetchOption{krt.FilterIndex(byNamespace, "a"), krt.FilterSelectsNonEmpty(map[string]string{"app": "x", "version": "v1"}),
			krt.FilterGeneric(func(o any) bool { return o.(labelled).Name != "app-x" })}, []string{"a/app-x-v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fetchKeys[labelled](t, c, tc.filters...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Fetch = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIndexLookupFollowsChanges(t *testing.T) {
	c, byNamespace := labelledWorld(t)
	if got := keysOf(byNamespace.Lookup("b")); !slices.Equal(got, []string{"b/app-y", "b/empty"}) {
		t.Fatalf("Lookup(b) = %v", got)
	}
	c.UpdateObject(labelled{Named: krt.Named{Namespace: "b", Name: "new"}})
	c.DeleteObject("b/app-y")
	if got := keysOf(byNamespace.Lookup("b")); !slices.Equal(got, []string{"b/empty", "b/new"}) {
		t.Fatalf("Lookup(b) after changes = %v", got)
	}
	if again := krt.NewNamespaceIndex[labelled](c); len(again.Lookup("a")) != 2 {
		t.Fatal("a second namespace index sees a different state")
	}
}

func TestFilterMisuse(t *testing.T) {
	c, _ := labelledWorld(t)
	other, otherIndex := labelledWorld(t)
	_ = other
	for name, filters := range map[string][]krt.FetchOption{
		"FilterKey twice":             {krt.FilterKey("a"), krt.FilterKey("b")},
		"index of another collection": {krt.FilterIndex(otherIndex, "a")},
	} {
		t.Run(name, func(t *testing.T) {
			stop := krttest.Stop(t)
			var panicked atomic.Value
			s := krt.NewSingleton(func(ctx krt.HandlerContext) *string {
				defer func() {
					if p := recover(); p != nil {
						panicked.Store(fmt.Sprint(p))
						panic(p)
					}
				}()
				krt.Fetch(ctx, krt.Collection[labelled](c), filters...)
				v := "ok"
				return &v
			}, krt.WithStop(stop), krt.WithLogger(krttest.Logger(t)))
			s.AsCollection().WaitUntilSynced(stop)
			if msg, _ := panicked.Load().(string); !strings.HasPrefix(msg, "krt: ") {
				t.Errorf("panic = %q, want a krt message", msg)
			}
			if krt.Panics(s.AsCollection()) != 1 || s.Get() != nil {
				t.Errorf("panics = %d, value = %v: the misuse must be recovered and produce nothing", krt.Panics(s.AsCollection()), s.Get())
			}
		})
	}
}

func keysOf[T any](objs []T) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = krt.GetKey(o)
	}
	return out
}

// For every kind of filter, a change of one fetched object recomputes only
// the input that depends on it, and finds it by checking only a few
// dependency lists, however many inputs there are. FilterGeneric cannot be
// indexed: it makes its own inputs checked on every change, and no others.
func TestEveryFilterIsReverseIndexed(t *testing.T) {
	const inputs = 200
	for _, tc := range []struct {
		name string
		// filter is what input i fetches: it matches target i only.
		filter func(i int, byNamespace krt.Index[string, labelled]) []krt.FetchOption
		// maxChecks bounds the dependency lists checked for one change.
		maxChecks uint64
	}{
		{"FilterKey", func(i int, _ krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterKey(targetKey(i))}
		}, 1},
		{"FilterKeys", func(i int, _ krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterKeys(targetKey(i), "none/"+fmt.Sprint(i))}
		}, 1},
		{"FilterObjectName", func(i int, _ krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterObjectName(types.NamespacedName{Namespace: fmt.Sprintf("ns-%d", i), Name: "target"})}
		}, 1},
		{"FilterNamespace", func(i int, _ krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterNamespace(fmt.Sprintf("ns-%d", i))}
		}, 1},
		{"FilterIndex", func(i int, byNamespace krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterIndex(byNamespace, fmt.Sprintf("ns-%d", i))}
		}, 1},
		{"FilterLabel", func(i int, _ krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterLabel(map[string]string{"id": fmt.Sprint(i)})}
		}, 1},
		{"FilterSelects", func(i int, _ krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterSelects(map[string]string{"id": fmt.Sprint(i), "tier": "web"})}
		}, 1},
		{"FilterSelectsNonEmpty", func(i int, _ krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterSelectsNonEmpty(map[string]string{"id": fmt.Sprint(i), "tier": "web"})}
		}, 1},
		{"FilterGeneric", func(i int, _ krt.Index[string, labelled]) []krt.FetchOption {
			return []krt.FetchOption{krt.FilterGeneric(func(o any) bool { return o.(labelled).Namespace == fmt.Sprintf("ns-%d", i) })}
		}, inputs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop := krttest.Stop(t)
			var targets []labelled
			var ins []object
			for i := range inputs {
				targets = append(targets, target(i, "v0"))
				ins = append(ins, object{Named: krt.Named{Namespace: "in", Name: fmt.Sprint(i)}})
			}
			fetched := krt.NewStaticCollection(nil, targets, krt.WithStop(stop))
			byNamespace := krt.NewNamespaceIndex[labelled](fetched)
			var computed atomic.Int64
			out := krt.NewCollection(krt.NewStaticCollection(nil, ins, krt.WithStop(stop)), func(ctx krt.HandlerContext, in object) *versioned {
				computed.Add(1)
				var i int
				fmt.Sscan(in.Name, &i)
				got := krt.Fetch(ctx, krt.Collection[labelled](fetched), tc.filter(i, byNamespace)...)
				if len(got) != 1 {
					return &versioned{Named: in.Named, Value: -len(got)}
				}
				return &versioned{Named: in.Named, Value: len(got[0].Labels["version"])}
			}, krt.WithStop(stop), countsRuns)
			out.WaitUntilSynced(stop)
			for _, v := range out.List() {
				if v.Value != 2 {
					t.Fatalf("input %s fetched %d objects, want exactly its target", v.Name, -v.Value)
				}
			}
			tracker := krttest.NewTracker[versioned](t)
			out.RegisterBatch(tracker.TrackBatch, false).WaitUntilSynced(stop)
			computed.Store(0)

			fetched.UpdateObject(target(7, "v10"))
			tracker.WaitOrdered("update/in/7")
			if got := computed.Load(); got != 1 {
				t.Errorf("recomputations = %d, want 1", got)
			}
			if got := krt.DependencyChecks(out); got > tc.maxChecks {
				t.Errorf("dependency lists checked = %d, want at most %d", got, tc.maxChecks)
			}
		})
	}
}

func targetKey(i int) string { return fmt.Sprintf("ns-%d/target", i) }

func target(i int, version string) labelled {
	return labelled{
		Named:    krt.Named{Namespace: fmt.Sprintf("ns-%d", i), Name: "target"},
		Labels:   map[string]string{"id": fmt.Sprint(i), "version": version},
		Selector: map[string]string{"id": fmt.Sprint(i)},
	}
}

// One FilterGeneric input among many FilterKey inputs of the same fetched
// collection: only the generic input is checked on every change.
func TestGenericFilterDegradesOnlyItself(t *testing.T) {
	stop := krttest.Stop(t)
	const inputs = 100
	var targets []labelled
	var ins []object
	for i := range inputs {
		targets = append(targets, target(i, "v0"))
		ins = append(ins, object{Named: krt.Named{Namespace: "in", Name: fmt.Sprint(i)}})
	}
	ins = append(ins, object{Named: krt.Named{Namespace: "in", Name: "generic"}})
	fetched := krt.NewStaticCollection(nil, targets, krt.WithStop(stop))
	out := krt.NewCollection(krt.NewStaticCollection(nil, ins, krt.WithStop(stop)), func(ctx krt.HandlerContext, in object) *versioned {
		if in.Name == "generic" {
			n := len(krt.Fetch(ctx, krt.Collection[labelled](fetched), krt.FilterGeneric(func(o any) bool {
				return o.(labelled).Labels["version"] != "v0"
			})))
			return &versioned{Named: in.Named, Value: n}
		}
		return &versioned{Named: in.Named, Value: len(krt.Fetch(ctx, krt.Collection[labelled](fetched), krt.FilterKey(targetKey(mustAtoi(in.Name)))))}
	}, krt.WithStop(stop))
	out.WaitUntilSynced(stop)
	tracker := krttest.NewTracker[versioned](t)
	out.RegisterBatch(tracker.TrackBatch, false).WaitUntilSynced(stop)

	fetched.UpdateObject(target(7, "v1"))
	tracker.WaitOrdered("update/in/generic")
	if got := krt.DependencyChecks(out); got != 2 {
		t.Errorf("dependency lists checked = %d, want 2 (the generic input's and target 7's)", got)
	}
}

func mustAtoi(s string) int {
	var i int
	if _, err := fmt.Sscan(s, &i); err != nil {
		panic(err)
	}
	return i
}

// Label and selector reads come from indexes built on first use; they must
// follow every later change of labels and selectors.
func TestLabelAndSelectorReadsFollowChanges(t *testing.T) {
	c, _ := labelledWorld(t)
	byLabel := func() []string { return fetchKeys[labelled](t, c, krt.FilterLabel(map[string]string{"app": "x"})) }
	bySelector := func() []string {
		return fetchKeys[labelled](t, c, krt.FilterSelects(map[string]string{"app": "y", "tier": "db"}))
	}
	expect := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	expect("label read", byLabel(), []string{"a/app-x", "a/app-x-v1"})
	expect("selector read", bySelector(), []string{"b/app-y", "b/empty"})

	// app-x changes app and gains a selector; app-y drops its selector;
	// a new object selects by two labels.
	c.UpdateObject(labelled{Named: krt.Named{Namespace: "a", Name: "app-x"}, Labels: map[string]string{"app": "y"}, Selector: map[string]string{"tier": "db"}})
	c.UpdateObject(labelled{Named: krt.Named{Namespace: "b", Name: "app-y"}, Labels: map[string]string{"app": "x"}})
	c.UpdateObject(labelled{Named: krt.Named{Namespace: "c", Name: "two"}, Selector: map[string]string{"app": "y", "tier": "db"}})
	c.DeleteObject("b/empty")
	expect("label read after changes", byLabel(), []string{"a/app-x-v1", "b/app-y"})
	expect("selector read after changes", bySelector(), []string{"a/app-x", "b/app-y", "c/two"})
}
