// Package krttest holds what tests of krt collections share: a stop channel
// tied to the test, an event tracker, a sync gate and the conformance rig
// that every collection kind must pass.
package krttest

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshcp/meshcp/pkg/krt"
)

// Timeout bounds every wait of this package. It only limits how long a
// broken test hangs; passing tests never come near it.
const Timeout = 20 * time.Second

// Stop returns a stop channel closed when the test ends.
func Stop(t testing.TB) chan struct{} {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return stop
}

// Logger returns a logger that writes to the test's log, so expected
// errors show up with the test that caused them and nowhere else.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	if w.t.Context().Err() != nil {
		return len(p), nil // the test is over; testing.T must not be used
	}
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// Tracker records the events a handler receives as "add/key",
// "update/key" or "delete/key" strings, for assertions.
type Tracker[T any] struct {
	t       testing.TB
	mu      sync.Mutex
	events  []string
	changed chan struct{}
}

// NewTracker returns an empty tracker.
func NewTracker[T any](t testing.TB) *Tracker[T] {
	return &Tracker[T]{t: t, changed: make(chan struct{}, 1)}
}

// Track is a handler for Register.
func (tr *Tracker[T]) Track(e krt.Event[T]) {
	tr.TrackBatch([]krt.Event[T]{e})
}

// TrackBatch is a handler for RegisterBatch.
func (tr *Tracker[T]) TrackBatch(events []krt.Event[T]) {
	tr.mu.Lock()
	for _, e := range events {
		tr.events = append(tr.events, fmt.Sprintf("%s/%s", e.Event, krt.GetKey(e.Latest())))
	}
	tr.mu.Unlock()
	select {
	case tr.changed <- struct{}{}:
	default:
	}
}

// Events returns every event recorded and not yet consumed by a Wait.
func (tr *Tracker[T]) Events() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.events)
}

// WaitOrdered waits until the next recorded events are exactly want, in
// order, and consumes them.
func (tr *Tracker[T]) WaitOrdered(want ...string) {
	tr.t.Helper()
	tr.wait(want, func(got []string) bool { return slices.Equal(got, want) })
}

// WaitUnordered waits until the next recorded events are want in any order,
// and consumes them.
func (tr *Tracker[T]) WaitUnordered(want ...string) {
	tr.t.Helper()
	sorted := slices.Sorted(slices.Values(want))
	tr.wait(want, func(got []string) bool {
		return slices.Equal(slices.Sorted(slices.Values(got)), sorted)
	})
}

func (tr *Tracker[T]) wait(want []string, ok func(got []string) bool) {
	tr.t.Helper()
	deadline := time.After(Timeout)
	for {
		tr.mu.Lock()
		if len(tr.events) >= len(want) {
			got := tr.events[:len(want)]
			if !ok(got) {
				all := slices.Clone(tr.events)
				tr.mu.Unlock()
				tr.t.Fatalf("events: got %v, want %v first", all, want)
				return
			}
			tr.events = slices.Clone(tr.events[len(want):])
			tr.mu.Unlock()
			return
		}
		tr.mu.Unlock()
		select {
		case <-tr.changed:
		case <-deadline:
			tr.t.Fatalf("timed out waiting for events %v; got %v", want, tr.Events())
			return
		}
	}
}

// Empty asserts that no event is waiting to be consumed.
func (tr *Tracker[T]) Empty() {
	tr.t.Helper()
	if got := tr.Events(); len(got) > 0 {
		tr.t.Fatalf("unexpected events: %v", got)
	}
}

// NewSyncGate returns a krt.SyncGate, for tests that need to observe a
// collection before its initial state is complete.
func NewSyncGate() *krt.SyncGate { return krt.NewSyncGate() }

// WaitFor waits until cond holds, checking it at the start and after every
// event of c, and fails the test after Timeout.
func WaitFor[T any](t testing.TB, c krt.Collection[T], cond func() bool) {
	t.Helper()
	if !Eventually(c, cond) {
		t.Fatal("timed out waiting for a condition on the collection")
	}
}

// Eventually reports whether cond holds within Timeout, checking it at the
// start and after every event of c.
func Eventually[T any](c krt.Collection[T], cond func() bool) bool {
	changed := make(chan struct{}, 1)
	reg := c.RegisterBatch(func([]krt.Event[T]) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}, false)
	defer reg.UnregisterHandler()
	deadline := time.After(Timeout)
	for !cond() {
		select {
		case <-changed:
		case <-deadline:
			return cond()
		}
	}
	return true
}
