package files_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/files"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// folderFixture is a watched folder with a tracker registered on it.
type folderFixture struct {
	t      *testing.T
	dir    string
	c      krt.Collection[item]
	probe  *files.Probe
	parser *parser
	events *krttest.Tracker[item]
}

// startFolder writes initial (content by path relative to dir) into a new
// directory, unless it is already laid out by setup, then watches it.
func startFolder(t *testing.T, initial map[string]string, setup ...func(dir string)) *folderFixture {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range initial {
		mustWrite(t, filepath.Join(dir, rel), content)
	}
	for _, s := range setup {
		s(dir)
	}
	p := newParser()
	c, probe, err := files.NewFolderCollectionProbed(dir, p.folder, krttest.Stop(t), options(t))
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasSynced() {
		t.Fatal("folder collection not synced after construction")
	}
	f := &folderFixture{t: t, dir: dir, c: c, probe: probe, parser: p, events: krttest.NewTracker[item](t)}
	c.Register(f.events.Track)
	return f
}

func (f *folderFixture) path(rel string) string { return filepath.Join(f.dir, rel) }

// fence proves that nothing happened before it: it adds a file holding
// only the key "fence/<name>" and waits for that ADD to be the next event.
// Events are delivered in order, so any event caused by an earlier change
// would come first and fail the wait.
func (f *folderFixture) fence(name string) {
	f.t.Helper()
	mustWriteAtomic(f.t, f.path("zz-fence-"+name+".json"), itemsJSON(newItem("fence/"+name, "")))
	f.events.WaitOrdered("add/fence/" + name)
}

// assertValues checks the value of each key; "<none>" means absent.
func (f *folderFixture) assertValues(want map[string]string) {
	f.t.Helper()
	for key, value := range want {
		if got := valueOf(f.c, key); got != value {
			f.t.Errorf("%s = %q, want %q", key, got, value)
		}
	}
}

func TestFolderPicksUpEveryWayOfWritingAFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, path, content string)
	}{
		{"in place", mustWrite},
		{"atomic rename", mustWriteAtomic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFolder(t, map[string]string{
				"a.json": itemsJSON(newItem("ns/a", "1")),
				"b.json": itemsJSON(newItem("ns/b", "1")),
			})
			f.events.WaitUnordered("add/ns/a", "add/ns/b")

			tc.write(t, f.path("a.json"), itemsJSON(newItem("ns/a", "2")))
			f.events.WaitOrdered("update/ns/a")
			tc.write(t, f.path("c.json"), itemsJSON(newItem("ns/c", "1")))
			f.events.WaitOrdered("add/ns/c")
			f.assertValues(map[string]string{"ns/a": "2", "ns/b": "1", "ns/c": "1"})
		})
	}
}

func TestFolderFollowsConfigMapSwap(t *testing.T) {
	var cm *configMap
	f := startFolder(t, nil, func(dir string) {
		cm = newConfigMap(t, dir, map[string]string{
			"a.json":     itemsJSON(newItem("ns/a", "1")),
			"b.json":     itemsJSON(newItem("ns/b", "1")),
			"sub/c.json": itemsJSON(newItem("ns/c", "1")),
		})
	})
	f.events.WaitUnordered("add/ns/a", "add/ns/b", "add/ns/c")

	cm.update(map[string]string{
		"a.json":     itemsJSON(newItem("ns/a", "2")),
		"d.json":     itemsJSON(newItem("ns/d", "1")),
		"sub/c.json": itemsJSON(newItem("ns/c", "1")),
	})
	f.events.WaitUnordered("update/ns/a", "delete/ns/b", "add/ns/d")
	f.fence("after-swap")
	f.assertValues(map[string]string{"ns/a": "2", "ns/b": "<none>", "ns/c": "1", "ns/d": "1"})

	// Each file was read once, under its visible name: never through
	// "..data", so no key was seen twice.
	if errs := f.probe.Errors(); len(errs) != 0 {
		t.Errorf("debug errors after a ConfigMap swap: %v", errs)
	}
	for _, p := range f.parser.paths() {
		if strings.Contains(p, "..") {
			t.Errorf("parsed %s, a ConfigMap internal", p)
		}
	}
}

