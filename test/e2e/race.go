//go:build race

package e2e

// raceEnabled is true when the tests run with the race detector, so the
// daemon is built with it too.
const raceEnabled = true
