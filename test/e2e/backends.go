package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/meshcp/meshcp/test/grpctraffic"
)

// Backend is one gRPC server of a traffic test: a workload behind a
// Service, answering every RPC with its own name.
type Backend struct {
	// Name is what it answers, and the name of its Pod.
	Name string
	// Version is its version label; subsets select by it.
	Version string
	// Addr is the address it listens on, "ip:port".
	Addr string
}

// IP is the backend's address without the port.
func (b Backend) IP() string {
	host, _, _ := net.SplitHostPort(b.Addr)
	return host
}

// serveBackends listens on each backend's address and serves it; the
// returned function stops them all.
func serveBackends(backends []Backend) (stop func(), err error) {
	var servers []*grpc.Server
	stop = func() {
		for _, s := range servers {
			s.Stop()
		}
	}
	for _, b := range backends {
		lis, err := net.Listen("tcp", b.Addr)
		if err != nil {
			stop()
			return nil, fmt.Errorf("backend %s on %s: %w", b.Name, b.Addr, err)
		}
		servers = append(servers, grpctraffic.Serve(lis, b.Name))
	}
	return stop, nil
}

// StartLoopbackBackends serves backends on loopback addresses in this
// process (file mode accepts loopback endpoints): one free port, shared by
// all of them, each on its own 127.x address. They stop when the test
// ends.
func StartLoopbackBackends(t testing.TB, names, versions, ips []string) []Backend {
	t.Helper()
	lis, err := net.Listen("tcp", ips[0]+":0")
	if err != nil {
		t.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	_ = lis.Close()
	backends := make([]Backend, len(names))
	for i := range names {
		backends[i] = Backend{Name: names[i], Version: versions[i], Addr: net.JoinHostPort(ips[i], fmt.Sprint(port))}
	}
	stop, err := serveBackends(backends)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return backends
}

// backendsEnv tells a re-executed test binary to be a backend process
// instead: "name=ip:port;name=ip:port...". TestMain checks it.
const backendsEnv = "MESHCP_E2E_BACKENDS"

// readyLine is what a backend process prints once it listens.
const readyLine = "backends ready"

// RunBackendProcess is the whole life of a backend process: serve the
// backends spec names, say so on stdout, and stop when stdin closes (the
// test ended, or died). It returns the exit code.
func RunBackendProcess(spec string) int {
	var backends []Backend
	for _, part := range strings.Split(spec, ";") {
		name, addr, ok := strings.Cut(part, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "%s: %q is not name=ip:port\n", backendsEnv, part)
			return 2
		}
		backends = append(backends, Backend{Name: name, Addr: addr})
	}
	stop, err := serveBackends(backends)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	fmt.Println(readyLine)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startBackendProcess runs this test binary as a backend process inside a
// network namespace, and waits until it listens. It is stopped when the
// test ends.
func startBackendProcess(t testing.TB, netns string, backends []Backend) {
	t.Helper()
	var spec []string
	for _, b := range backends {
		spec = append(spec, b.Name+"="+b.Addr)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", netns, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), backendsEnv+"="+strings.Join(spec, ";"))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the backends in %s: %v", netns, err)
	}
	exited := make(chan error, 1)
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			if !found && sc.Text() == readyLine {
				found = true
				ready <- true
			}
		}
		if !found {
			ready <- false
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(StopTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("the backend process in %s exited before it listened", netns)
		}
	case <-time.After(StartTimeout):
		t.Fatalf("the backend process in %s did not listen within %s", netns, StartTimeout)
	}
}
