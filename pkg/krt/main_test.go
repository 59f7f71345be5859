package krt_test

import (
	"testing"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// TestMain turns krt's checks on and fails the package if any goroutine
// outlives the tests: every collection must release its goroutines when its
// stop channel closes.
func TestMain(m *testing.M) {
	krttest.Main(m)
}

// countsRuns is for collections whose test counts transformation runs: the
// purity check would run each transformation twice, so it is off for them.
var countsRuns = krt.WithChecks(krt.CheckMutation)
