package files

import (
	"log/slog"

	"github.com/fsnotify/fsnotify"
)

// watchLoop runs on one goroutine per collection: it turns what fsnotify
// reports into debounced calls of read, until stop closes. It does not look
// at which file an event names: any event, and any watch error (a lost
// event, say), only means "read again", and read works out what changed.
type watchLoop struct {
	watcher  *fsnotify.Watcher
	debounce *debouncer
	read     func()
	logger   *slog.Logger
}

func newWatchLoop(watcher *fsnotify.Watcher, s settings, read func()) *watchLoop {
	return &watchLoop{watcher: watcher, debounce: newDebouncer(s.debounce), read: read, logger: s.logger}
}

// run delivers reads until stop closes, then closes the watcher, which
// waits for fsnotify's own goroutine to end.
func (l *watchLoop) run(stop <-chan struct{}) {
	defer l.watcher.Close()
	defer l.debounce.stop()
	for {
		select {
		case <-stop:
			return
		case ev, ok := <-l.watcher.Events:
			if !ok {
				return
			}
			l.logger.Debug("file event", "event", ev.String())
			l.debounce.changed()
		case err, ok := <-l.watcher.Errors:
			if !ok {
				return
			}
			l.logger.Warn("file watch error; reading everything again", "error", err)
			l.debounce.changed()
		case <-l.debounce.C():
			l.debounce.fired()
			l.read()
		}
	}
}
