// Package dockerfile checks the repository's Dockerfile without a Docker
// engine (none runs on CI machines): its go build line yields a working
// static binary, BuildKit's own checks (the rules of docker build --check)
// and dockerfilelint find nothing, and the image it describes has the shape
// the Helm chart relies on.
package dockerfile

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/meshcp/meshcp/test/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const repoRoot = "../.."

// instructions returns the Dockerfile's instructions, continuation lines
// joined and comments dropped, each as its keyword and the rest.
func instructions(t *testing.T, path string) [][2]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur += cont + " "
			continue
		}
		cur += line
		kw, rest, _ := strings.Cut(cur, " ")
		out = append(out, [2]string{strings.ToUpper(kw), strings.TrimSpace(rest)})
		cur = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The Dockerfile's go build line, run here with the image's build
// arguments, yields a static binary that reports the stamped version.
func TestBuildLineMakesAStaticBinary(t *testing.T) {
	var build string
	for _, in := range instructions(t, filepath.Join(repoRoot, "Dockerfile")) {
		if in[0] == "RUN" && strings.Contains(in[1], "go build") {
			if build != "" {
				t.Fatal("the Dockerfile has two go build lines")
			}
			build = in[1]
		}
	}
	if build == "" {
		t.Fatal("the Dockerfile has no RUN ... go build line")
	}
	// Cache mounts are BuildKit's business; the rest is a shell command.
	var words []string
	for _, w := range strings.Fields(build) {
		if !strings.HasPrefix(w, "--mount=") {
			words = append(words, w)
		}
	}
	out := filepath.Join(t.TempDir(), "controlplane")
	cmdline := strings.NewReplacer(
		"${VERSION}", "v9.9.9-test", "${COMMIT}", "0123abcd",
		"${TARGETOS}", runtime.GOOS, "${TARGETARCH}", runtime.GOARCH,
		"/out/controlplane", out,
	).Replace(strings.Join(words, " "))
	for _, flag := range []string{"CGO_ENABLED=0", "-trimpath", "-ldflags"} {
		if !strings.Contains(cmdline, flag) {
			t.Errorf("the build line lacks %s: %s", flag, cmdline)
		}
	}
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = repoRoot
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, msg)
	}

	f, err := elf.Open(out)
	if err != nil {
		t.Fatalf("the build did not make an ELF binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a dynamic loader (PT_INTERP): it is not static and will not run on distroless/static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links shared libraries %v", libs)
	}

	got, err := exec.Command(out, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", out, err, got)
	}
	if !strings.HasPrefix(string(got), "controlplane v9.9.9-test (0123abcd) ") {
		t.Errorf("--version = %q, want the stamped version and commit", got)
	}
}

// The final image runs the daemon as a non-root user on distroless/static
// and exposes the ports the Helm chart's Service names.
func TestImageShape(t *testing.T) {
	ins := instructions(t, filepath.Join(repoRoot, "Dockerfile"))
	last := -1
	for i, in := range ins {
		if in[0] == "FROM" {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("no FROM")
	}
	if from := ins[last][1]; !strings.HasPrefix(from, "gcr.io/distroless/static") {
		t.Errorf("final stage FROM %s, want distroless/static", from)
	}
	var user, entrypoint string
	var ports []string
	for _, in := range ins[last:] {
		switch in[0] {
		case "USER":
			user = in[1]
		case "EXPOSE":
			ports = append(ports, strings.Fields(in[1])...)
		case "ENTRYPOINT":
			entrypoint = in[1]
		}
	}
	if uid, _, _ := strings.Cut(user, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("final stage USER %q, want a numeric non-root user", user)
	}
	for _, p := range []string{"15010", "15012", "15014", "8080"} {
		if !slices.Contains(ports, p) {
			t.Errorf("port %s not exposed (EXPOSE %v)", p, ports)
		}
	}
	if !strings.HasPrefix(entrypoint, "[") || !strings.Contains(entrypoint, "controlplane") {
		t.Errorf("ENTRYPOINT %s, want the exec form running controlplane", entrypoint)
	}
	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatalf("no .dockerignore: %v", err)
	}
	if !slices.Contains(strings.Fields(string(ignore)), ".git") {
		t.Error(".dockerignore does not keep .git out of the build context")
	}
}

// BuildKit's Dockerfile checks, run offline by hack/tools/dockerfile-lint,
// pass on the Dockerfile and catch a bad one.
func TestBuildKitChecks(t *testing.T) {
	lint := func(path string) (string, error) {
		abs, err := filepath.Abs(path)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "run", ".", abs)
		cmd.Dir = filepath.Join(repoRoot, "hack", "tools", "dockerfile-lint")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := lint(filepath.Join(repoRoot, "Dockerfile")); err != nil {
		t.Errorf("BuildKit's checks fail on the Dockerfile: %v\n%s", err, out)
	}
	out, err := lint("testdata/bad.Dockerfile")
	if err == nil {
		t.Fatalf("BuildKit's checks pass a bad Dockerfile:\n%s", out)
	}
	for _, rule := range []string{"StageNameCasing", "ConsistentInstructionCasing", "LegacyKeyValueFormat", "JSONArgsRecommended", "MultipleInstructionsDisallowed"} {
		if !strings.Contains(out, rule) {
			t.Errorf("BuildKit's checks did not report %s on the bad Dockerfile:\n%s", rule, out)
		}
	}
}

// dockerfilelint, from the npm registry, passes the Dockerfile and catches
// a bad one.
func TestDockerfilelint(t *testing.T) {
	bin := tools.Dockerfilelint(t)
	if out, err := exec.Command(bin, filepath.Join(repoRoot, "Dockerfile")).CombinedOutput(); err != nil {
		t.Errorf("dockerfilelint fails on the Dockerfile: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "testdata/bad.Dockerfile").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Capitalize") {
		t.Errorf("dockerfilelint on a bad Dockerfile: %v\n%s", err, out)
	}
}
