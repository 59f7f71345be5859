// Package logging gives each part of meshcp its own log level, a scope:
// "krt", "xds", "gateway"... A scope's level comes from its environment
// variable (KRT_LOG_LEVEL for "krt"), then LOG_LEVEL, then a default, and a
// daemon flag such as --log-level=krt=debug,xds=warn can set it at run
// time. Records carry the scope as an attribute so they can be told apart.
package logging

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// EnvVar is the environment variable that sets the level of scope.
func EnvVar(scope string) string {
	return strings.ToUpper(strings.ReplaceAll(scope, "-", "_")) + "_LOG_LEVEL"
}

// LevelFromEnv returns the level the environment sets for scope:
// SCOPE_LOG_LEVEL, else LOG_LEVEL, else def. An unreadable value is
// ignored, so a typo cannot silence a component.
func LevelFromEnv(scope string, def slog.Level) slog.Level {
	for _, name := range []string{EnvVar(scope), "LOG_LEVEL"} {
		if v := os.Getenv(name); v != "" {
			if l, err := ParseLevel(v); err == nil {
				return l
			}
		}
	}
	return def
}

// ParseLevel reads "debug", "info", "warn" (or "warning"), "error", case
// insensitively, or a number as slog understands it.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if strings.EqualFold(s, "warning") {
		s = "warn"
	}
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// NewScopedHandler wraps h so that records are filtered at level, not at
// h's own level, and carry the attribute scope=name. Records that pass are
// written through h even when h would filter them itself: the scope's
// level is the one that counts.
func NewScopedHandler(h slog.Handler, scope string, level slog.Leveler) slog.Handler {
	return &scopedHandler{inner: h.WithAttrs([]slog.Attr{slog.String("scope", scope)}), level: level}
}

type scopedHandler struct {
	inner slog.Handler
	level slog.Leveler
}

func (h *scopedHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *scopedHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.inner.Handle(ctx, r)
}

func (h *scopedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &scopedHandler{inner: h.inner.WithAttrs(attrs), level: h.level}
}

func (h *scopedHandler) WithGroup(name string) slog.Handler {
	return &scopedHandler{inner: h.inner.WithGroup(name), level: h.level}
}

// Levels holds the level of every scope of a process, adjustable at run
// time. Loggers made by Logger follow later changes.
type Levels struct {
	def    slog.Level
	mu     sync.Mutex
	scopes map[string]*slog.LevelVar
}

// ParseLevels reads a spec such as "info,krt=debug,xds=warn": a bare level
// is the default for every scope, scope=level sets one scope. Scopes the
// spec does not name take their level from the environment (see
// LevelFromEnv), then from the default.
func ParseLevels(spec string) (*Levels, error) {
	l := &Levels{def: LevelFromEnv("", slog.LevelInfo), scopes: map[string]*slog.LevelVar{}}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		scope, value, scoped := strings.Cut(part, "=")
		if !scoped {
			value, scope = scope, ""
		}
		level, err := ParseLevel(value)
		if err != nil {
			return nil, fmt.Errorf("--log-level %q: %w", part, err)
		}
		if scope == "" {
			l.def = level
			continue
		}
		v := new(slog.LevelVar)
		v.Set(level)
		l.scopes[scope] = v
	}
	return l, nil
}

// Logger returns a logger for scope writing through h.
func (l *Levels) Logger(h slog.Handler, scope string) *slog.Logger {
	return slog.New(NewScopedHandler(h, scope, l.level(scope)))
}

// Set changes the level of scope for every logger of that scope.
func (l *Levels) Set(scope string, level slog.Level) {
	l.level(scope).Set(level)
}

// level returns the variable holding the level of scope, creating it from
// the environment and the default on first use.
func (l *Levels) level(scope string) *slog.LevelVar {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.scopes[scope]
	if !ok {
		v = new(slog.LevelVar)
		v.Set(LevelFromEnv(scope, l.def))
		l.scopes[scope] = v
	}
	return v
}
