package apiserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Versions of the binaries hack/install-tools.sh builds. Keep them in step
// with that script: the default assets folder is named after them.
const (
	// KubeVersion is the kube-apiserver release the tests run against; it
	// matches the k8s.io/* v0.37.x client libraries in go.mod.
	KubeVersion = "v1.37.2"
	// EtcdVersion is the etcd release backing the API server. 3.6 serves
	// the watch progress requests kube-apiserver 1.37 relies on.
	EtcdVersion = "v3.6.16"
)

// Environment variables the harness reads.
const (
	// EnvAssets names a folder holding kube-apiserver and etcd, as
	// controller-runtime's envtest and setup-envtest use it.
	EnvAssets = "KUBEBUILDER_ASSETS"
	// EnvToolsDir overrides the root of the tools cache that
	// hack/install-tools.sh fills (default $HOME/.cache/meshcp/tools).
	EnvToolsDir = "MESHCP_TOOLS_DIR"
	// EnvRequire, set to 1, makes missing binaries fail tests instead of
	// skipping them. CI sets it so a broken install cannot pass as green.
	EnvRequire = "MESHCP_REQUIRE_APISERVER"
)

// installHint tells a human how to get the binaries.
const installHint = "run hack/install-tools.sh and set " + EnvAssets + " to the folder it prints (or leave it unset to use the default cache)"

// Tools are the control-plane binaries a Server runs.
type Tools struct {
	// Dir is the folder the binaries were found in.
	Dir string
	// KubeAPIServer is the kube-apiserver binary.
	KubeAPIServer string
	// Etcd is the etcd binary.
	Etcd string
}

// FindTools locates kube-apiserver and etcd: in $KUBEBUILDER_ASSETS when
// set, else in the folder hack/install-tools.sh builds into. The error
// says what is missing and how to install it.
func FindTools() (Tools, error) {
	dir := os.Getenv(EnvAssets)
	if dir == "" {
		d, err := defaultAssetsDir()
		if err != nil {
			return Tools{}, err
		}
		dir = d
	}
	tools := Tools{
		Dir:           dir,
		KubeAPIServer: filepath.Join(dir, "kube-apiserver"),
		Etcd:          filepath.Join(dir, "etcd"),
	}
	var missing []string
	for _, bin := range []string{tools.KubeAPIServer, tools.Etcd} {
		if err := checkExecutable(bin); err != nil {
			missing = append(missing, err.Error())
		}
	}
	if len(missing) > 0 {
		return tools, fmt.Errorf("control-plane binaries missing (%s); %s", strings.Join(missing, "; "), installHint)
	}
	return tools, nil
}

// RequireTools returns the control-plane binaries, or ends the test when
// they are missing: it fails when MESHCP_REQUIRE_APISERVER=1 (CI, where the
// test script installs them, so absence is a bug) and skips otherwise (a
// developer who has not built them yet).
func RequireTools(t testing.TB) Tools {
	t.Helper()
	tools, err := FindTools()
	if err != nil {
		if required() {
			t.Fatalf("%v (%s=1 makes this a failure)", err, EnvRequire)
		} else {
			t.Skipf("skipping: %v", err)
		}
	}
	return tools
}

// required reports whether missing binaries must fail tests.
func required() bool {
	v := os.Getenv(EnvRequire)
	return v == "1" || strings.EqualFold(v, "true")
}

// defaultAssetsDir is the folder hack/install-tools.sh prints.
func defaultAssetsDir() (string, error) {
	root := os.Getenv(EnvToolsDir)
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the default tools cache: %w; set %s", err, EnvAssets)
		}
		root = filepath.Join(home, ".cache", "meshcp", "tools")
	}
	return filepath.Join(root, "assets-kube-"+KubeVersion+"-etcd-"+EtcdVersion), nil
}

// checkExecutable returns an error naming path unless it is an executable
// regular file (following symlinks).
func checkExecutable(path string) error {
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
