package files

import "time"

// debouncer turns a stream of change notifications into few reads. It fires
// once changes have been quiet for the quiet period, or once maxDelay has
// passed since the first change not yet read, whichever comes first, so a
// burst is read once after it ends and a stream that never pauses is still
// read now and then.
//
// A debouncer belongs to one goroutine: the one that calls changed, receives
// from C and calls fired.
type debouncer struct {
	quiet    time.Duration
	maxDelay time.Duration
	timer    *time.Timer
	// pendingSince is when the first change not yet read arrived; zero when
	// every change has been read.
	pendingSince time.Time
}

func newDebouncer(quiet time.Duration) *debouncer {
	timer := time.NewTimer(quiet)
	timer.Stop()
	return &debouncer{quiet: quiet, maxDelay: quiet * maxDelayFactor, timer: timer}
}

// changed records a change: the read is pushed back to a quiet period from
// now, but never beyond maxDelay after the first pending change.
func (d *debouncer) changed() {
	now := time.Now()
	if d.pendingSince.IsZero() {
		d.pendingSince = now
	}
	wait := min(d.quiet, d.pendingSince.Add(d.maxDelay).Sub(now))
	d.timer.Reset(max(wait, 0))
}

// C delivers a value when it is time to read.
func (d *debouncer) C() <-chan time.Time { return d.timer.C }

// fired records that a read is starting: changes from now on start a new
// burst.
func (d *debouncer) fired() { d.pendingSince = time.Time{} }

// stop releases the timer.
func (d *debouncer) stop() { d.timer.Stop() }
