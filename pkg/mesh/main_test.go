package mesh_test

import (
	"testing"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// TestMain turns krt's checks on and fails the package if any goroutine
// outlives the tests: every Watcher must release its file watch and its
// collections when its stop channel closes.
func TestMain(m *testing.M) {
	krttest.Main(m)
}
