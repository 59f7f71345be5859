package load

import (
	"fmt"
	"testing"
	"time"

	"github.com/meshcp/meshcp/test/e2e"
)

// TestClientKindsSeeChanges checks both kinds of synthetic client against
// the daemon: each subscribes, gets its first answer, and counts a change
// only once it has ACKed it. grpc-go's client is the reference for the wire
// client's framing; a broken wire client fails here, not as a benchmark
// timeout.
func TestClientKindsSeeChanges(t *testing.T) {
	dir := t.TempDir()
	w := &fileWriter{dir: dir}
	for i := range virtualServices {
		w.writeVS(t, i, "initial")
	}
	d := e2e.StartDaemon(t, "--config-dir", dir, "--log-level", "warn,bootstrap=info")
	d.WaitReady()
	op := 0
	for _, c := range []struct {
		kind     string
		creditAt uint32
	}{
		{kind: "wire"},
		{kind: "wire", creditAt: 1}, // flow-control credit after every frame
		{kind: "grpc"},
	} {
		for _, delta := range []bool{false, true} {
			t.Run(fmt.Sprintf("kind=%s/creditAt=%d/delta=%v", c.kind, c.creditAt, delta), func(t *testing.T) {
				f, _, err := newFleet(fleetConfig{addr: d.Addrs["xds"], typeURL: vsType, n: 3, delta: delta, kind: c.kind, creditAt: c.creditAt, connect: 30 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				defer f.close()
				for range 2 {
					op++
					marker := fmt.Sprintf("check-%d", op)
					o := f.expect(marker)
					w.write(t, marker)
					if err := f.wait(o, 30*time.Second); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}
