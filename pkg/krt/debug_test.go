package krt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/itchyny/gojq"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/files"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
	"github.com/meshcp/meshcp/pkg/kube/kubefake"
	"github.com/meshcp/meshcp/pkg/logging"
)

// debugGraph is a small graph registered with a DebugHandler: pods and
// services, workloads that fetch services, a join, an index view and a
// status collection, plus a collection named like the seed's gateway chain.
type debugGraph struct {
	debug    *krt.DebugHandler
	pods     krt.StaticCollection[pod]
	services krt.StaticCollection[service]
	server   *httptest.Server
	logs     *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of loggers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newDebugGraph(t *testing.T) *debugGraph {
	t.Setenv("KRT_LOG_LEVEL", "debug")
	stop := krttest.Stop(t)
	g := &debugGraph{debug: krt.NewDebugHandler(), logs: &syncBuffer{}}
	levels, err := logging.ParseLevels("")
	if err != nil {
		t.Fatal(err)
	}
	logger := levels.Logger(slog.NewTextHandler(g.logs, nil), "krt")
	opts := func(name string) []krt.CollectionOption {
		return []krt.CollectionOption{krt.WithStop(stop), krt.WithName(name), krt.WithDebugging(g.debug), krt.WithLogger(logger)}
	}
	g.pods = krt.NewStaticCollection(nil, []pod{
		{Named: krt.Named{Namespace: "ns", Name: "web-1"}, Labels: map[string]string{"app": "web"}, IP: "10.0.0.1"},
		{Named: krt.Named{Namespace: "ns", Name: "db-1"}, Labels: map[string]string{"app": "db"}, IP: "10.0.0.2"},
	}, opts("Pods")...)
	g.services = krt.NewStaticCollection(nil, []service{
		{Named: krt.Named{Namespace: "ns", Name: "web"}, Selector: map[string]string{"app": "web"}},
	}, opts("Services")...)
	byNamespace := krt.NewNamespaceIndex[service](g.services)
	workloads := krt.NewCollection[pod, workload](g.pods, func(ctx krt.HandlerContext, p pod) *workload {
		var names []string
		for _, s := range byNamespace.Fetch(ctx, p.Namespace, krt.FilterSelectsNonEmpty(p.Labels)) {
			names = append(names, s.Name)
		}
		return &workload{Named: p.Named, IP: p.IP, Services: names}
	}, opts("Workloads")...)
	krt.JoinCollection([]krt.Collection[workload]{workloads}, opts("gateway/Joined")...)
	krt.NewNamespaceIndex(workloads).AsCollection(opts("gateway/WorkloadsByNamespace")...)
	krt.NewStatusCollection[pod, string, workload](g.pods, func(ctx krt.HandlerContext, p pod) (*string, *workload) {
		s := "seen"
		return &s, &workload{Named: p.Named}
	}, opts("gateway/GatewayConfigs")...)
	krt.NewStaticCollection(nil, []unrenderable{{Named: krt.Named{Name: "bad"}}, {Named: krt.Named{Name: "good"}, ok: true}},
		append(opts("Unrenderable"), krt.WithDebugErrors(func() map[string]string {
			return map[string]string{"/etc/config/broken.yaml": "line 3: mapping values are not allowed here"}
		}))...)
	if !workloads.WaitUntilSynced(stop) {
		t.Fatal("never synced")
	}
	// Status collections sync on their own goroutine, after their outputs.
	for deadline := time.Now().Add(krttest.Timeout); !allSynced(g.debug); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the debug graph never synced")
		}
	}
	g.server = httptest.NewServer(g.debug)
	t.Cleanup(g.server.Close)
	return g
}

func allSynced(d *krt.DebugHandler) bool {
	for _, c := range d.Collections() {
		if !c.State.Synced {
			return false
		}
	}
	return true
}

// unrenderable cannot be turned into JSON unless ok.
type unrenderable struct {
	krt.Named
	ok bool
}

func (u unrenderable) MarshalJSON() ([]byte, error) {
	if !u.ok {
		return nil, errors.New("no JSON for you")
	}
	return []byte(`{"fine":true}`), nil
}

func (g *debugGraph) get(t *testing.T, query string) string {
	t.Helper()
	resp, err := http.Get(g.server.URL + "/debug/krtz" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", query, resp.Status, body)
	}
	return string(body)
}

