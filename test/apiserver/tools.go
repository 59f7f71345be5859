package apiserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/test/tools"
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

// EnvAssets names a folder holding kube-apiserver and etcd, as
// controller-runtime's envtest and setup-envtest use it. When it is unset,
// the folder hack/install-tools.sh builds into is used.
const EnvAssets = "KUBEBUILDER_ASSETS"

// installHint tells a human how to get the binaries.
const installHint = tools.InstallHint + " and set " + EnvAssets + " to the folder it prints (or leave it unset to use the default cache)"

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
		root, err := tools.Root()
		if err != nil {
			return Tools{}, err
		}
		dir = filepath.Join(root, "assets-kube-"+KubeVersion+"-etcd-"+EtcdVersion)
	}
	found := Tools{
		Dir:           dir,
		KubeAPIServer: filepath.Join(dir, "kube-apiserver"),
		Etcd:          filepath.Join(dir, "etcd"),
	}
	var missing []string
	for _, bin := range []string{found.KubeAPIServer, found.Etcd} {
		if err := tools.CheckExecutable(bin); err != nil {
			missing = append(missing, err.Error())
		}
	}
	if len(missing) > 0 {
		return found, fmt.Errorf("control-plane binaries missing (%s); %s", strings.Join(missing, "; "), installHint)
	}
	return found, nil
}

// RequireTools returns the control-plane binaries, or ends the test when
// they are missing (see tools.Missing: a failure in CI, a skip elsewhere).
func RequireTools(t testing.TB) Tools {
	t.Helper()
	found, err := FindTools()
	if err != nil {
		tools.Missing(t, err)
	}
	return found
}
