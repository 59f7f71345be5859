package apiserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/test/tools"
)

// recordingTB records how RequireTools ends a test, without ending it.
type recordingTB struct {
	testing.TB
	fatal, skip string
}

func (r *recordingTB) Helper()                        {}
func (r *recordingTB) Fatalf(format string, a ...any) { r.fatal = fmt.Sprintf(format, a...) }
func (r *recordingTB) Skipf(format string, a ...any)  { r.skip = fmt.Sprintf(format, a...) }

func TestFindTools(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvAssets, dir)
	if _, err := FindTools(); err == nil || !strings.Contains(err.Error(), "hack/install-tools.sh") {
		t.Fatalf("FindTools on an empty folder: err = %v, want one naming hack/install-tools.sh", err)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	found, err := FindTools()
	if err != nil {
		t.Fatalf("FindTools: %v", err)
	}
	if found.KubeAPIServer != filepath.Join(dir, "kube-apiserver") || found.Etcd != filepath.Join(dir, "etcd") {
		t.Errorf("FindTools = %+v", found)
	}
}

func TestFindToolsDefaultsToCache(t *testing.T) {
	root := t.TempDir()
	t.Setenv(EnvAssets, "")
	t.Setenv(tools.EnvRoot, root)
	found, err := FindTools()
	want := filepath.Join(root, "assets-kube-"+KubeVersion+"-etcd-"+EtcdVersion)
	if err == nil || found.Dir != want {
		t.Errorf("FindTools = %+v, %v; want a missing-binaries error for %s", found, err, want)
	}
}

func TestRequireToolsSkipsOrFails(t *testing.T) {
	t.Setenv(EnvAssets, t.TempDir())
	for _, tc := range []struct {
		require  string
		wantFail bool
	}{{"", false}, {"0", false}, {"1", true}, {"true", true}} {
		t.Setenv(tools.EnvRequire, tc.require)
		r := &recordingTB{TB: t}
		RequireTools(r)
		if failed := r.fatal != ""; failed != tc.wantFail || (r.skip == "") == (r.fatal == "") {
			t.Errorf("%s=%q: fatal=%q skip=%q; want fail=%v", tools.EnvRequire, tc.require, r.fatal, r.skip, tc.wantFail)
		}
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\n", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := lastLines(tc.in, tc.n); got != tc.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
