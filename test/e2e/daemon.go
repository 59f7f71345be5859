// Package e2e tests the controlplane binary end to end, as a user runs it:
// the real command built from cmd/controlplane, started as a process with
// flags, against a real kube-apiserver and etcd (test/apiserver) or a real
// folder of YAML, and observed only through what a user sees: its HTTP
// endpoints, its logs, its exit status, and the objects it writes.
//
// Run it with the rest of the suite (./hack/test.sh), or alone:
//
//	KUBEBUILDER_ASSETS=$(hack/install-tools.sh | tail -n1) go test ./test/e2e/
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeouts of the daemon's life cycle. Generous: the suite runs with the
// race detector on 2 cores, beside other test binaries.
const (
	// StartTimeout bounds the wait for the daemon's "controlplane started"
	// line.
	StartTimeout = time.Minute
	// StopTimeout bounds a graceful shutdown after SIGTERM.
	StopTimeout = 30 * time.Second
	// WaitTimeout bounds WaitFor.
	WaitTimeout = 30 * time.Second
	// logTailLines is how much of the daemon's log a failed test shows.
	logTailLines = 60
)

// startedMessage is the log line the daemon writes once its servers
// listen; its attributes name the addresses they listen on.
const startedMessage = `msg="controlplane started"`

// Binary builds the controlplane command once per test binary and returns
// its path. It is built with the race detector when the tests are, so a
// data race in the daemon fails the e2e run too.
var Binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "meshcp-e2e-")
	if err != nil {
		return "", fmt.Errorf("creating a folder for the binary: %w", err)
	}
	bin := filepath.Join(dir, "controlplane")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/meshcp/meshcp/cmd/controlplane")
	cmd := exec.Command("go", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", cmd, err, out)
	}
	return bin, nil
})

// Daemon is one controlplane process started for a test.
type Daemon struct {
	t testing.TB
	// Addrs are the attributes of the daemon's start-up line: "debug",
	// "metrics" and "xds" are the addresses of those servers ("" when
	// disabled), "mode" is file or kubernetes.
	Addrs map[string]string
	// LogPath is the file holding everything the daemon wrote to stderr.
	LogPath string

	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process is reaped
	waitErr error         // its exit status, valid after exited
	logDone chan struct{} // closed once its output is drained
	stopped bool
	mu      sync.Mutex
}

// StartDaemon starts the controlplane binary with args and returns once it
// listens. Debug, metrics and xDS servers go to free loopback ports (the
// xDS TLS port is off) unless args say otherwise (a later flag wins). The process is stopped when the test
// ends, and its log is shown if the test failed.
func StartDaemon(t testing.TB, args ...string) *Daemon {
	t.Helper()
	return StartDaemonIn(t, "", args...)
}

// StartDaemonIn is StartDaemon with the process's working directory set
// to dir ("" keeps the test's).
func StartDaemonIn(t testing.TB, dir string, args ...string) *Daemon {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("building the daemon: %v", err)
	}
	logPath := filepath.Join(t.TempDir(), "controlplane.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	full := append([]string{"--debug-addr=127.0.0.1:0", "--metrics-addr=127.0.0.1:0", "--xds-addr=127.0.0.1:0", "--xds-tls-addr="}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.Env = append(os.Environ(), "GORACE=halt_on_error=1 exitcode=66")
	if err := cmd.Start(); err != nil {
		_ = pr.Close()
		_ = pw.Close()
		_ = logFile.Close()
		t.Fatalf("starting %s: %v", bin, err)
	}
	_ = pw.Close() // the child holds its own copy; EOF comes when it exits

	d := &Daemon{t: t, LogPath: logPath, cmd: cmd, exited: make(chan struct{}), logDone: make(chan struct{})}
	started := make(chan map[string]string, 1)
	go d.copyLog(pr, logFile, started)
	go func() {
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("controlplane: %v", err)
		}
		if t.Failed() {
			t.Logf("controlplane %v: last lines of its log (%s):\n%s", args, logPath, d.LogTail(logTailLines))
		}
	})

	select {
	case d.Addrs = <-started:
	case <-d.exited:
		<-d.logDone
		t.Fatalf("controlplane %v exited before it started (%v):\n%s", args, d.waitErr, d.LogTail(logTailLines))
	case <-time.After(StartTimeout):
		t.Fatalf("controlplane %v did not start within %s", args, StartTimeout)
	}
	return d
}

