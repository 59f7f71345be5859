package krt_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine outlives the tests: every
// collection must release its goroutines when its stop channel closes.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
