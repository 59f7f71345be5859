package files_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshcp/meshcp/pkg/krt/files"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// burstWrites is how many writes a burst makes, and maxBurstParses how
// many parses of it are still "far fewer". With a quiet period far longer
// than the burst, one parse is expected; the margin absorbs a loaded
// machine pausing the writer for a whole quiet period now and then.
const (
	burstWrites    = 50
	maxBurstParses = burstWrites / 5
	burstQuiet     = 500 * time.Millisecond
)

func TestBurstOfWritesIsParsedFewTimes(t *testing.T) {
	t.Run("folder", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "a.json")
		p := newParser()
		c, err := files.NewFolderCollectionWithOptions(dir, p.folder, krttest.Stop(t),
			files.Options{Debounce: burstQuiet, Logger: krttest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range burstWrites {
			mustWrite(t, path, itemsJSON(newItem("ns/a", fmt.Sprint(i))))
		}
		waitForValue(t, c, "ns/a", fmt.Sprint(burstWrites-1))
		assertFewParses(t, p.callsOf(path))
	})
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.json")
		p := newParser()
		s, err := files.NewFileSingletonWithOptions(path, p.single, krttest.Stop(t),
			files.Options{Debounce: burstQuiet, Logger: krttest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range burstWrites {
			mustWriteAtomic(t, path, itemJSON("ns/config", fmt.Sprint(i)))
		}
		waitForValue(t, s.AsCollection(), "ns/config", fmt.Sprint(burstWrites-1))
		assertFewParses(t, p.callsOf(""))
	})
}

func assertFewParses(t *testing.T, parses int) {
	t.Helper()
	t.Logf("%d writes, %d parses", burstWrites, parses)
	if parses > maxBurstParses {
		t.Errorf("%d writes caused %d parses, want at most %d", burstWrites, parses, maxBurstParses)
	}
}