// jq runs a jq program over a /debug/krtz answer, as the seed's recipes do
// with the jq command.
func jq(t *testing.T, program, input string) []string {
	t.Helper()
	q, err := gojq.Parse(program)
	if err != nil {
		t.Fatalf("jq %q: %v", program, err)
	}
	var doc any
	if err := json.Unmarshal([]byte(input), &doc); err != nil {
		t.Fatalf("the dump is not JSON: %v", err)
	}
	var out []string
	iter := q.Run(doc)
	for {
		v, ok := iter.Next()
		if !ok {
			return out
		}
		if err, isErr := v.(error); isErr {
			t.Fatalf("jq %q: %v", program, err)
		}
		out = append(out, fmt.Sprint(v))
	}
}

// The JSON of /debug/krtz, field by field.
func TestDebugDumpJSON(t *testing.T) {
	g := newDebugGraph(t)
	var dump []struct {
		UID   uint64 `json:"uid"`
		Name  string `json:"name"`
		State struct {
			Outputs map[string]json.RawMessage `json:"outputs"`
			Inputs  map[string]struct {
				Outputs      []string `json:"outputs"`
				Dependencies []string `json:"dependencies"`
			} `json:"inputs"`
			Errors map[string]string `json:"errors"`
			Synced bool              `json:"synced"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(g.get(t, "")), &dump); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, c := range dump {
		names = append(names, c.Name)
		if i > 0 && c.UID <= dump[i-1].UID {
			t.Errorf("uids not increasing: %d after %d", c.UID, dump[i-1].UID)
		}
		if !c.State.Synced {
			t.Errorf("%s: synced = false", c.Name)
		}
	}
	want := []string{"Pods", "Services", "Workloads", "gateway/Joined", "gateway/WorkloadsByNamespace",
		"gateway/GatewayConfigs/status", "gateway/GatewayConfigs", "Unrenderable"}
	if !slices.Equal(names, want) {
		t.Fatalf("collections = %v, want %v", names, want)
	}
	workloads := dump[2]
	var w struct {
		IP       string
		Services []string
	}
	if err := json.Unmarshal(workloads.State.Outputs["ns/web-1"], &w); err != nil || w.IP != "10.0.0.1" || !slices.Equal(w.Services, []string{"web"}) {
		t.Errorf("Workloads output ns/web-1 = %s (%v)", workloads.State.Outputs["ns/web-1"], err)
	}
	in := workloads.State.Inputs["ns/web-1"]
	if !slices.Equal(in.Outputs, []string{"ns/web-1"}) {
		t.Errorf("input ns/web-1 outputs = %v", in.Outputs)
	}
	if !slices.Equal(in.Dependencies, []string{"Services FilterIndex(namespace=ns) FilterSelectsNonEmpty(app=web)"}) {
		t.Errorf("input ns/web-1 dependencies = %q", in.Dependencies)
	}
	if len(dump[0].State.Inputs) != 0 {
		t.Errorf("a static collection shows inputs: %v", dump[0].State.Inputs)
	}
	bad := dump[7].State
	if got := string(bad.Outputs["bad"]); !strings.Contains(got, "error: cannot render") || !strings.Contains(got, "no JSON for you") {
		t.Errorf("unrenderable object = %s, want an error string in its place", got)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, bad.Outputs["good"]); err != nil || compact.String() != `{"fine":true}` {
		t.Errorf("the renderable neighbour = %s", bad.Outputs["good"])
	}
	if got := bad.Errors["/etc/config/broken.yaml"]; !strings.HasPrefix(got, "line 3") {
		t.Errorf("errors = %v", bad.Errors)
	}
}

// The seed's recipes, run verbatim.
func TestDebugDumpSeedRecipes(t *testing.T) {
	g := newDebugGraph(t)
	dump := g.get(t, "")
	names := jq(t, `.[].name`, dump)
	if len(names) != 8 || names[0] != "Pods" {
		t.Errorf(".[].name = %v", names)
	}
	deps := jq(t, `.[] | select(.name=="Workloads") | .state.inputs | to_entries[0].value.dependencies[]`, dump)
	if !slices.Equal(deps, []string{"Services FilterIndex(namespace=ns) FilterSelectsNonEmpty(app=db)"}) {
		t.Errorf("dependencies recipe = %q", deps)
	}
	chain := jq(t, `.[] | select(.name|startswith("gateway/")) | "\(.uid)\t\(.name)\tsynced=\(.state.synced)\toutputs=\(.state.outputs|length)"`, dump)
	want := []string{"4\tgateway/Joined\tsynced=true\toutputs=2", "5\tgateway/WorkloadsByNamespace\tsynced=true\toutputs=1",
		"6\tgateway/GatewayConfigs/status\tsynced=true\toutputs=2", "7\tgateway/GatewayConfigs\tsynced=true\toutputs=2"}
	if !slices.Equal(chain, want) {
		t.Errorf("gateway chain recipe = %q, want %q", chain, want)
	}
}

func TestDebugDumpFilters(t *testing.T) {
	g := newDebugGraph(t)
	for _, tc := range []struct {
		query, program string
		want           []string
	}{
		{"?collection=Workloads", `.[].name`, []string{"Workloads"}},
		{"?collection=gateway/GatewayConfigs", `.[].name`, []string{"gateway/GatewayConfigs"}},
		{"?collection=gateway/", `.[].name`, []string{"gateway/Joined", "gateway/WorkloadsByNamespace", "gateway/GatewayConfigs/status", "gateway/GatewayConfigs"}},
		{"?collection=nothing", `length`, []string{"0"}},
		{"?collection=Workloads&key=ns/db-1", `.[0].state | [(.outputs|keys[]), (.inputs|keys[])] | join(",")`, []string{"ns/db-1,ns/db-1"}},
	} {
		if got := jq(t, tc.program, g.get(t, tc.query)); !slices.Equal(got, tc.want) {
			t.Errorf("%s | %s = %q, want %q", tc.query, tc.program, got, tc.want)
		}
	}
	resp, err := http.Get(g.server.URL + "/debug/krtz?format=yaml")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown format answers %s, want 400", resp.Status)
	}
}

func TestDebugGraphFormats(t *testing.T) {
	g := newDebugGraph(t)
	dot := g.get(t, "?format=dot")
	for _, want := range []string{
		"digraph krt {",
		`c3 [label="Workloads\n2 objects, synced", color=black];`,
		`c1 -> c3 [style=solid, label="input"];`,
		`c2 -> c3 [style=dashed, label="fetch"];`,
		`c3 -> c4 [style=solid, label="input"];`,
		`c7 -> c6 [style=dotted, label="status"];`,
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("dot output lacks %q:\n%s", want, dot)
		}
	}
	mermaid := g.get(t, "?format=mermaid&collection=Workloads")
	for _, want := range []string{"flowchart LR", `c3["Workloads<br/>2 objects, synced"]`} {
		if !strings.Contains(mermaid, want) {
			t.Errorf("mermaid output lacks %q:\n%s", want, mermaid)
		}
	}
	if strings.Contains(mermaid, "c1") {
		t.Errorf("the collection filter let other nodes in:\n%s", mermaid)
	}
	full := g.get(t, "?format=mermaid")
	if !strings.Contains(full, "c2 -.->|fetch| c3") {
		t.Errorf("mermaid output lacks the fetch edge:\n%s", full)
	}
}

func TestDebugMetrics(t *testing.T) {
	g := newDebugGraph(t)
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(g.debug); err != nil {
		t.Fatal(err)
	}
	// A selector change recomputes the two pods whose labels the old or the
	// new selector matches: 2 initial runs + 2.
	svc := *g.services.GetKey("ns/web")
	svc.Selector = map[string]string{"app": "db"}
	g.services.UpdateObject(svc)
	deadline := time.Now().Add(krttest.Timeout)
	for metricValue(t, reg, "krt_collection_recomputations_total", "Workloads") != 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"krt_collection_recomputations_total", 4},
		{"krt_collection_objects", 2},
		{"krt_collection_panics_total", 0},
		{"krt_collection_purity_violations_total", 0},
		{"krt_collection_queue_depth", 0},
		{"krt_collection_events_out_total", 4}, // 2 adds, 2 updates
	} {
		if got := metricValue(t, reg, tc.name, "Workloads"); got != tc.want {
			t.Errorf("%s{collection=Workloads} = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := metricValue(t, reg, "krt_collection_sync_seconds", "Workloads"); got <= 0 {
		t.Errorf("krt_collection_sync_seconds = %v, want the time it took", got)
	}
	if got := metricValue(t, reg, "krt_collection_dependency_impact", "Workloads"); got != 2 {
		t.Errorf("impact histogram sum = %v, want 2 inputs for the one service change", got)
	}
	// Events in: the two pods, then one service change.
	if got := metricValue(t, reg, "krt_collection_events_in_total", "Workloads"); got != 3 {
		t.Errorf("krt_collection_events_in_total = %v, want 3", got)
	}
}

// metricValue gathers reg and returns the value of metric name for one
// collection: a counter or gauge value, or a histogram's sum.
func metricValue(t *testing.T, reg prometheus.Gatherer, name, collection string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "collection" && l.GetValue() == collection {
					total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return total
}

// With KRT_LOG_LEVEL=debug, krt logs each collection's sync with its uid and
// the impact of every change of a fetched collection.
func TestDebugLogLines(t *testing.T) {
	g := newDebugGraph(t)
	svc := *g.services.GetKey("ns/web")
	svc.Selector = map[string]string{"app": "db"}
	g.services.UpdateObject(svc)
	deadline := time.Now().Add(krttest.Timeout)
	for time.Now().Before(deadline) && !strings.Contains(g.logs.String(), "event size 1, impacts 2 objects") {
		time.Sleep(time.Millisecond)
	}
	logs := g.logs.String()
	for _, want := range []string{"Workloads synced (uid 3)", "event size 1, impacts 2 objects", "scope=krt", "collection=Workloads"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// Building and stopping a thousand collections of every kind leaves no
// goroutine and no debug entry behind.
func TestNoLeaksAcrossManyCollections(t *testing.T) {
	debug := krt.NewDebugHandler()
	client := kubefake.NewClient(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("ns/a"), 0o644); err != nil {
		t.Fatal(err)
	}
	baseline := runtime.NumGoroutine()
	stop := make(chan struct{})
	opts := func() []krt.CollectionOption {
		return []krt.CollectionOption{krt.WithStop(stop), krt.WithDebugging(debug)}
	}
	built := 0
	// Sources outside the core: informers (each its own filter, so each its
	// own informer) and watched folders (few: each holds an inotify
	// instance, and the kernel allows 128 by default).
	for i := range 20 {
		if _, err := kube.NewCollection[*corev1.ConfigMap](client.Client, kube.Filter{LabelSelector: fmt.Sprintf("n!=%d", i)}, stop,
			krt.WithDebugging(debug)); err != nil {
			t.Fatal(err)
		}
		if _, err := files.NewFolderCollection(dir, func(path string, data []byte) ([]string, error) {
			return []string{string(data)}, nil
		}, stop, krt.WithDebugging(debug)); err != nil {
			t.Fatal(err)
		}
		built += 2
	}
	for i := 0; built < 1000; i++ {
		src := krt.NewStaticCollection(nil, []versioned{{Named: krt.Named{Namespace: "ns", Name: fmt.Sprint(i)}}}, opts()...)
		derivedC := krt.NewCollection[versioned, versioned](src, func(ctx krt.HandlerContext, v versioned) *versioned { return &v }, opts()...)
		many := krt.NewManyCollection[versioned, versioned](src, func(ctx krt.HandlerContext, v versioned) []versioned { return []versioned{v} }, opts()...)
		join := krt.JoinCollection([]krt.Collection[versioned]{derivedC, many}, opts()...)
		view := krt.NewNamespaceIndex(join).AsCollection(opts()...)
		statuses, _ := krt.NewStatusCollection[versioned, string, versioned](src, func(ctx krt.HandlerContext, v versioned) (*string, *versioned) {
			s := "ok"
			return &s, &v
		}, opts()...)
		single := krt.NewSingleton(func(ctx krt.HandlerContext) *int {
			n := len(krt.Fetch(ctx, join))
			return &n
		}, opts()...)
		static := krt.NewStatic(&versioned{Named: krt.Named{Name: "s"}}, true, opts()...)
		trigger := krt.NewRecomputeTrigger(true, opts()...)
		src.Register(func(krt.Event[versioned]) {})
		view.Register(func(krt.Event[krt.IndexObject[string, versioned]]) {})
		_, _, _, _ = statuses, single, static, trigger
		built += 11 // src, derived, many, join, view, status+outputs, singleton, static, trigger
	}
	if got := len(debug.Collections()); got < 900 {
		t.Fatalf("%d collections registered", got)
	}
	close(stop)
	deadline := time.Now().Add(krttest.Timeout)
	for time.Now().Before(deadline) && (runtime.NumGoroutine() > baseline || len(debug.Collections()) > 0) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		t.Errorf("%d goroutines after stop, baseline %d", n, baseline)
	}
	if n := len(debug.Collections()); n > 0 {
		t.Errorf("%d debug entries after stop", n)
	}
}

func TestUnsynced(t *testing.T) {
	stop := krttest.Stop(t)
	debug := krt.NewDebugHandler()
	gate := krttest.NewSyncGate()
	src := krt.NewStaticCollection[versioned](gate, nil, krt.WithStop(stop), krt.WithName("gated"), krt.WithDebugging(debug))
	derivedC := krt.NewCollection(src, func(ctx krt.HandlerContext, v versioned) *versioned { return &v },
		krt.WithStop(stop), krt.WithName("derived"), krt.WithDebugging(debug))
	if got := debug.Unsynced(); !slices.Equal(got, []string{"gated", "derived"}) {
		t.Fatalf("Unsynced = %v", got)
	}
	gate.MarkSynced()
	derivedC.WaitUntilSynced(stop)
	if got := debug.Unsynced(); len(got) != 0 {
		t.Fatalf("Unsynced after sync = %v", got)
	}
}
