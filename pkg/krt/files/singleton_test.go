package files_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/files"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// singletonFixture is a watched file with a tracker registered on it.
type singletonFixture struct {
	t      *testing.T
	path   string
	s      krt.Singleton[item]
	probe  *files.Probe
	parser *parser
	events *krttest.Tracker[item]
}

// startSingleton watches path, laid out beforehand by setup if given.
func startSingleton(t *testing.T, path string, setup func()) *singletonFixture {
	t.Helper()
	if setup != nil {
		setup()
	}
	p := newParser()
	s, probe, err := files.NewFileSingletonProbed(path, p.single, krttest.Stop(t), options(t))
	if err != nil {
		t.Fatal(err)
	}
	if !s.AsCollection().HasSynced() {
		t.Fatal("file singleton not synced after construction")
	}
	f := &singletonFixture{t: t, path: path, s: s, probe: probe, parser: p, events: krttest.NewTracker[item](t)}
	s.Register(f.events.Track)
	return f
}

// value returns the singleton's value, or "<none>".
func (f *singletonFixture) value() string {
	if v := f.s.Get(); v != nil {
		return v.Value
	}
	return "<none>"
}

func (f *singletonFixture) assertValue(want string) {
	f.t.Helper()
	if got := f.value(); got != want {
		f.t.Fatalf("value = %q, want %q", got, want)
	}
}

// settle waits until the file has been read after whatever the test just
// did. A read that starts once the change is made sees it, and every read
// has completed by the time the next one does, so two reads are enough.
func (f *singletonFixture) settle() {
	f.t.Helper()
	for range 2 {
		next := f.probe.NextRead()
		// Something must happen in the directory for a read to follow.
		mustWrite(f.t, filepath.Join(filepath.Dir(f.path), ".poke"), time.Now().String())
		waitForRead(f.t, next)
	}
}

func TestFileSingletonPicksUpEveryWayOfWritingTheFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir, path string) (update func(content string))
	}{
		{"in place", func(t *testing.T, _, path string) func(string) {
			mustWrite(t, path, itemJSON("ns/config", "1"))
			return func(c string) { mustWrite(t, path, c) }
		}},
		{"atomic rename", func(t *testing.T, _, path string) func(string) {
			mustWrite(t, path, itemJSON("ns/config", "1"))
			return func(c string) { mustWriteAtomic(t, path, c) }
		}},
		{"removed and created again", func(t *testing.T, _, path string) func(string) {
			mustWrite(t, path, itemJSON("ns/config", "1"))
			return func(c string) {
				mustRemove(t, path)
				mustWrite(t, path, c)
			}
		}},
		{"ConfigMap swap", func(t *testing.T, dir, _ string) func(string) {
			cm := newConfigMap(t, dir, map[string]string{"config.json": itemJSON("ns/config", "1")})
			return func(c string) { cm.update(map[string]string{"config.json": c}) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.json")
			var update func(string)
			f := startSingleton(t, path, func() { update = tc.setup(t, dir, path) })
			f.events.WaitOrdered("add/ns/config")
			f.assertValue("1")

			for _, v := range []string{"2", "3"} {
				update(itemJSON("ns/config", v))
				waitForValue(t, f.s.AsCollection(), "ns/config", v)
			}
			if errs := f.probe.Errors(); len(errs) != 0 {
				t.Errorf("debug errors: %v", errs)
			}
		})
	}
}

func TestFileSingletonMissingFileMeansNoValue(t *testing.T) {
	f := startSingleton(t, filepath.Join(t.TempDir(), "config.json"), nil)
	f.assertValue("<none>")

	mustWriteAtomic(t, f.path, itemJSON("ns/config", "1"))
	f.events.WaitOrdered("add/ns/config")
	mustRemove(t, f.path)
	f.events.WaitOrdered("delete/ns/config")
	mustWrite(t, f.path, itemJSON("ns/config", "2"))
	f.events.WaitOrdered("add/ns/config")
	f.assertValue("2")

	// parse returning nil is no value either.
	mustWrite(t, f.path, "null")
	f.events.WaitOrdered("delete/ns/config")
	if errs := f.probe.Errors(); len(errs) != 0 {
		t.Errorf("debug errors: %v", errs)
	}
}

