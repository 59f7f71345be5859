package krt_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// The reverse dependency index must never miss an input: after any sequence
// of changes to fetched objects and to inputs' filters, every input's output
// equals a computation from scratch with an independent implementation of
// the filter semantics. A missed event would leave a stale output.
func FuzzReverseIndex(f *testing.F) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, seed*7919))
		data := make([]byte, 64+rng.IntN(192))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runReverseIndexProgram(t, &byteReader{data: data})
	})
}

// byteReader hands out small numbers from fuzz input, then zeros.
type byteReader struct {
	data []byte
	pos  int
}

func (r *byteReader) next(n int) int {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return int(b) % n
}

func (r *byteReader) done() bool { return r.pos >= len(r.data) }

const (
	fuzzObjects = 8
	fuzzInputs  = 10
)

var fuzzLabelKeys, fuzzLabelValues = []string{"a", "b"}, []string{"1", "2"}

func (r *byteReader) labels() map[string]string {
	m := map[string]string{}
	for _, k := range fuzzLabelKeys {
		if v := r.next(3); v > 0 {
			m[k] = fuzzLabelValues[v-1]
		}
	}
	return m
}

func (r *byteReader) objectKey() string {
	i := r.next(fuzzObjects)
	return fmt.Sprintf("ns-%d/obj-%d", i%2, i)
}

// fuzzFilter is one input's query, kept as data so the test can evaluate it
// by itself.
type fuzzFilter struct {
	Kind      int
	Key, Key2 string
	Namespace string
	Labels    map[string]string
}

const (
	qKey = iota
	qKeys
	qNamespace
	qIndex
	qLabel
	qSelects
	qSelectsNonEmpty
	qGeneric
	qNone
	qIndexAndSelects
	qKinds
)

func (r *byteReader) filter() fuzzFilter {
	return fuzzFilter{
		Kind: r.next(qKinds), Key: r.objectKey(), Key2: r.objectKey(),
		Namespace: fmt.Sprintf("ns-%d", r.next(2)), Labels: r.labels(),
	}
}

// matches is the reference semantics of the seed's filter table.
func (q fuzzFilter) matches(o labelled) bool {
	key := o.Namespace + "/" + o.Name
	subset := func(sub, super map[string]string) bool {
		for k, v := range sub {
			if super[k] != v {
				return false
			}
		}
		return true
	}
	switch q.Kind {
	case qKey:
		return key == q.Key
	case qKeys:
		return key == q.Key || key == q.Key2
	case qNamespace, qIndex:
		return o.Namespace == q.Namespace
	case qLabel:
		return subset(q.Labels, o.Labels)
	case qSelects:
		return subset(o.Selector, q.Labels)
	case qSelectsNonEmpty:
		return len(o.Selector) > 0 && subset(o.Selector, q.Labels)
	case qGeneric:
		return len(o.Labels) == len(o.Selector)
	case qIndexAndSelects:
		return o.Namespace == q.Namespace && len(o.Selector) > 0 && subset(o.Selector, q.Labels)
	}
	return true
}

func (q fuzzFilter) options(byNamespace krt.Index[string, labelled]) (krt.Index[string, labelled], []krt.FetchOption) {
	switch q.Kind {
	case qKey:
		return nil, []krt.FetchOption{krt.FilterKey(q.Key)}
	case qKeys:
		return nil, []krt.FetchOption{krt.FilterKeys(q.Key, q.Key2)}
	case qNamespace:
		return nil, []krt.FetchOption{krt.FilterNamespace(q.Namespace)}
	case qIndex:
		return byNamespace, nil
	case qLabel:
		return nil, []krt.FetchOption{krt.FilterLabel(q.Labels)}
	case qSelects:
		return nil, []krt.FetchOption{krt.FilterSelects(q.Labels)}
	case qSelectsNonEmpty:
		return nil, []krt.FetchOption{krt.FilterSelectsNonEmpty(q.Labels)}
	case qGeneric:
		return nil, []krt.FetchOption{krt.FilterGeneric(func(o any) bool {
			l := o.(labelled)
			return len(l.Labels) == len(l.Selector)
		})}
	case qIndexAndSelects:
		return byNamespace, []krt.FetchOption{krt.FilterSelectsNonEmpty(q.Labels)}
	}
	return nil, nil
}