func TestFolderWatchesDirectoriesCreatedLater(t *testing.T) {
	f := startFolder(t, nil)

	// Files written at once into new directories, before any watch on them
	// can exist, are found by the scan that their creation causes.
	mustWrite(t, f.path("one/x.json"), itemsJSON(newItem("ns/x", "1")))
	mustWrite(t, f.path("one/two/three/y.json"), itemsJSON(newItem("ns/y", "1")))
	f.events.WaitUnordered("add/ns/x", "add/ns/y")

	// The new directories are watched from then on.
	mustWrite(t, f.path("one/two/three/y.json"), itemsJSON(newItem("ns/y", "2")))
	f.events.WaitOrdered("update/ns/y")
	mustWriteAtomic(t, f.path("one/two/z.json"), itemsJSON(newItem("ns/z", "1")))
	f.events.WaitOrdered("add/ns/z")
}

func TestFolderBrokenFileKeepsLastGoodObjects(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		wantErr string
	}{
		{"invalid JSON", `[{"Name": `, "parsing"},
		{"wrong shape", `{"Name": "a"}`, "cannot unmarshal"},
		{"parser panics", panicContent, "panicked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFolder(t, map[string]string{
				"a.json":      itemsJSON(newItem("ns/a", "1")),
				"b.json":      itemsJSON(newItem("ns/b", "1")),
				"never.json":  tc.content, // broken from the start: no objects
				"sub/c.json":  itemsJSON(newItem("ns/c", "1")),
				"sub/d.jsonx": tc.content,
			})
			f.events.WaitUnordered("add/ns/a", "add/ns/b", "add/ns/c")
			if errs := f.probe.Errors(); !errorMentions(errs, f.path("never.json"), tc.wantErr) ||
				!errorMentions(errs, f.path("sub/d.jsonx"), tc.wantErr) {
				t.Fatalf("debug errors at start = %v, want %q for never.json and sub/d.jsonx", errs, tc.wantErr)
			}

			// a.json breaks: it keeps its objects, no event, and the
			// problem is reported under its path.
			mustWrite(t, f.path("a.json"), tc.content)
			waitForErrors(t, f.probe, "for a.json", func(errs map[string]string) bool {
				return errorMentions(errs, f.path("a.json"), f.path("a.json"), tc.wantErr)
			})
			f.fence("broken")
			f.assertValues(map[string]string{"ns/a": "1"})

			// Every other file keeps flowing.
			mustWriteAtomic(t, f.path("b.json"), itemsJSON(newItem("ns/b", "2")))
			f.events.WaitOrdered("update/ns/b")
			mustRemove(t, f.path("sub/c.json"))
			f.events.WaitOrdered("delete/ns/c")

			// Fixing a.json brings its new content and clears its problem.
			mustWrite(t, f.path("a.json"), itemsJSON(newItem("ns/a", "3")))
			f.events.WaitOrdered("update/ns/a")
			waitForErrors(t, f.probe, "without a.json", func(errs map[string]string) bool {
				_, broken := errs[f.path("a.json")]
				return !broken && len(errs) == 2
			})
		})
	}
}

func TestFolderSkipsEmptyFiles(t *testing.T) {
	f := startFolder(t, map[string]string{"a.json": itemsJSON(newItem("ns/a", "1"))})
	f.events.WaitOrdered("add/ns/a")

	// A truncated file is being written: it keeps its objects. A new empty
	// file has none yet. Neither is a problem.
	mustWrite(t, f.path("a.json"), "")
	mustWrite(t, f.path("new.json"), "")
	f.fence("empty")
	f.assertValues(map[string]string{"ns/a": "1"})
	if errs := f.probe.Errors(); len(errs) != 0 {
		t.Errorf("debug errors for empty files: %v", errs)
	}
	if n := f.parser.callsOf(f.path("new.json")); n != 0 {
		t.Errorf("empty new.json parsed %d times, want 0", n)
	}

	// Once written, both count again.
	mustWrite(t, f.path("new.json"), itemsJSON(newItem("ns/new", "1")))
	f.events.WaitOrdered("add/ns/new")
	mustWrite(t, f.path("a.json"), itemsJSON(newItem("ns/a", "2")))
	f.events.WaitOrdered("update/ns/a")
}

