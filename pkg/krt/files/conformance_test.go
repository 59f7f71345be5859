package files_test

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/files"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// folderRig drives a folder collection through its files: one file per
// key, written atomically.
type folderRig struct {
	krt.Collection[item]
	t   *testing.T
	dir string

	mu     sync.Mutex
	fileOf map[string]string // key -> the file that holds it
}

func newFolderRig(t *testing.T, md krt.Metadata) krttest.Rig[item] {
	dir := t.TempDir()
	c, err := files.NewFolderCollectionWithOptions(dir, newParser().folder, krttest.Stop(t), options(t), krt.WithMetadata(md))
	if err != nil {
		t.Fatal(err)
	}
	return &folderRig{Collection: c, t: t, dir: dir, fileOf: map[string]string{}}
}

// CreateObject writes a new file holding key. It may be called from several
// goroutines at once.
func (r *folderRig) CreateObject(key string) {
	file := filepath.Join(r.dir, strings.ReplaceAll(key, "/", "_")+".json")
	r.mu.Lock()
	r.fileOf[key] = file
	r.mu.Unlock()
	if err := writeAtomic(file, itemsJSON(newItem(key, "v1"))); err != nil {
		r.t.Error(err)
	}
}

// ReplaceKey rewrites the file of oldKey so it holds newKey instead: one
// change of one file.
func (r *folderRig) ReplaceKey(oldKey, newKey string) {
	r.mu.Lock()
	file := r.fileOf[oldKey]
	delete(r.fileOf, oldKey)
	r.fileOf[newKey] = file
	r.mu.Unlock()
	mustWriteAtomic(r.t, file, itemsJSON(newItem(newKey, "v1")))
}

// singletonRig drives a file singleton through its file. Each change waits
// until the singleton holds it: the suite expects to see every value, and
// changes made faster than the quiet period would be read as one.
type singletonRig struct {
	krt.Collection[item]
	single krt.Singleton[item]
	t      *testing.T
	path   string
}

func newSingletonRig(t *testing.T, md krt.Metadata) krttest.Rig[item] {
	path := filepath.Join(t.TempDir(), "config.json")
	s, err := files.NewFileSingletonWithOptions(path, newParser().single, krttest.Stop(t), options(t), krt.WithMetadata(md))
	if err != nil {
		t.Fatal(err)
	}
	return &singletonRig{Collection: s.AsCollection(), single: s, t: t, path: path}
}

func (r *singletonRig) CreateObject(key string) {
	mustWriteAtomic(r.t, r.path, itemJSON(key, "v1"))
	krttest.WaitFor(r.t, r.Collection, func() bool {
		v := r.single.Get()
		return v != nil && krt.GetKey(*v) == key
	})
}

func (r *singletonRig) ReplaceKey(_, newKey string) { r.CreateObject(newKey) }
func (r *singletonRig) IsSingleton() bool           { return true }

func TestConformance(t *testing.T) {
	t.Run("folder collection", func(t *testing.T) {
		krttest.RunConformance(t, newFolderRig)
	})
	t.Run("file singleton", func(t *testing.T) {
		krttest.RunConformance(t, newSingletonRig)
	})
}
