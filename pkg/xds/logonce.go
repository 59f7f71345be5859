package xds

import (
	"context"
	"log/slog"
	"sync"
)

// onceLog remembers which messages were logged, so that what a thousand
// clients hit at once (a NACK of the same config, a builder warning about
// the same route) is logged once, at the level given, and then at debug
// level. It forgets everything past maxOnceKeys, so a flood of distinct
// messages cannot grow it without bound.
type onceLog struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

const maxOnceKeys = 10000

// first reports whether key is new, remembering it.
func (o *onceLog) first(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.seen[key]; ok {
		return false
	}
	if o.seen == nil || len(o.seen) >= maxOnceKeys {
		o.seen = map[string]struct{}{}
	}
	o.seen[key] = struct{}{}
	return true
}

// logOnce logs msg at level the first time key is seen, at debug level
// after that.
func (s *Server) logOnce(level slog.Level, key, msg string, args ...any) {
	if !s.once.first(key) {
		level = slog.LevelDebug
	}
	s.log.Log(context.Background(), level, msg, args...)
}
