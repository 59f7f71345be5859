package files

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/meshcp/meshcp/pkg/krt"
)

// NewFolderCollection returns a collection of everything parse makes of the
// files under dir, kept up to date as files are written, renamed, removed
// and created, in dir or in any directory below it, including directories
// created later. It uses the default Options; see
// NewFolderCollectionWithOptions.
//
// parse is called with the path of a file (dir joined with the file's path
// below it) and its content, and returns the objects the file holds; it
// returns nil to ignore a file. It is called again only when a file's
// content changes. See the package documentation for the rules: which files
// are read, what happens to empty and broken files, and which file wins
// when two produce the same key.
//
// The collection is synced when this returns: the initial scan is done. It
// stops, and its watcher and goroutine are released, when stop closes. An
// error is returned when dir cannot be listed or watched.
func NewFolderCollection[T any](dir string, parse func(path string, data []byte) ([]T, error), stop <-chan struct{}, opts ...krt.CollectionOption) (krt.Collection[T], error) {
	return NewFolderCollectionWithOptions(dir, parse, stop, Options{}, opts...)
}

// NewFolderCollectionWithOptions is NewFolderCollection with Options, to set
// the debounce period or the logger.
func NewFolderCollectionWithOptions[T any](dir string, parse func(path string, data []byte) ([]T, error), stop <-chan struct{}, o Options, opts ...krt.CollectionOption) (krt.Collection[T], error) {
	f, err := newFolder(dir, parse, stop, o, opts)
	if err != nil {
		return nil, err
	}
	return f.collection, nil
}

// folder is a watched folder and the collection of what its files hold.
// After construction, everything but the collection and the errors is used
// by the watch loop's goroutine alone.
type folder[T any] struct {
	root       string
	parse      func(path string, data []byte) ([]T, error)
	watcher    *fsnotify.Watcher
	collection krt.StaticCollection[T]
	errors     *fileErrors

	// watched are the directories the watcher was given, to drop those that
	// are gone from the tree.
	watched map[string]struct{}
	// files is the state of every file found by the last scan, by path.
	files map[string]*fileState[[]T]
}

func newFolder[T any](dir string, parse func(path string, data []byte) ([]T, error), stop <-chan struct{}, o Options, opts []krt.CollectionOption) (*folder[T], error) {
	if stop == nil || parse == nil {
		return nil, fmt.Errorf("watching folder %s: the stop channel and the parse function are required", dir)
	}
	set := o.resolve(dir)
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching folder %s: %w", dir, err)
	}
	started := false
	defer func() {
		if !started { // an error, or a panic building the collection
			watcher.Close()
		}
	}()

	f := &folder[T]{
		root:    dir,
		parse:   parse,
		watcher: watcher,
		errors:  newFileErrors(set.logger),
		watched: map[string]struct{}{},
		files:   map[string]*fileState[[]T]{},
	}
	initial, err := f.scan()
	if err != nil {
		return nil, fmt.Errorf("watching folder: %w", err)
	}
	f.collection = krt.NewStaticCollection[T](nil, initial,
		set.collectionOptions("Folder["+dir+"]", stop, f.errors, opts)...)
	go newWatchLoop(watcher, set, f.rescan).run(stop)
	started = true
	return f, nil
}

// rescan brings the collection up to date with the folder. If the folder
// itself is gone, so is everything it held.
func (f *folder[T]) rescan() {
	objects, err := f.scan()
	if err != nil {
		f.files = map[string]*fileState[[]T]{}
		f.errors.replace(map[string]string{f.root: err.Error()})
	}
	f.collection.Reset(objects)
}

// scan walks the folder, watches every directory in it, reads every file
// and returns the objects the folder holds now. Only files whose content
// changed are parsed again; the collection compares objects and announces
// only those that changed, so a scan that finds nothing new is silent.
//
// Why a whole scan rather than acting on the file an event names: the
// events of a ConfigMap update name "..data", not the files whose content
// changed; files created in a new directory before its watch exists produce
// no event at all; a kernel queue overflow loses events outright. A scan
// sees the folder as it is, whatever the events said, and the duplicate-key
// rule needs every file anyway. Debouncing keeps scans rare and the digest
// of each file keeps them cheap.
func (f *folder[T]) scan() ([]T, error) {
	problems := map[string][]string{}
	tree, err := walkFolder(f.root, func(dir string) { f.watch(dir, problems) })
	if err != nil {
		return nil, err
	}
	f.unwatchAllBut(tree.dirs)
	for path, problem := range tree.problems {
		problems[path] = append(problems[path], problem)
	}

	next := make(map[string]*fileState[[]T], len(tree.files))
	for _, path := range tree.files {
		state := loadFile(path, f.files[path], f.parse)
		if state == nil {
			continue // removed since the listing
		}
		next[path] = state
		if state.err != nil {
			problems[path] = append(problems[path], state.err.Error())
		}
	}
	f.files = next

	objects := f.merge(problems)
	f.errors.replace(joinProblems(problems))
	return objects, nil
}

// merge lays out the objects of every file in path order. A key belongs to
// the first file, in path order, that produces it (the first object, within
// one file); every later object with that key is left out and reported as a
// problem of the file it came from.
func (f *folder[T]) merge(problems map[string][]string) []T {
	var objects []T
	owner := map[string]string{}
	for _, path := range slices.Sorted(maps.Keys(f.files)) {
		for _, obj := range f.files[path].value {
			key := krt.GetKey(obj)
			first, taken := owner[key]
			if !taken {
				owner[key] = path
				objects = append(objects, obj)
				continue
			}
			if first == path {
				problems[path] = append(problems[path], fmt.Sprintf("key %q appears more than once in %s; the first one is used", key, path))
			} else {
				problems[path] = append(problems[path], fmt.Sprintf("key %q is produced by both %s and %s; %s comes first and wins", key, first, path, first))
			}
		}
	}
	return objects
}

// watch adds dir to the watcher. Adding a directory that is already watched
// is cheap and harmless, and it renews the watch of a directory that was
// removed and created again under the same name.
func (f *folder[T]) watch(dir string, problems map[string][]string) {
	err := f.watcher.Add(dir)
	switch {
	case err == nil:
		f.watched[dir] = struct{}{}
	case !errors.Is(err, fs.ErrNotExist): // gone already: nothing to watch
		problems[dir] = append(problems[dir], fmt.Sprintf("watching %s: %v; changes in it may be missed", dir, err))
	}
}

// unwatchAllBut drops the watches of directories no longer in the tree (now
// hidden, or moved away). The watch of a removed directory is already gone,
// so an error here means nothing.
func (f *folder[T]) unwatchAllBut(dirs []string) {
	keep := make(map[string]struct{}, len(dirs))
	for _, d := range dirs {
		keep[d] = struct{}{}
	}
	for d := range f.watched {
		if _, ok := keep[d]; !ok {
			_ = f.watcher.Remove(d)
			delete(f.watched, d)
		}
	}
}

// joinProblems turns the problems of each file into one message per file.
func joinProblems(problems map[string][]string) map[string]string {
	out := make(map[string]string, len(problems))
	for path, list := range problems {
		out[path] = strings.Join(list, "; ")
	}
	return out
}
