package main

import (
	"bytes"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stdout for success, in the error otherwise
		err  bool
	}{
		{args: []string{"--version"}, want: "controlplane "},
		{args: []string{"--no-such-flag"}, want: "flag provided but not defined", err: true},
		{args: []string{"extra"}, want: `unexpected arguments ["extra"]`, err: true},
		{args: []string{"--krt-checks", "everything"}, want: `unknown check "everything"`, err: true},
		{args: []string{"--log-format", "xml", "--debug-addr", "", "--metrics-addr", ""}, want: "--log-format must be text or json", err: true},
	} {
		var stdout, stderr bytes.Buffer
		err := run(tc.args, &stdout, &stderr)
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error()+stderr.String(), tc.want)):
			t.Errorf("%v: error %v (stderr %q), want one with %q", tc.args, err, stderr.String(), tc.want)
		case !tc.err && (err != nil || !strings.Contains(stdout.String(), tc.want)):
			t.Errorf("%v: %v, stdout %q, want %q", tc.args, err, stdout.String(), tc.want)
		}
	}
	var stderr bytes.Buffer
	if err := run([]string{"--help"}, &bytes.Buffer{}, &stderr); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), "-config-dir") {
		t.Errorf("--help: %v\n%s", err, stderr.String())
	}
}

// The built binary serves the examples from the repository root and shuts
// down cleanly on SIGTERM.
func TestBinaryRunsAndStopsOnSIGTERM(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "controlplane")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	debug, metrics := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "--debug-addr", debug, "--metrics-addr", metrics)
	cmd.Dir = "../.." // the repository root: ./examples is served live
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck // only matters if the test fails early
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + debug + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("never ready; logs:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v; logs:\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("did not exit after SIGTERM; logs:\n%s", logs.String())
	}
	for _, want := range []string{"controlplane started", "mode=file", "config=examples/config", "shutting down"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
	if _, err := os.Stat("../../examples/config"); err != nil {
		t.Fatal(err)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
