package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/examples"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// With no flags but its ports, run outside a checkout, the binary serves
// its embedded examples, is ready, and exits 0 on SIGTERM.
func TestFileModeDefaults(t *testing.T) {
	d := StartDaemonIn(t, t.TempDir())
	if d.Addrs["mode"] != "file" {
		t.Fatalf("started in mode %q", d.Addrs["mode"])
	}
	d.WaitReady()
	d.WaitForOutputs(vsCollection, "bookinfo/bookinfo", "bookinfo/ratings", "bookinfo/reviews")
	z, err := d.Configz()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range z.Kinds {
		for _, v := range k.Rejected {
			t.Errorf("the examples have a rejected %s %s: %+v", k.Kind, v.Key, v.Errors)
		}
	}
	if err := d.Stop(); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	if len(d.LogLines(`msg="shutting down"`)) != 1 {
		t.Errorf("no shutdown line in the log:\n%s", d.LogTail(10))
	}
}

// In a watched folder a broken file and an invalid object are rejected
// alone, each named by file and line, while the rest keeps flowing.
func TestFileModeBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, examples.FS); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config")
	d := StartDaemon(t, "--config-dir", cfg, "--mesh-config", filepath.Join(dir, "mesh.yaml"), "--debounce", "20ms")
	d.WaitReady()

	krttest.WriteFile(t, filepath.Join(cfg, "broken.yaml"), "kind: VirtualService\nmetadata: [unclosed\n")
	krttest.WriteFile(t, filepath.Join(cfg, "more.yaml"), `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: details, namespace: bookinfo}
spec:
  hosts: [details]
  http:
  - route:
    - destination: {host: details}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: negative, namespace: bookinfo}
spec:
  hosts: [details]
  http:
  - route:
    - destination: {host: details, subset: v1}
      weight: -20
`)
	d.WaitForOutputs(vsCollection, "bookinfo/bookinfo", "bookinfo/details", "bookinfo/ratings", "bookinfo/reviews")
	v := d.WaitForVerdict(vsKind, "bookinfo/negative", false)
	if !strings.HasSuffix(v.Origin, "more.yaml:10") {
		t.Errorf("rejected object's origin = %q, want more.yaml:10 (file and line)", v.Origin)
	}
	if len(v.Errors) == 0 || v.Errors[0].Path != "spec.http[0].route[0].weight" {
		t.Errorf("verdict on bookinfo/negative = %+v, want an error on spec.http[0].route[0].weight", v)
	}
	body := d.WaitFor("/debug/configz", "broken.yaml listed as unreadable", func(_ int, body []byte) bool {
		return bytes.Contains(body, []byte("broken.yaml"))
	})
	if !bytes.Contains(body, []byte(`"unreadable"`)) {
		t.Errorf("broken.yaml not under unreadable:\n%s", body)
	}
	waitLogLines(t, d, 1, rejectedLogMsg, "object=bookinfo/negative", "more.yaml:10")
}