func TestFolderRemovesObjectsOfDeletedFiles(t *testing.T) {
	f := startFolder(t, map[string]string{
		"a.json":       itemsJSON(newItem("ns/a", "1"), newItem("ns/a2", "1")),
		"sub/b.json":   itemsJSON(newItem("ns/b", "1")),
		"sub/x/c.json": itemsJSON(newItem("ns/c", "1")),
	})
	f.events.WaitUnordered("add/ns/a", "add/ns/a2", "add/ns/b", "add/ns/c")

	mustRemove(t, f.path("a.json"))
	f.events.WaitUnordered("delete/ns/a", "delete/ns/a2")
	mustRemove(t, f.path("sub"))
	f.events.WaitUnordered("delete/ns/b", "delete/ns/c")
	if got := f.c.List(); len(got) != 0 {
		t.Fatalf("List() after removing every file = %v", got)
	}

	// A directory created again under a removed one's name is watched anew.
	mustWrite(t, f.path("sub/b.json"), itemsJSON(newItem("ns/b", "2")))
	f.events.WaitOrdered("add/ns/b")
	mustWrite(t, f.path("sub/b2.json"), itemsJSON(newItem("ns/b2", "1")))
	f.events.WaitOrdered("add/ns/b2")
}

func TestFolderDuplicateKeyFirstFileWins(t *testing.T) {
	f := startFolder(t, map[string]string{
		"a.json":     itemsJSON(newItem("ns/dup", "from-a")),
		"b.json":     itemsJSON(newItem("ns/dup", "from-b"), newItem("ns/b", "1")),
		"c.json":     itemsJSON(newItem("ns/c", "1"), newItem("ns/c", "2")),
		"sub/a.json": itemsJSON(newItem("ns/dup", "from-sub")),
	})
	f.events.WaitUnordered("add/ns/dup", "add/ns/b", "add/ns/c")
	f.assertValues(map[string]string{"ns/dup": "from-a", "ns/b": "1", "ns/c": "1"})

	errs := f.probe.Errors()
	if !errorMentions(errs, f.path("b.json"), `"ns/dup"`, f.path("a.json"), f.path("b.json")) {
		t.Errorf("debug error for b.json = %q, want one naming both files", errs[f.path("b.json")])
	}
	if !errorMentions(errs, f.path("sub/a.json"), `"ns/dup"`, f.path("a.json"), f.path("sub/a.json")) {
		t.Errorf("debug error for sub/a.json = %q, want one naming both files", errs[f.path("sub/a.json")])
	}
	if !errorMentions(errs, f.path("c.json"), `"ns/c"`, "more than once") {
		t.Errorf("debug error for c.json = %q, want a key repeated in one file", errs[f.path("c.json")])
	}
	if _, ok := errs[f.path("a.json")]; ok || len(errs) != 3 {
		t.Errorf("debug errors = %v, want b.json, c.json and sub/a.json only", errs)
	}

	// When the winner goes, the next file in path order takes the key.
	mustRemove(t, f.path("a.json"))
	f.events.WaitOrdered("update/ns/dup")
	f.assertValues(map[string]string{"ns/dup": "from-b"})
	waitForErrors(t, f.probe, "with b.json winning", func(errs map[string]string) bool {
		_, bLoses := errs[f.path("b.json")]
		return !bLoses && errorMentions(errs, f.path("sub/a.json"), f.path("b.json"))
	})
}

func TestFolderUnchangedContentIsSilent(t *testing.T) {
	content := itemsJSON(newItem("ns/a", "1"))
	f := startFolder(t, map[string]string{"a.json": content})
	f.events.WaitOrdered("add/ns/a")
	parsed := f.parser.callsOf(f.path("a.json"))

	mustWrite(t, f.path("a.json"), content)
	f.fence("in-place")
	mustWriteAtomic(t, f.path("a.json"), content)
	f.fence("atomic")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f.path("a.json"), later, later); err != nil {
		t.Fatal(err)
	}
	f.fence("touch")

	if n := f.parser.callsOf(f.path("a.json")); n != parsed {
		t.Errorf("a.json parsed %d more times for the same content", n-parsed)
	}
}

func TestFolderIgnoresHiddenEntries(t *testing.T) {
	hidden := []string{".a.json", ".git/b.json", "sub/.c.json", "sub/.d/e.json"}
	initial := map[string]string{"sub/visible.json": itemsJSON(newItem("ns/visible", "1"))}
	for _, h := range hidden {
		initial[h] = itemsJSON(newItem("ns/hidden", h))
	}
	f := startFolder(t, initial)
	f.events.WaitOrdered("add/ns/visible")

	for _, h := range hidden {
		mustWrite(t, f.path(h), itemsJSON(newItem("ns/hidden", h+" again")))
	}
	f.fence("hidden")
	for _, p := range f.parser.paths() {
		for _, h := range hidden {
			if p == f.path(h) {
				t.Errorf("parsed hidden file %s", h)
			}
		}
	}
}

func TestFolderConstructionErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	mustWrite(t, file, "x")
	stop := krttest.Stop(t)
	parse := newParser().folder
	for _, tc := range []struct {
		name  string
		dir   string
		parse func(string, []byte) ([]item, error)
		stop  <-chan struct{}
	}{
		{"missing folder", filepath.Join(dir, "missing"), parse, stop},
		{"not a folder", file, parse, stop},
		{"no stop channel", dir, parse, nil},
		{"no parse function", dir, nil, stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := files.NewFolderCollection(tc.dir, tc.parse, tc.stop)
			if err == nil || c != nil {
				t.Fatalf("NewFolderCollection(%s) = %v, %v; want an error", tc.dir, c, err)
			}
			if !strings.Contains(err.Error(), tc.dir) {
				t.Errorf("error %q does not name %s", err, tc.dir)
			}
		})
	}
}

func TestFolderStopsWithStopChannel(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "a.json"), itemsJSON(newItem("ns/a", "1")))
	p := newParser()
	stop := make(chan struct{})
	c, err := files.NewFolderCollectionWithOptions(dir, p.folder, stop, options(t))
	if err != nil {
		t.Fatal(err)
	}
	close(stop)

	// Nothing reads the folder any more; proving it takes a pause longer
	// than the quiet period. The last state stays readable. (TestMain checks
	// that the goroutine and the watcher are gone.)
	mustWrite(t, filepath.Join(dir, "a.json"), itemsJSON(newItem("ns/a", "2")))
	time.Sleep(10 * options(t).Debounce)
	if n := p.callsOf(filepath.Join(dir, "a.json")); n != 1 {
		t.Errorf("a.json parsed %d times, want only the initial scan", n)
	}
	if got := valueOf(c, "ns/a"); got != "1" {
		t.Errorf("ns/a after stop = %q, want the last state, 1", got)
	}
}

func TestFolderParsesEachFileUnderItsOwnPath(t *testing.T) {
	f := startFolder(t, map[string]string{
		"b.json":   itemsJSON(newItem("ns/b", "1")),
		"a/x.json": itemsJSON(newItem("ns/x", "1")),
	})
	f.events.WaitUnordered("add/ns/b", "add/ns/x")
	want := []string{f.path("a/x.json"), f.path("b.json")}
	if got := f.parser.paths(); !slices.Equal(got, want) {
		t.Errorf("parsed paths = %v, want %v", got, want)
	}
}

func TestFolderFeedsDerivedCollections(t *testing.T) {
	// The collection is a krt collection through and through: a derived
	// collection can be built on it and fetch from it.
	f := startFolder(t, map[string]string{"a.json": itemsJSON(newItem("ns/a", "1"))})
	upper := krt.NewCollection(f.c, func(ctx krt.HandlerContext, it item) *item {
		it.Value = strings.ToUpper(it.Value) + "!"
		return &it
	}, krt.WithStop(krttest.Stop(t)))
	mustWrite(t, f.path("a.json"), itemsJSON(newItem("ns/a", "x")))
	waitForValue(t, upper, "ns/a", "X!")
}

// A file that does not parse shows in /debug/krtz next to the folder's
// objects, and leaves it once fixed.
func TestFolderErrorsShowInTheDebugDump(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "good.json"), itemsJSON(newItem("ns/good", "1")))
	mustWrite(t, filepath.Join(dir, "bad.json"), "{not json")
	debug := krt.NewDebugHandler()
	stop := krttest.Stop(t)
	c, err := files.NewFolderCollectionWithOptions(dir, newParser().folder, stop, options(t), krt.WithDebugging(debug), krt.WithName("config"))
	if err != nil {
		t.Fatal(err)
	}
	dumpErrors := func() map[string]string {
		for _, col := range debug.Collections() {
			if col.Name == "config" {
				return col.State.Errors
			}
		}
		return nil
	}
	bad := filepath.Join(dir, "bad.json")
	if errs := dumpErrors(); !strings.Contains(errs[bad], "invalid character") {
		t.Fatalf("dump errors = %v, want one for %s", errs, bad)
	}
	if valueOf(c, "ns/good") != "1" {
		t.Fatal("the good file's object is missing")
	}
	mustWrite(t, bad, itemsJSON(newItem("ns/fixed", "2")))
	waitForValue(t, c, "ns/fixed", "2")
	if errs := dumpErrors(); len(errs) != 0 {
		t.Errorf("dump errors after the fix = %v", errs)
	}
}
