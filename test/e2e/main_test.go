package e2e

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The test binary re-executed inside a test's network namespace is a
	// backend process, not a test run (see StartTestHosts).
	if spec := os.Getenv(backendsEnv); spec != "" {
		os.Exit(RunBackendProcess(spec))
	}
	goleak.VerifyTestMain(m)
}
