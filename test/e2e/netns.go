package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/test/tools"
)

// TestHosts are hosts a test makes for itself, so that endpoints can have
// addresses the real API server accepts in EndpointSlices (it refuses
// loopback ones): a network namespace joined to this one by a veth pair,
// with the addresses 10.250.N.2, .3, ... inside it and 10.250.N.1 on this
// side, where N is the first subnet no other test run holds (the veth's
// name is the lock). Everything is removed when the test ends, whether it
// passed or not. It needs root and iproute2's ip; without them the test
// is skipped, or fails under MESHCP_REQUIRE_TOOLS=1.
type TestHosts struct {
	// Netns is the network namespace's name.
	Netns string
	// IPs are the addresses inside it.
	IPs []string
}

// StartTestHosts makes n addresses on a fresh network namespace.
func StartTestHosts(t testing.TB, n int) *TestHosts {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		tools.Missing(t, fmt.Errorf("test hosts need iproute2's ip: %w", err))
	}
	if os.Geteuid() != 0 {
		tools.Missing(t, errors.New("test hosts (a network namespace and a veth pair) need root"))
	}
	for subnet := 0; subnet < 256; subnet++ {
		hostIf := fmt.Sprintf("mcpe2e%d", subnet)
		if out, err := exec.Command("ip", "link", "add", hostIf, "type", "veth", "peer", "name", hostIf+"n").CombinedOutput(); err != nil {
			if strings.Contains(string(out), "File exists") {
				continue // another run holds this subnet
			}
			t.Fatalf("ip link add %s: %v: %s", hostIf, err, out)
		}
		h := &TestHosts{Netns: fmt.Sprintf("meshcp-e2e-%d", subnet)}
		t.Cleanup(func() {
			// Deleting one end of the pair deletes both; then the namespace.
			run(t, "ip", "link", "del", hostIf)
			run(t, "ip", "netns", "del", h.Netns)
		})
		prefix := fmt.Sprintf("10.250.%d.", subnet)
		if out, err := exec.Command("ip", "route", "show", prefix+"0/24").CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Fatalf("10.250.%d.0/24 is routed already (%s %v); remove what holds it", subnet, out, err)
		}
		steps := [][]string{
			{"ip", "netns", "add", h.Netns},
			{"ip", "link", "set", hostIf + "n", "netns", h.Netns},
			{"ip", "addr", "add", prefix + "1/24", "dev", hostIf},
			{"ip", "link", "set", hostIf, "up"},
			{"ip", "-n", h.Netns, "link", "set", "lo", "up"},
		}
		for i := range n {
			ip := fmt.Sprintf("%s%d", prefix, i+2)
			h.IPs = append(h.IPs, ip)
			steps = append(steps, []string{"ip", "-n", h.Netns, "addr", "add", ip + "/24", "dev", hostIf + "n"})
		}
		steps = append(steps, []string{"ip", "-n", h.Netns, "link", "set", hostIf + "n", "up"})
		for _, s := range steps {
			if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v: %s", strings.Join(s, " "), err, out)
			}
		}
		return h
	}
	t.Fatal("every subnet 10.250.0-255.0/24 is held by another test run")
	return nil
}

// StartBackends serves backends inside the namespace, in a process of
// their own; it returns once they listen.
func (h *TestHosts) StartBackends(t testing.TB, backends []Backend) {
	t.Helper()
	startBackendProcess(t, h.Netns, backends)
}

// run runs a clean-up command, reporting a failure without stopping.
func run(t testing.TB, name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Errorf("cleaning up: %s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}
