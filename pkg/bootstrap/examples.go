package bootstrap

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/meshcp/meshcp/examples"
)

// examplesDir returns the folder of the examples to serve: ./examples in a
// checkout, so edits show up live, or else a copy of the embedded examples
// in a temporary folder that cleanup removes.
func examplesDir() (dir string, cleanup func(), err error) {
	if st, err := os.Stat(filepath.Join("examples", "config")); err == nil && st.IsDir() {
		return "examples", func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "meshcp-examples-")
	if err != nil {
		return "", nil, fmt.Errorf("copying the embedded examples: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	if err := os.CopyFS(tmp, examples.FS); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("copying the embedded examples to %s: %w", tmp, err)
	}
	return tmp, cleanup, nil
}

// exampleFiles lists the embedded examples, for tests and docs.
func exampleFiles() ([]string, error) {
	var out []string
	err := fs.WalkDir(examples.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, path)
		}
		return err
	})
	return out, err
}
