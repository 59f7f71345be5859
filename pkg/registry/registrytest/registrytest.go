// Package registrytest reads a folder of configuration into config
// sources and a registry, as the daemon does in file mode, for tests of
// the registry and of what is built on it.
package registrytest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/registry"
)

// World is configuration read from a folder: the folder (edit it with
// WriteFile to change the world), the sources and the registry over them.
type World struct {
	Dir      string
	Sources  *sources.Sources
	Registry *registry.Registry
}

// Load copies the files of each folder of dirs, then files (name to
// content), into a temporary folder and reads it, waiting for the
// registry to sync. An object the sources reject or cannot read fails the
// test: test data must be valid.
func Load(t testing.TB, dirs []string, files map[string]string) *World {
	t.Helper()
	dir := t.TempDir()
	for _, from := range dirs {
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(from, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			krttest.WriteFile(t, filepath.Join(dir, e.Name()), string(data))
		}
	}
	for name, content := range files {
		krttest.WriteFile(t, filepath.Join(dir, name), content)
	}
	stop := krttest.Stop(t)
	src, err := sources.FromFolder(dir, stop, sources.Options{Domain: "cluster.local", Logger: krttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !src.WaitUntilSynced(stop) {
		t.Fatal("sources never synced")
	}
	z := src.Configz()
	for _, k := range z.Kinds {
		for _, r := range k.Rejected {
			t.Fatalf("test data rejected: %s %s: %+v", k.Kind, r.Key, r.Errors)
		}
	}
	for _, u := range z.Unreadable {
		t.Fatalf("test data unreadable: %s: %s", u.Source, u.Error)
	}
	reg := registry.New(src, stop, registry.Options{Logger: krttest.Logger(t)})
	if !reg.WaitUntilSynced(stop) {
		t.Fatal("registry never synced")
	}
	return &World{Dir: dir, Sources: src, Registry: reg}
}
