package krttest

import (
	"strings"
	"sync"
)

// Logs keeps the lines a logger writes (an io.Writer for a slog handler),
// for tests of what is logged and how often.
type Logs struct {
	mu    sync.Mutex
	lines []string
}

// Write keeps p as one line.
func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(string(p)))
	return len(p), nil
}

// Count returns how many lines hold every one of all.
func (l *Logs) Count(all ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		match := true
		for _, s := range all {
			match = match && strings.Contains(line, s)
		}
		if match {
			n++
		}
	}
	return n
}
