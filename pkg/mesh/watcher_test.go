package mesh_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/mesh"
)

const (
	goodA = "trustDomain: a.local\ndefaultConfig:\n  proxyAdminPort: 15001\n"
	goodB = "trustDomain: b.local\n"
	// bad has a type error at defaultConfig.proxyAdminPort.
	bad = "trustDomain: c.local\ndefaultConfig:\n  proxyAdminPort: not-a-port\n"
)

// fixture is a Watcher on a file in a temporary directory, with its
// metrics registry.
type fixture struct {
	t    *testing.T
	stop chan struct{}
	dir  string
	path string
	reg  *prometheus.Registry
	w    *mesh.Watcher
}

// start writes content to the mesh file, unless content is nil, and starts
// a Watcher on it.
func start(t *testing.T, content *string) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, stop: krttest.Stop(t), dir: dir, path: filepath.Join(dir, "mesh"), reg: prometheus.NewPedanticRegistry()}
	if content != nil {
		f.write(*content)
	}
	f.w = f.newWatcher(f.path)
	return f
}

func (f *fixture) newWatcher(path string) *mesh.Watcher {
	f.t.Helper()
	w, err := mesh.NewWatcher(path, f.stop, mesh.Options{
		Registerer: f.reg,
		Logger:     krttest.Logger(f.t),
		Debounce:   10 * time.Millisecond,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	if !w.AsCollection().HasSynced() || w.Get() == nil {
		f.t.Fatal("watcher not synced, or without a value, after NewWatcher")
	}
	return w
}

// write replaces the file as careful writers do: a new file renamed over
// the old one, so no read sees it half-written.
func (f *fixture) write(content string) {
	f.t.Helper()
	tmp := filepath.Join(f.dir, ".mesh.tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		f.t.Fatal(err)
	}
}

// waitForMesh waits until the config in force satisfies cond.
func (f *fixture) waitForMesh(cond func(m *mesh.MeshConfigResource) bool) {
	f.t.Helper()
	krttest.WaitFor(f.t, f.w.AsCollection(), func() bool {
		m := f.w.Get()
		return m != nil && cond(m)
	})
}

// waitForStatus polls the Watcher's status until cond holds: rejections
// produce no krt event to wait on.
func (f *fixture) waitForStatus(cond func(s mesh.Status) bool) mesh.Status {
	f.t.Helper()
	deadline := time.Now().Add(krttest.Timeout)
	for {
		s := f.w.Status()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for the status; last: %+v", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// metric returns the value of a gauge or counter of the registry.
func (f *fixture) metric(name string) float64 {
	f.t.Helper()
	families, err := f.reg.Gather()
	if err != nil {
		f.t.Fatalf("gathering metrics: %v", err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		m := mf.GetMetric()[0]
		if g := m.GetGauge(); g != nil {
			return g.GetValue()
		}
		return m.GetCounter().GetValue()
	}
	f.t.Fatalf("metric %s not registered", name)
	return 0
}

func (f *fixture) assertMetrics(valid, rejected float64) {
	f.t.Helper()
	if got := f.metric("meshcp_mesh_config_valid"); got != valid {
		f.t.Errorf("meshcp_mesh_config_valid = %v, want %v", got, valid)
	}
	if got := f.metric("meshcp_mesh_config_rejected_loads_total"); got != rejected {
		f.t.Errorf("meshcp_mesh_config_rejected_loads_total = %v, want %v", got, rejected)
	}
}

func trustDomainIs(td string) func(*mesh.MeshConfigResource) bool {
	return func(m *mesh.MeshConfigResource) bool { return m.GetTrustDomain() == td }
}

func isDefault(m *mesh.MeshConfigResource) bool { return proto.Equal(m.MeshConfig, mesh.Default()) }

func ptr(s string) *string { return &s }

// trustDomain is what the test's derived collection computes from the
// mesh config.
type trustDomain struct{ Value string }

func (trustDomain) ResourceName() string { return "trustDomain" }

// deriveTrustDomain builds a krt singleton reading the watcher as every
// consumer does, with FetchOne.
func deriveTrustDomain(f *fixture) (krt.Singleton[trustDomain], *krttest.Tracker[trustDomain]) {
	d := krt.NewSingleton(func(ctx krt.HandlerContext) *trustDomain {
		m := krt.FetchOne(ctx, f.w.AsCollection())
		return &trustDomain{Value: m.GetTrustDomain()}
	}, krt.WithStop(f.stop), krt.WithName("test/TrustDomain"))
	tr := krttest.NewTracker[trustDomain](f.t)
	d.Register(tr.Track)
	return d, tr
}

func TestWatcherStartsOnDefaultsWithoutAFile(t *testing.T) {
	f := start(t, nil)
	if !isDefault(f.w.Get()) {
		t.Fatalf("config = %v, want the defaults", f.w.Get())
	}
	s := f.w.Status()
	if s.Source != "defaults" || !s.Valid || !strings.Contains(s.Reason, "does not exist") || s.LastError != nil || s.LoadedAt != nil {
		t.Fatalf("status = %+v", s)
	}
	f.assertMetrics(1, 0)

	// The file appears: it is picked up.
	f.write(goodB)
	f.waitForMesh(trustDomainIs("b.local"))
	if s := f.w.Status(); s.Source != "file" || !s.Valid || s.LoadedAt == nil {
		t.Fatalf("status = %+v", s)
	}
}

func TestWatcherStartsOnDefaultsWithAnEmptyFile(t *testing.T) {
	f := start(t, ptr(""))
	if !isDefault(f.w.Get()) {
		t.Fatalf("config = %v, want the defaults", f.w.Get())
	}
	if s := f.w.Status(); s.Source != "defaults" || !s.Valid || !strings.Contains(s.Reason, "empty") {
		t.Fatalf("status = %+v", s)
	}
	f.assertMetrics(1, 0)
}

func TestWatcherStartsOnDefaultsWithABadFile(t *testing.T) {
	f := start(t, ptr(bad))
	if !isDefault(f.w.Get()) {
		t.Fatalf("config = %v, want the defaults", f.w.Get())
	}
	s := f.w.Status()
	if s.Source != "defaults" || s.Valid || s.LastError == nil {
		t.Fatalf("status = %+v", s)
	}
	assertFinding(t, s.LastError.Errors, "defaultConfig.proxyAdminPort", "want an integer")
	if !strings.Contains(s.LastError.Message, "defaultConfig.proxyAdminPort") {
		t.Errorf("last error %q does not name the field", s.LastError.Message)
	}
	f.assertMetrics(0, 1)

	// Fixing the file applies it and clears the gauge; the last error stays
	// for the record.
	f.write(goodB)
	f.waitForMesh(trustDomainIs("b.local"))
	s = f.waitForStatus(func(s mesh.Status) bool { return s.Valid })
	if s.Source != "file" || s.LastError == nil {
		t.Fatalf("status = %+v", s)
	}
	f.assertMetrics(1, 1)
}

func TestWatcherGoodChangeRecomputesDerivedCollections(t *testing.T) {
	f := start(t, ptr(goodA))
	if got := f.w.Get(); got.GetTrustDomain() != "a.local" || got.GetDefaultConfig().GetProxyAdminPort() != 15001 ||
		got.GetDefaultConfig().GetStatusPort() != 15020 {
		t.Fatalf("config = %v, want the file over the defaults", got)
	}
	derived, events := deriveTrustDomain(f)
	events.WaitOrdered("add/trustDomain")

	f.write(goodB)
	krttest.WaitFor(t, derived.AsCollection(), func() bool { return derived.Get() != nil && derived.Get().Value == "b.local" })
	events.WaitOrdered("update/trustDomain")

	// The same effective config written differently is read, and changes
	// nothing downstream.
	before := f.w.Status().CheckedAt
	f.write("# reformatted\ntrustDomain: \"b.local\"\n")
	f.waitForStatus(func(s mesh.Status) bool { return s.CheckedAt != nil && !s.CheckedAt.Equal(*before) })
	f.write(goodA) // a change after it, to know the reformatting went through
	krttest.WaitFor(t, derived.AsCollection(), func() bool { return derived.Get().Value == "a.local" })
	events.WaitOrdered("update/trustDomain")
	events.Empty()
	f.assertMetrics(1, 0)
}

func TestWatcherBadChangeKeepsTheLastGoodConfig(t *testing.T) {
	f := start(t, ptr(goodA))
	derived, events := deriveTrustDomain(f)
	events.WaitOrdered("add/trustDomain")
	good := f.w.Get()

	f.write(bad)
	s := f.waitForStatus(func(s mesh.Status) bool { return !s.Valid })
	if got := f.w.Get(); !proto.Equal(got.MeshConfig, good.MeshConfig) {
		t.Fatalf("config = %v, want the last good one", got)
	}
	if s.Source != "file" || !strings.Contains(s.Reason, "last good") || s.LastError == nil {
		t.Fatalf("status = %+v", s)
	}
	assertFinding(t, s.LastError.Errors, "defaultConfig.proxyAdminPort", "want an integer")
	f.assertMetrics(0, 1)
	if derived.Get().Value != "a.local" {
		t.Fatalf("derived = %v", derived.Get())
	}

	// Fixed again: applied, the gauge back to 1.
	f.write(goodB)
	f.waitForMesh(trustDomainIs("b.local"))
	events.WaitOrdered("update/trustDomain") // one update: nothing came of the bad file
	f.waitForStatus(func(s mesh.Status) bool { return s.Valid })
	f.assertMetrics(1, 1)
}

func TestWatcherFileRemovedBringsTheDefaultsBack(t *testing.T) {
	f := start(t, ptr(goodA))
	if err := os.Remove(f.path); err != nil {
		t.Fatal(err)
	}
	f.waitForMesh(isDefault)
	s := f.waitForStatus(func(s mesh.Status) bool { return s.Source == "defaults" && s.LoadedAt == nil })
	if !s.Valid || !strings.Contains(s.Reason, "does not exist") {
		t.Fatalf("status = %+v", s)
	}
}

// TestWatcherFollowsAConfigMapSwap lays the file out as the kubelet mounts
// a ConfigMap and updates it the way the kubelet does.
func TestWatcherFollowsAConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	writeVersion := func(name, content string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "mesh"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeVersion("..2024_05_01_10_00_00.000000001", goodA)
	mustSymlink(t, "..2024_05_01_10_00_00.000000001", filepath.Join(dir, "..data"))
	mustSymlink(t, "..data/mesh", filepath.Join(dir, "mesh"))

	f := &fixture{t: t, stop: krttest.Stop(t), dir: dir, path: filepath.Join(dir, "mesh"), reg: prometheus.NewPedanticRegistry()}
	f.w = f.newWatcher(f.path)
	if f.w.Get().GetTrustDomain() != "a.local" {
		t.Fatalf("config = %v, want the ConfigMap's", f.w.Get())
	}

	// The kubelet's update: a new directory, a new link renamed over
	// ..data, the old directory removed.
	writeVersion("..2024_05_01_10_05_00.000000002", goodB)
	mustSymlink(t, "..2024_05_01_10_05_00.000000002", filepath.Join(dir, "..data_tmp"))
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2024_05_01_10_00_00.000000001")); err != nil {
		t.Fatal(err)
	}
	f.waitForMesh(trustDomainIs("b.local"))
	f.assertMetrics(1, 0)
}

func TestWatcherMetricsAreRegisteredOnTheGivenRegistry(t *testing.T) {
	f := start(t, ptr(goodA))
	f.assertMetrics(1, 0)
	if got := f.metric("meshcp_mesh_config_last_load_success_timestamp_seconds"); got < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("last load timestamp = %v", got)
	}
	// One Watcher per registry: a second one cannot register.
	if _, err := mesh.NewWatcher(filepath.Join(f.dir, "other"), f.stop, mesh.Options{Registerer: f.reg}); err == nil ||
		!strings.Contains(err.Error(), "registering mesh config metrics") {
		t.Fatalf("second watcher on one registry: err = %v", err)
	}
	// The registry still gathers cleanly (the pedantic registry checks).
	f.assertMetrics(1, 0)
}

func TestNewWatcherErrors(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if _, err := mesh.NewWatcher(filepath.Join(t.TempDir(), "missing-dir", "mesh"), krttest.Stop(t), mesh.Options{Registerer: reg}); err == nil {
		t.Error("a missing directory: want an error")
	}
	// The failed Watcher left the registry free for the next one.
	if _, err := mesh.NewWatcher(filepath.Join(t.TempDir(), "mesh"), krttest.Stop(t), mesh.Options{Registerer: reg}); err != nil {
		t.Errorf("a watcher after a failed one: %v", err)
	}
	if _, err := mesh.NewWatcher(filepath.Join(t.TempDir(), "mesh"), nil, mesh.Options{}); err == nil {
		t.Error("no stop channel: want an error")
	}
}

func TestDebugHandlerShowsTheState(t *testing.T) {
	f := start(t, ptr(goodA))
	f.write(bad)
	f.waitForStatus(func(s mesh.Status) bool { return !s.Valid })

	rec := httptest.NewRecorder()
	f.w.DebugHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/mesh", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var got struct {
		Path      string `json:"path"`
		Source    string `json:"source"`
		Valid     bool   `json:"valid"`
		LoadedAt  string `json:"loadedAt"`
		LastError struct {
			Message string `json:"message"`
			Errors  []struct {
				Path string `json:"path"`
			} `json:"errors"`
		} `json:"lastError"`
		MeshConfig struct {
			TrustDomain   string `json:"trustDomain"`
			DefaultConfig struct {
				ProxyAdminPort int `json:"proxyAdminPort"`
			} `json:"defaultConfig"`
		} `json:"meshConfig"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, rec.Body)
	}
	if got.Path != f.path || got.Source != "file" || got.Valid || got.LoadedAt == "" ||
		len(got.LastError.Errors) == 0 || got.LastError.Errors[0].Path != "defaultConfig.proxyAdminPort" ||
		got.MeshConfig.TrustDomain != "a.local" || got.MeshConfig.DefaultConfig.ProxyAdminPort != 15001 {
		t.Fatalf("/debug/mesh = %s", rec.Body)
	}

	rec = httptest.NewRecorder()
	f.w.DebugHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/debug/mesh", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
