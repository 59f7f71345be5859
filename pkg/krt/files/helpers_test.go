package files_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/files"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// item is what the test files hold: keyed by namespace/name, with a value
// to tell versions apart.
type item struct {
	krt.Named
	Value string
}

func newItem(key, value string) item {
	ns, name, _ := strings.Cut(key, "/")
	return item{Named: krt.Named{Namespace: ns, Name: name}, Value: value}
}

// itemsJSON is the content of a folder file holding items.
func itemsJSON(items ...item) string {
	data, err := json.Marshal(items)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// itemJSON is the content of a single file holding one item.
func itemJSON(key, value string) string {
	data, err := json.Marshal(newItem(key, value))
	if err != nil {
		panic(err)
	}
	return string(data)
}

// panicContent makes the test parsers panic, as a buggy parser might on bad
// input.
const panicContent = "PANIC"

// parser parses test files and records what it was asked to parse.
type parser struct {
	mu    sync.Mutex
	calls map[string]int // by path
}

func newParser() *parser { return &parser{calls: map[string]int{}} }

func (p *parser) record(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[path]++
}

// folder parses a JSON array of items; a file holding "null" is ignored.
func (p *parser) folder(path string, data []byte) ([]item, error) {
	p.record(path)
	if string(data) == panicContent {
		panic("test parser: " + path)
	}
	var items []item
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, err
	}
	return items, nil
}

// single parses one JSON item; "null" is no value.
func (p *parser) single(data []byte) (*item, error) {
	p.record("")
	if string(data) == panicContent {
		panic("test parser")
	}
	var it *item
	if err := json.Unmarshal(data, &it); err != nil {
		return nil, err
	}
	return it, nil
}

// callsOf returns how many times path was parsed ("" for the singleton).
func (p *parser) callsOf(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[path]
}

// paths returns every path parsed so far, sorted.
func (p *parser) paths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.calls))
}

// options are the watch options of most tests: a short quiet period keeps
// them fast, and problems are logged to the test.
func options(t *testing.T) files.Options {
	return files.Options{Debounce: 20 * time.Millisecond, Logger: krttest.Logger(t)}
}

// writeAtomic replaces path the careful way: write a hidden temporary file
// next to it, then rename it over path.
func writeAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// mustLinkAtomic replaces path with a symbolic link to target, the way
// writeAtomic replaces it with a file.
func mustLinkAtomic(t *testing.T, target, path string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-link")
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func mustWriteAtomic(t *testing.T, path, content string) {
	t.Helper()
	if err := writeAtomic(path, content); err != nil {
		t.Fatal(err)
	}
}

// mustWrite writes path in place, creating its directory if needed.
func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

// valueOf returns the value of the item under key, or "<none>".
func valueOf(c krt.Collection[item], key string) string {
	if it := c.GetKey(key); it != nil {
		return it.Value
	}
	return "<none>"
}

// waitForValue waits until the item under key has value.
func waitForValue(t *testing.T, c krt.Collection[item], key, value string) {
	t.Helper()
	if !krttest.Eventually(c, func() bool { return valueOf(c, key) == value }) {
		t.Fatalf("%s = %q, want %q", key, valueOf(c, key), value)
	}
}

// waitForErrors waits until the debug errors satisfy cond, checking after
// every read of the files.
func waitForErrors(t *testing.T, p *files.Probe, what string, cond func(errs map[string]string) bool) {
	t.Helper()
	deadline := time.After(krttest.Timeout)
	for {
		next := p.NextRead()
		if cond(p.Errors()) {
			return
		}
		select {
		case <-next:
		case <-deadline:
			t.Fatalf("timed out waiting for debug errors %s; have %v", what, p.Errors())
		}
	}
}

// waitForRead waits for the next read of the files to complete.
func waitForRead(t *testing.T, next <-chan struct{}) {
	t.Helper()
	select {
	case <-next:
	case <-time.After(krttest.Timeout):
		t.Fatal("timed out waiting for the files to be read")
	}
}

// errorMentions reports whether the debug error for path contains every
// one of words.
func errorMentions(errs map[string]string, path string, words ...string) bool {
	msg, ok := errs[path]
	if !ok {
		return false
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			return false
		}
	}
	return true
}

// configMap builds and updates a directory laid out as the kubelet mounts a
// ConfigMap: content in a timestamped hidden directory, "..data" linking to
// it, and one top-level link per entry through "..data".
type configMap struct {
	t       *testing.T
	dir     string
	version int
	current string   // the timestamped directory "..data" links to
	visible []string // the top-level links
}

// newConfigMap lays out dir with files, by path relative to dir (a path
// with a directory in it, like projected items can have, is reached
// through a top-level link to the directory).
func newConfigMap(t *testing.T, dir string, files map[string]string) *configMap {
	c := &configMap{t: t, dir: dir}
	c.update(files)
	return c
}

// update swaps the content for files, in the kubelet's order: write a new
// timestamped directory, point "..data_tmp" at it, rename that over
// "..data", add the links of new entries, remove the links of entries that
// are gone, remove the old directory.
func (c *configMap) update(files map[string]string) {
	t := c.t
	t.Helper()
	c.version++
	next := fmt.Sprintf("..2024_05_01_10_00_%02d.%09d", c.version, c.version)
	var visible []string
	for rel, content := range files {
		mustWrite(t, filepath.Join(c.dir, next, rel), content)
		top, _, _ := strings.Cut(rel, "/")
		if !slices.Contains(visible, top) {
			visible = append(visible, top)
		}
	}
	tmp := filepath.Join(c.dir, "..data_tmp")
	if err := os.Symlink(next, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, top := range visible {
		if !slices.Contains(c.visible, top) {
			if err := os.Symlink(filepath.Join("..data", top), filepath.Join(c.dir, top)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, top := range c.visible {
		if !slices.Contains(visible, top) {
			mustRemove(t, filepath.Join(c.dir, top))
		}
	}
	if c.current != "" {
		mustRemove(t, filepath.Join(c.dir, c.current))
	}
	c.current, c.visible = next, visible
}
