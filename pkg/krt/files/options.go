package files

import (
	"log/slog"
	"time"

	"github.com/meshcp/meshcp/pkg/krt"
)

// DefaultDebounce is the quiet period used when Options.Debounce is not set.
// It is long enough to cover an editor's or a kubelet's burst of writes and
// renames, and short enough to go unnoticed by a person editing a file.
const DefaultDebounce = 100 * time.Millisecond

// maxDelayFactor bounds, in quiet periods, how long a stream of changes that
// never pauses can hold a read back.
const maxDelayFactor = 10

// Options tunes how files are watched and reported. The zero value gives
// the defaults. The krt.CollectionOption values passed next to it configure
// the collection itself (name, metadata, debugging) as for any collection.
type Options struct {
	// Debounce is how long the watched files must stay quiet after a change
	// before they are read again: a burst of writes is read once, after it
	// ends, and a file is not read in the middle of being written. A stream
	// of changes that never pauses is still read at least every ten quiet
	// periods. Zero or less means DefaultDebounce.
	Debounce time.Duration

	// Logger receives the problems found in files (unreadable files, parse
	// errors, duplicate keys), each with the path of the file, once when a
	// problem appears and once when it clears. When set, it is also handed to
	// the collection, unless the krt options hold a krt.WithLogger of their
	// own. Nil means slog.Default() for the problems, and krt's default for
	// the collection.
	Logger *slog.Logger
}

// settings is Options resolved: every field set, plus what was left unset
// where that matters.
type settings struct {
	debounce time.Duration
	// logger receives the package's own lines, with the watched path added.
	logger *slog.Logger
	// collectionLogger is the caller's Options.Logger, or nil to leave the
	// collection with krt's default.
	collectionLogger *slog.Logger
}

// resolve returns the settings o asks for, for a watch of path (a folder
// or a file), which log lines name as "watching".
func (o Options) resolve(path string) settings {
	s := settings{debounce: o.Debounce, logger: o.Logger, collectionLogger: o.Logger}
	if s.debounce <= 0 {
		s.debounce = DefaultDebounce
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.logger = s.logger.With("watching", path)
	return s
}

// collectionOptions builds the options of the collection that holds what
// the files contain. Defaults come first so the caller's options override
// them; the stop channel and the debug errors come last because this package
// owns them: a krt.WithDebugErrors of the caller's is replaced.
func (s settings) collectionOptions(name string, stop <-chan struct{}, errs *fileErrors, opts []krt.CollectionOption) []krt.CollectionOption {
	out := make([]krt.CollectionOption, 0, len(opts)+4)
	out = append(out, krt.WithName(name))
	if s.collectionLogger != nil {
		out = append(out, krt.WithLogger(s.collectionLogger))
	}
	out = append(out, opts...)
	return append(out, krt.WithStop(stop), krt.WithDebugErrors(errs.snapshot))
}