func TestFileSingletonBrokenFileKeepsLastGoodValue(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		wantErr string
	}{
		{"invalid JSON", `{"Name": `, "parsing"},
		{"parser panics", panicContent, "panicked"},
		{"unreadable: a link to itself", "", "reading"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			f := startSingleton(t, path, func() { mustWrite(t, path, itemJSON("ns/config", "1")) })
			f.events.WaitOrdered("add/ns/config")

			if tc.content == "" {
				mustLinkAtomic(t, filepath.Base(path), path)
			} else {
				mustWrite(t, path, tc.content)
			}
			waitForErrors(t, f.probe, "for the file", func(errs map[string]string) bool {
				return errorMentions(errs, path, path, tc.wantErr)
			})
			f.assertValue("1")

			mustWriteAtomic(t, path, itemJSON("ns/config", "2"))
			f.events.WaitOrdered("update/ns/config")
			waitForErrors(t, f.probe, "cleared", func(errs map[string]string) bool { return len(errs) == 0 })
		})
	}
}

func TestFileSingletonBrokenAtStartHasNoValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	f := startSingleton(t, path, func() { mustWrite(t, path, "{") })
	f.assertValue("<none>")
	if errs := f.probe.Errors(); !errorMentions(errs, path, "parsing", path) {
		t.Fatalf("debug errors = %v, want a parse error for %s", errs, path)
	}
	mustWrite(t, path, itemJSON("ns/config", "1"))
	f.events.WaitOrdered("add/ns/config")
}

func TestFileSingletonQuietChanges(t *testing.T) {
	// Each of these leaves the value as it is, without an event and
	// without parsing again; the next real change is then the next event.
	content := itemJSON("ns/config", "1")
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"same content in place", func(t *testing.T, path string) { mustWrite(t, path, content) }},
		{"same content renamed over", func(t *testing.T, path string) { mustWriteAtomic(t, path, content) }},
		{"touched", func(t *testing.T, path string) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated, as it is while being written", func(t *testing.T, path string) { mustWrite(t, path, "") }},
		{"another file of the directory", func(t *testing.T, path string) {
			mustWrite(t, filepath.Join(filepath.Dir(path), "other.json"), "{")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			f := startSingleton(t, path, func() { mustWrite(t, path, content) })
			f.events.WaitOrdered("add/ns/config")
			parsed := f.parser.callsOf("")

			tc.change(t, path)
			f.settle()
			f.assertValue("1")
			if n := f.parser.callsOf(""); n != parsed {
				t.Errorf("parsed %d more times", n-parsed)
			}
			if errs := f.probe.Errors(); len(errs) != 0 {
				t.Errorf("debug errors: %v", errs)
			}

			mustWrite(t, path, itemJSON("ns/config", "2"))
			f.events.WaitOrdered("update/ns/config")
		})
	}
}

func TestFileSingletonConstructionErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	mustWrite(t, file, "x")
	stop := krttest.Stop(t)
	parse := newParser().single
	for _, tc := range []struct {
		name  string
		path  string
		parse func([]byte) (*item, error)
		stop  <-chan struct{}
	}{
		{"missing directory", filepath.Join(dir, "missing", "config.json"), parse, stop},
		{"file as directory", filepath.Join(file, "config.json"), parse, stop},
		{"no stop channel", filepath.Join(dir, "config.json"), parse, nil},
		{"no parse function", filepath.Join(dir, "config.json"), nil, stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := files.NewFileSingleton(tc.path, tc.parse, tc.stop)
			if err == nil || s != nil {
				t.Fatalf("NewFileSingleton(%s) = %v, %v; want an error", tc.path, s, err)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %s", err, tc.path)
			}
		})
	}
}
