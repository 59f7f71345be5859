package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
		{args: []string{"--push-debounce", "20s", "--debug-addr", "", "--metrics-addr", ""}, want: "longer than --push-debounce-max", err: true},
		{args: []string{"xds", "list"}, want: `unknown subcommand "list"`, err: true},
		{args: []string{"xds", "watch", "--addr", "127.0.0.1:1"}, want: "--type is required", err: true},
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
	debug, metrics, xdsAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "--debug-addr", debug, "--metrics-addr", metrics, "--xds-addr", xdsAddr, "--xds-tls-addr", "")
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
	// The xDS client of the same binary prints what the daemon serves.
	watch := exec.Command(bin, "xds", "watch", "--addr", xdsAddr, "--type", "networking.istio.io/v1/VirtualService", "--count", "1", "--timeout", "30s")
	out, err := watch.Output()
	if err != nil {
		t.Fatalf("xds watch: %v\n%s", err, out)
	}
	var update struct {
		Type      string `json:"type"`
		Resources []struct {
			Name string `json:"name"`
			Spec struct {
				Hosts []string `json:"hosts"`
			} `json:"spec"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(out, &update); err != nil {
		t.Fatalf("xds watch printed %q: %v", out, err)
	}
	var names []string
	for _, r := range update.Resources {
		names = append(names, r.Name)
		if len(r.Spec.Hosts) == 0 {
			t.Errorf("%s has no hosts: %s", r.Name, out)
		}
	}
	if !slices.Contains(names, "bookinfo/reviews") {
		t.Errorf("xds watch got %v, want bookinfo/reviews among them", names)
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
