// Package tools finds the command-line tools that meshcp's tests run for
// real (helm, dockerfilelint, and the kube-apiserver and etcd that
// test/apiserver starts). hack/install-tools.sh installs each into its own
// versioned folder under one cache root; this package looks there.
//
// A test that needs a missing tool is skipped on a developer's machine and
// fails in CI: hack/test.sh installs the tools and sets
// MESHCP_REQUIRE_TOOLS=1, so a broken install cannot pass as green.
package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Versions hack/install-tools.sh installs; keep them in step with it.
const (
	HelmVersion           = "v4.3.2"
	DockerfilelintVersion = "1.8.0"
)

// Environment variables read here.
const (
	// EnvRoot overrides the cache root (default $HOME/.cache/meshcp/tools).
	EnvRoot = "MESHCP_TOOLS_DIR"
	// EnvRequire, set to 1, makes a missing tool fail the test instead of
	// skipping it.
	EnvRequire = "MESHCP_REQUIRE_TOOLS"
)

// InstallHint tells a human how to get the tools.
const InstallHint = "run hack/install-tools.sh"

// Root is the folder hack/install-tools.sh installs into.
func Root() (string, error) {
	if root := os.Getenv(EnvRoot); root != "" {
		return root, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the tools cache: %w; set %s", err, EnvRoot)
	}
	return filepath.Join(home, ".cache", "meshcp", "tools"), nil
}

// Path returns the path of a file under the cache root, or an error
// naming it and how to install it when it is not an executable file.
func Path(elem ...string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	p := filepath.Join(append([]string{root}, elem...)...)
	if err := CheckExecutable(p); err != nil {
		return p, fmt.Errorf("%w; %s", err, InstallHint)
	}
	return p, nil
}

// Helm returns the helm binary, or ends the test (see Missing).
func Helm(t testing.TB) string {
	t.Helper()
	p, err := Path("helm-"+HelmVersion, "helm")
	if err != nil {
		Missing(t, err)
	}
	return p
}

// Dockerfilelint returns the dockerfilelint command, or ends the test
// (see Missing).
func Dockerfilelint(t testing.TB) string {
	t.Helper()
	p, err := Path("dockerfilelint-"+DockerfilelintVersion, "node_modules", ".bin", "dockerfilelint")
	if err != nil {
		Missing(t, err)
	}
	return p
}

// Missing ends a test whose tool is missing: it fails when
// MESHCP_REQUIRE_TOOLS=1 (CI, where hack/test.sh installs the tools, so
// absence is a bug) and skips otherwise.
func Missing(t testing.TB, err error) {
	t.Helper()
	if Required() {
		t.Fatalf("%v (%s=1 makes this a failure)", err, EnvRequire)
	} else {
		t.Skipf("skipping: %v", err)
	}
}

// Required reports whether missing tools must fail tests.
func Required() bool {
	v := os.Getenv(EnvRequire)
	return v == "1" || strings.EqualFold(v, "true")
}

// CheckExecutable returns an error naming path unless it is an executable
// regular file (following symlinks).
func CheckExecutable(path string) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist", path)
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", path, err)
	}
	if !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}
