package files

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"

	"github.com/meshcp/meshcp/pkg/krt"
)

// NewFileSingleton returns a singleton holding what parse makes of the file
// at path (parse returning nil means no value), kept up to date as the file
// is written in place, replaced by a rename, removed and created again, or
// swapped by a ConfigMap update. It uses the default Options; see
// NewFileSingletonWithOptions.
//
// The directory holding the file is watched rather than the file, since the
// file's inode changes with every rename and every ConfigMap update; any
// change in the directory causes a read of the file, which costs a digest
// and nothing more when its content is unchanged.
//
// A file that does not exist means no value, at the start as later: the
// singleton is then empty until the file appears. Content that cannot be
// read or parsed is logged and reported in the debug errors under path, and
// the last good value stays; an empty file is taken to be in the middle of
// being written and changes nothing.
//
// The singleton is synced when this returns: the file has been read. It
// stops, and its watcher and goroutine are released, when stop closes. An
// error is returned when the file's directory does not exist or cannot be
// watched.
func NewFileSingleton[T any](path string, parse func(data []byte) (*T, error), stop <-chan struct{}, opts ...krt.CollectionOption) (krt.Singleton[T], error) {
	return NewFileSingletonWithOptions(path, parse, stop, Options{}, opts...)
}

// NewFileSingletonWithOptions is NewFileSingleton with Options, to set the
// debounce period or the logger.
func NewFileSingletonWithOptions[T any](path string, parse func(data []byte) (*T, error), stop <-chan struct{}, o Options, opts ...krt.CollectionOption) (krt.Singleton[T], error) {
	s, err := newFileSingleton(path, parse, stop, o, opts)
	if err != nil {
		return nil, err
	}
	return s.value, nil
}

// fileSingleton is a watched file and the singleton of what it holds. After
// construction, state is used by the watch loop's goroutine alone.
type fileSingleton[T any] struct {
	path   string
	parse  func(path string, data []byte) (*T, error)
	value  krt.StaticSingleton[T]
	errors *fileErrors
	state  *fileState[*T]
}

func newFileSingleton[T any](path string, parse func(data []byte) (*T, error), stop <-chan struct{}, o Options, opts []krt.CollectionOption) (*fileSingleton[T], error) {
	if stop == nil || parse == nil {
		return nil, fmt.Errorf("watching file %s: the stop channel and the parse function are required", path)
	}
	set := o.resolve(path)
	dir := filepath.Dir(path)
	if info, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("watching file %s: %w", path, err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("watching file %s: %s is not a directory", path, dir)
	}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching file %s: %w", path, err)
	}
	started := false
	defer func() {
		if !started { // an error, or a panic building the singleton
			watcher.Close()
		}
	}()
	if err := watcher.Add(dir); err != nil {
		return nil, fmt.Errorf("watching file %s: watching %s: %w", path, dir, err)
	}

	s := &fileSingleton[T]{
		path:   path,
		parse:  func(_ string, data []byte) (*T, error) { return parse(data) },
		errors: newFileErrors(set.logger),
	}
	s.value = krt.NewStatic[T](s.read(), true,
		set.collectionOptions("File["+path+"]", stop, s.errors, opts)...)
	go newWatchLoop(watcher, set, func() { s.value.Set(s.read()) }).run(stop)
	started = true
	return s, nil
}

// read brings the state up to date with the file and returns the value the
// singleton should hold: the last good one, or nil when the file does not
// exist or never parsed.
func (s *fileSingleton[T]) read() *T {
	s.state = loadFile(s.path, s.state, s.parse)
	problems := map[string]string{}
	if s.state != nil && s.state.err != nil {
		problems[s.path] = s.state.err.Error()
	}
	s.errors.replace(problems)
	return s.state.lastGood()
}