// copyLog writes the daemon's output to the log file and hands over the
// attributes of its start-up line.
func (d *Daemon) copyLog(r io.ReadCloser, logFile *os.File, started chan<- map[string]string) {
	defer close(d.logDone)
	defer logFile.Close()
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		_, _ = fmt.Fprintln(logFile, line)
		if attrs, ok := startedLine(line); ok && !sent {
			started <- attrs
			sent = true
		}
	}
}

// startedLine reports whether line is the daemon's start-up line, in
// either log format, and returns its attributes.
func startedLine(line string) (map[string]string, bool) {
	if strings.HasPrefix(line, "{") { // --log-format=json
		var attrs map[string]any
		if json.Unmarshal([]byte(line), &attrs) != nil || attrs["msg"] != "controlplane started" {
			return nil, false
		}
		out := make(map[string]string, len(attrs))
		for k, v := range attrs {
			out[k] = fmt.Sprint(v)
		}
		return out, true
	}
	if !strings.Contains(line, startedMessage) {
		return nil, false
	}
	return logAttributes(line), true
}

// logAttributes parses the key=value pairs of a slog text line.
func logAttributes(line string) map[string]string {
	attrs := map[string]string{}
	for _, field := range strings.Fields(line) {
		if k, v, ok := strings.Cut(field, "="); ok {
			attrs[k] = strings.Trim(v, `"`)
		}
	}
	return attrs
}

// URL is the address of path on the daemon's debug server.
func (d *Daemon) URL(path string) string { return "http://" + d.Addrs["debug"] + path }

// MetricsURL is the address of the daemon's /metrics.
func (d *Daemon) MetricsURL() string { return "http://" + d.Addrs["metrics"] + "/metrics" }

// Get fetches path from the debug server.
func (d *Daemon) Get(path string) (int, []byte, error) {
	return httpGet(d.URL(path))
}

// httpGet answers the status and body of a GET.
func httpGet(url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// WaitFor polls path until cond holds on the answer and returns that
// answer; the test fails after WaitTimeout, showing the last answer.
func (d *Daemon) WaitFor(path string, what string, cond func(status int, body []byte) bool) []byte {
	d.t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		status, body, err := d.Get(path)
		if err == nil && cond(status, body) {
			return body
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("GET %s: %s did not happen within %s; last answer: %d %v\n%s", path, what, WaitTimeout, status, err, truncate(body, 4000))
		}
		select {
		case <-d.exited:
			d.t.Fatalf("controlplane exited (%v) while waiting for %s", d.waitErr, what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitReady waits until /ready answers 200.
func (d *Daemon) WaitReady() {
	d.t.Helper()
	d.WaitFor("/ready", "readiness", func(status int, _ []byte) bool { return status == http.StatusOK })
}

// Stop sends SIGTERM and waits for a graceful exit; any exit status but 0
// is an error. Stopping twice returns nil.
func (d *Daemon) Stop() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return nil
	}
	d.stopped = true
	select {
	case <-d.exited:
		<-d.logDone
		return fmt.Errorf("exited before it was stopped: %v", d.waitErr)
	default:
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("sending SIGTERM: %w", err)
	}
	select {
	case <-d.exited:
	case <-time.After(StopTimeout):
		_ = d.cmd.Process.Kill()
		<-d.exited
		<-d.logDone
		return fmt.Errorf("did not exit within %s of SIGTERM; killed", StopTimeout)
	}
	<-d.logDone
	if d.waitErr != nil {
		return fmt.Errorf("exit after SIGTERM: %w", d.waitErr)
	}
	return nil
}

// Kill ends the daemon at once with SIGKILL, as a crash or an OOM kill
// would, and waits until it is gone.
func (d *Daemon) Kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	d.stopped = true
	_ = d.cmd.Process.Kill()
	<-d.exited
	<-d.logDone
}

// Log returns everything the daemon has logged so far.
func (d *Daemon) Log() string {
	b, err := os.ReadFile(d.LogPath)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// LogTail returns the last n lines of the daemon's log.
func (d *Daemon) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(d.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogLines returns the lines of the daemon's log that contain every one of
// the given strings.
func (d *Daemon) LogLines(all ...string) []string {
	var out []string
	for line := range strings.SplitSeq(d.Log(), "\n") {
		match := line != ""
		for _, s := range all {
			match = match && strings.Contains(line, s)
		}
		if match {
			out = append(out, line)
		}
	}
	return out
}

func truncate(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(bytes.Clone(b[:n]), "..."...)
}
