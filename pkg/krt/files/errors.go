package files

import (
	"log/slog"
	"maps"
	"slices"
	"sync"
)

// fileErrors holds the current problem of each file a collection reads, by
// path, for the debug dump (krt.WithDebugErrors). Each read of the files
// replaces the whole report. A problem is logged when it appears or changes
// and again when it clears, so a file that stays broken is reported once,
// not on every read.
//
// It is safe for concurrent use: the debug dump reads it from any goroutine.
type fileErrors struct {
	logger *slog.Logger

	mu     sync.Mutex
	byPath map[string]string
	// reported is closed by the next call to replace, and then renewed; it
	// lets a waiter (a test) know that a read has completed.
	reported chan struct{}
}

func newFileErrors(logger *slog.Logger) *fileErrors {
	return &fileErrors{logger: logger, byPath: map[string]string{}, reported: make(chan struct{})}
}

// replace makes next the current report and logs the difference from the
// previous one. It is called once per read, before the read's result is
// published to the collection, so whoever sees the result sees the report
// that goes with it.
func (e *fileErrors) replace(next map[string]string) {
	e.mu.Lock()
	prev := e.byPath
	e.byPath = next
	close(e.reported)
	e.reported = make(chan struct{})
	e.mu.Unlock()

	for _, path := range slices.Sorted(maps.Keys(next)) {
		if prev[path] != next[path] {
			e.logger.Error("cannot use file", "path", path, "error", next[path])
		}
	}
	for _, path := range slices.Sorted(maps.Keys(prev)) {
		if _, still := next[path]; !still {
			e.logger.Info("file problem cleared", "path", path)
		}
	}
}

// snapshot returns a copy of the current report: problem by file path.
func (e *fileErrors) snapshot() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.byPath)
}

// nextReport returns a channel closed when the next read completes.
func (e *fileErrors) nextReport() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reported
}
