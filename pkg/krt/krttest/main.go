package krttest

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/meshcp/meshcp/pkg/krt"
)

// Main runs a package's tests the way every krt user's tests should run:
// with krt's mutation and strict purity checks on for every collection
// (KRT_CHECKS=all), and failing if any goroutine outlives the tests. Call it
// from TestMain.
func Main(m *testing.M) {
	if err := os.Setenv(krt.ChecksEnv, "all"); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m)
}
