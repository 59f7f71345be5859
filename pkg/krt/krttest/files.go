package krttest

import (
	"os"
	"testing"
)

// WriteFile replaces the file at path at once (written beside it, then
// renamed over it), as editors and kubectl cp do, so a watch of its folder
// never reads half a file.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