// query is an input: which filter to fetch with.
type query struct {
	krt.Named
	Filter fuzzFilter
}

func (q query) Equals(o query) bool {
	return q.Named == o.Named && q.Filter.Kind == o.Filter.Kind && q.Filter.Key == o.Filter.Key &&
		q.Filter.Key2 == o.Filter.Key2 && q.Filter.Namespace == o.Filter.Namespace && maps.Equal(q.Filter.Labels, o.Filter.Labels)
}

// answer is what an input saw: the fetched objects and their versions.
type answer struct {
	krt.Named
	Seen string
}

func describe(objs []labelled) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = fmt.Sprintf("%s/%s@%s", o.Namespace, o.Name, o.Labels["v"])
	}
	return strings.Join(parts, ",")
}

func runReverseIndexProgram(t *testing.T, r *byteReader) {
	stop := make(chan struct{})
	defer close(stop)
	version := 0
	newObject := func(key string) labelled {
		version++
		ns, name, _ := strings.Cut(key, "/")
		labels := r.labels()
		labels["v"] = fmt.Sprint(version) // every write is visible in answers
		return labelled{Named: krt.Named{Namespace: ns, Name: name}, Labels: labels, Selector: r.labels()}
	}
	var objs []labelled
	for i := range fuzzObjects {
		if r.next(4) > 0 {
			objs = append(objs, newObject(fmt.Sprintf("ns-%d/obj-%d", i%2, i)))
		}
	}
	fetched := krt.NewStaticCollection(nil, objs, krt.WithStop(stop), krt.WithName("fetched"))
	byNamespace := krt.NewNamespaceIndex[labelled](fetched)
	var queries []query
	for i := range fuzzInputs {
		queries = append(queries, query{Named: krt.Named{Namespace: "q", Name: fmt.Sprint(i)}, Filter: r.filter()})
	}
	inputs := krt.NewStaticCollection(nil, queries, krt.WithStop(stop), krt.WithName("queries"))
	answers := krt.NewCollection(inputs, func(ctx krt.HandlerContext, q query) *answer {
		idx, opts := q.Filter.options(byNamespace)
		var got []labelled
		if idx != nil {
			got = idx.Fetch(ctx, q.Filter.Namespace, opts...)
		} else {
			got = krt.Fetch(ctx, krt.Collection[labelled](fetched), opts...)
		}
		return &answer{Named: q.Named, Seen: describe(got)}
	}, krt.WithStop(stop), krt.WithName("answers"))
	answers.WaitUntilSynced(stop)

	var log []string
	for step := 0; !r.done() && step < 64; step++ {
		switch r.next(4) {
		case 0, 1:
			o := newObject(r.objectKey())
			log = append(log, fmt.Sprintf("update %s/%s labels=%v selector=%v", o.Namespace, o.Name, o.Labels, o.Selector))
			fetched.UpdateObject(o)
		case 2:
			key := r.objectKey()
			log = append(log, "delete "+key)
			fetched.DeleteObject(key)
		case 3:
			q := query{Named: krt.Named{Namespace: "q", Name: fmt.Sprint(r.next(fuzzInputs))}, Filter: r.filter()}
			log = append(log, fmt.Sprintf("query %s = %+v", q.Name, q.Filter))
			inputs.UpdateObject(q)
		}
	}

	// The writes are over: every answer must converge to the reference. An
	// event the reverse index missed would leave an answer stale forever.
	current := fetched.List()
	slices.SortFunc(current, func(a, b labelled) int { return strings.Compare(a.ResourceName(), b.ResourceName()) })
	expected := map[string]string{}
	for _, q := range inputs.List() {
		var want []labelled
		for _, o := range current {
			if q.Filter.matches(o) {
				want = append(want, o)
			}
		}
		expected[q.ResourceName()] = describe(want)
	}
	stale := func() []string {
		var out []string
		for key, want := range expected {
			if got := answers.GetKey(key); got == nil || got.Seen != want {
				out = append(out, fmt.Sprintf("%s: got %v, want %q (filter %+v)", key, got, want, inputs.GetKey(key).Filter))
			}
		}
		return out
	}
	if !krttest.Eventually(answers, func() bool { return len(stale()) == 0 }) {
		t.Fatalf("answers never converged:\n  %s\nsteps:\n  %s", strings.Join(stale(), "\n  "), strings.Join(log, "\n  "))
	}
}
