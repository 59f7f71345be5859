package xds

import "time"

// DebounceOptions shape the push pipeline's debounce: a push waits until no
// change arrived for Quiet, but never longer than Max after the first
// change it carries, so a steady trickle of changes cannot hold pushes back
// forever. istiod's defaults are 100ms and 10s.
type DebounceOptions struct {
	Quiet time.Duration
	Max   time.Duration
}

// debounce merges the requests of in and hands each merged request to push,
// one at a time, until stop is closed. A zero Quiet pushes every request at
// once.
func debounce(in <-chan *PushRequest, push func(*PushRequest), opts DebounceOptions, stop <-chan struct{}) {
	var (
		merged   *PushRequest
		first    time.Time
		quiet    = time.NewTimer(time.Hour)
		timerSet bool
	)
	quiet.Stop()
	defer quiet.Stop()
	for {
		select {
		case <-stop:
			return
		case r := <-in:
			if merged == nil {
				first = time.Now()
			}
			merged = merged.Merge(r)
			if opts.Quiet <= 0 {
				push(merged)
				merged, timerSet = nil, false
				continue
			}
			wait := opts.Quiet
			if opts.Max > 0 {
				wait = min(wait, opts.Max-time.Since(first))
			}
			if timerSet {
				quiet.Stop()
			}
			quiet.Reset(max(wait, 0))
			timerSet = true
		case <-quiet.C:
			timerSet = false
			if merged != nil {
				push(merged)
				merged = nil
			}
		}
	}
}
