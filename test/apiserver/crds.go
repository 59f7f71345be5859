package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
)

// Modules whose CRD manifests are installed, and where the manifests sit
// inside them.
const (
	gatewayAPIModule = "sigs.k8s.io/gateway-api"
	// gatewayAPICRDs is the standard release channel, what a cluster
	// installing Gateway API's standard-install.yaml gets.
	gatewayAPICRDs = "config/crd/standard"
	istioAPIModule = "istio.io/api"
	istioCRDs      = "kubernetes/customresourcedefinitions.gen.yaml"
)

// CRDPaths returns the Gateway API standard-channel CRD folder and the
// Istio CRD file, taken from the very module versions go.mod requires, so
// the CRDs always match the Go types tests and the daemon are built with.
// It asks the go command (go mod download -json, which only reads the module
// cache when the modules are already there), so it must run inside this
// module, as go test does.
func CRDPaths(ctx context.Context) ([]string, error) {
	dirs, err := moduleDirs(ctx, gatewayAPIModule, istioAPIModule)
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(dirs[gatewayAPIModule], gatewayAPICRDs),
		filepath.Join(dirs[istioAPIModule], istioCRDs),
	}, nil
}

// moduleDirs maps each module path to its folder in the module cache, for
// the version in the main module's build list.
func moduleDirs(ctx context.Context, modules ...string) (map[string]string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", append([]string{"mod", "download", "-json"}, modules...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("locating modules %v with %q: %w: %s", modules, cmd.String(), err, stderr.Bytes())
	}
	dirs := make(map[string]string, len(modules))
	dec := json.NewDecoder(&stdout)
	for {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decoding go mod download output: %w", err)
		}
		if m.Error != "" || m.Dir == "" {
			return nil, fmt.Errorf("module %s@%s not available: %s", m.Path, m.Version, m.Error)
		}
		dirs[m.Path] = m.Dir
	}
	for _, m := range modules {
		if dirs[m] == "" {
			return nil, fmt.Errorf("go mod download did not report module %s", m)
		}
	}
	return dirs, nil
}
