// Package apiserver runs a real kube-apiserver, backed by a real etcd, on
// 127.0.0.1 for a test, with the Gateway API (standard channel) and Istio
// CRDs installed and Established.
//
// The binaries are built from source by hack/install-tools.sh; see
// FindTools for where they are looked up and RequireTools for what happens
// when they are missing. Processes are managed by controller-runtime's
// envtest; this package adds what envtest lacks: fixed serving
// certificates, client CA and port across an API server restart (so a
// client or daemon keeps its config), logs on disk with their tail shown
// when a test fails, and a wait for CRDs to be Established.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

const (
	// startTimeout bounds each process start and the CRD waits. Generous:
	// the race-enabled suite shares 2 cores with other test binaries.
	startTimeout = 2 * time.Minute
	// stopTimeout is how long a process may take to exit after SIGTERM
	// before it is killed.
	stopTimeout = time.Minute
	// logTailLines is how much of each log a failed test shows.
	logTailLines = 40
)

// Server is one etcd plus kube-apiserver pair started for a test. Its
// exported fields stay valid across RestartAPIServer. Methods are safe for
// concurrent use.
type Server struct {
	// Config is an admin (system:masters) client config, authenticated by
	// a client certificate. Shared: rest.CopyConfig it before changing it.
	Config *rest.Config
	// KubeConfig is Config as the contents of a kubeconfig file, for a
	// process under test (such as the meshcp daemon).
	KubeConfig []byte
	// CRDs are the CustomResourceDefinitions installed at start.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Dir holds everything the server keeps on disk: EtcdDataDir, the API
	// server's certificates and both logs. It is removed when the test ends.
	Dir string
	// EtcdDataDir is etcd's data directory; it outlives API server restarts.
	EtcdDataDir string
	// APIServerLog and EtcdLog are the processes' output (appended to
	// across restarts).
	APIServerLog, EtcdLog string

	mu         sync.Mutex // serialises process starts and stops
	env        *envtest.Environment
	apiServer  *envtest.APIServer
	certDir    string // the API server's --cert-dir, unique to this Server
	apiStopped bool   // by StopAPIServer, until StartAPIServer
	logFiles   []*os.File
}

// Start starts etcd and kube-apiserver for t, installs the CRDs and waits
// until they are Established, and stops everything when t ends. It skips or
// fails t (see RequireTools) when the binaries are missing, and fails t if
// the control plane does not come up, with the tail of its logs.
//
// It takes a testing.TB rather than returning an error because every
// caller is a test or benchmark, and tying the lifetime to t.Cleanup means
// no test can leak the processes.
func Start(t testing.TB) *Server {
	t.Helper()
	silenceEnvtest()
	tools := RequireTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*startTimeout)
	defer cancel()

	crdPaths, err := CRDPaths(ctx)
	if err != nil {
		t.Fatalf("apiserver: %v", err)
	}
	s, err := newServer(t.TempDir(), tools)
	if err != nil {
		t.Fatalf("apiserver: %v", err)
	}
	// Registered after t.TempDir, so it runs before the folder is removed.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("apiserver: logs are in %s (removed at test end)\n%s", s.Dir, s.LogTails(logTailLines))
		}
		if err := s.stop(); err != nil {
			t.Errorf("apiserver: stopping: %v", err)
		}
	})
	if err := s.start(ctx, crdPaths); err != nil {
		t.Fatalf("apiserver: starting with binaries from %s: %v (log tails follow)", tools.Dir, err)
	}
	t.Logf("apiserver: kube-apiserver %s at %s, data in %s", KubeVersion, s.Config.Host, s.Dir)
	return s
}

// silenceEnvtest gives controller-runtime, whose envtest logs through its
// process-wide logger, a logger that drops everything; without one it
// prints a stack trace warning that none was set. What the processes
// themselves say is in their log files.
var silenceEnvtest = sync.OnceFunc(func() { ctrllog.SetLogger(logr.Discard()) })

// newServer lays out dir and configures, without starting, the control
// plane.
func newServer(dir string, tools Tools) (*Server, error) {
	s := &Server{
		Dir:          dir,
		EtcdDataDir:  filepath.Join(dir, "etcd"),
		APIServerLog: filepath.Join(dir, "kube-apiserver.log"),
		EtcdLog:      filepath.Join(dir, "etcd.log"),
	}
	certDir := filepath.Join(dir, "kube-apiserver")
	s.certDir = certDir
	for _, d := range []string{s.EtcdDataDir, certDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	var logs []*os.File
	for _, name := range []string{s.APIServerLog, s.EtcdLog} {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			closeAll(logs)
			return nil, fmt.Errorf("creating log file: %w", err)
		}
		logs = append(logs, f)
	}
	s.logFiles = logs

	// Setting the directories ourselves keeps envtest from treating them
	// as scratch: it then neither deletes them on stop nor regenerates the
	// serving certificate on restart.
	s.apiServer = &envtest.APIServer{
		Path:    tools.KubeAPIServer,
		CertDir: certDir,
		Out:     logs[0],
		Err:     logs[0],
	}
	// Without a routable address the endpoint reconciler keeps failing to
	// publish 127.0.0.1 as the kubernetes Service's endpoint.
	s.apiServer.Configure().Set("endpoint-reconciler-type", "none")
	etcd := &envtest.Etcd{
		Path:    tools.Etcd,
		DataDir: s.EtcdDataDir,
		Out:     logs[1],
		Err:     logs[1],
	}
	// etcd's info level is mostly raft chatter; its warnings (slow
	// requests, failures) are what explains a broken test.
	etcd.Configure().Set("log-level", "warn")
	useExistingCluster := false // never let USE_EXISTING_CLUSTER point tests at a real cluster
	s.env = &envtest.Environment{
		UseExistingCluster:       &useExistingCluster,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
		ControlPlane: envtest.ControlPlane{
			APIServer: s.apiServer,
			Etcd:      etcd,
		},
	}
	return s, nil
}

// start brings up etcd and the API server, installs the CRDs from
// crdPaths and waits until they are Established.
func (s *Server) start(ctx context.Context, crdPaths []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.env.CRDDirectoryPaths = crdPaths
	cfg, err := s.env.Start()
	if err != nil {
		return fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	s.Config, s.KubeConfig, s.CRDs = cfg, s.env.KubeConfig, s.env.CRDs
	if len(s.CRDs) == 0 {
		return fmt.Errorf("no CRDs found in %v", crdPaths)
	}
	return waitEstablished(ctx, cfg, s.CRDs)
}

// stop ends both processes and closes the log files.
func (s *Server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.env.Stop()
	closeAll(s.logFiles)
	s.logFiles = nil
	if err != nil {
		return fmt.Errorf("stopping etcd and kube-apiserver: %w", err)
	}
	return nil
}

// StopAPIServer stops the kube-apiserver process gracefully (SIGTERM),
// leaving etcd and its data in place; clients see connection errors until
// StartAPIServer. Stopping a stopped server does nothing. With clients
// holding watches open, kube-apiserver drains for up to a minute; use
// KillAPIServer to end it at once.
func (s *Server) StopAPIServer() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.apiServer.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	s.apiStopped = true
	return nil
}

// KillAPIServer ends the kube-apiserver process with SIGKILL, as a crash or
// an OOM kill would: no graceful drain, watches cut mid-stream. etcd and
// its data stay. Start it again with StartAPIServer.
func (s *Server) KillAPIServer() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apiStopped {
		return nil
	}
	// envtest does not expose the process; it is the one started with this
	// Server's certificate folder, which no other process shares.
	pids, err := processesWithArg("--cert-dir=" + s.certDir)
	if err != nil {
		return fmt.Errorf("finding kube-apiserver: %w", err)
	}
	if len(pids) == 0 {
		return errors.New("finding kube-apiserver: no process runs with this server's --cert-dir")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("killing kube-apiserver (pid %d): %w", pid, err)
		}
	}
	// envtest reaps the process on its own goroutine; once it has, Stop
	// finds it exited and only tidies up.
	deadline := time.Now().Add(stopTimeout)
	for {
		err := s.apiServer.Stop()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver killed but not reaped: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.apiStopped = true
	return nil
}

// processesWithArg returns the processes that have arg among their
// command-line arguments, read from /proc.
func processesWithArg(arg string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // exited meanwhile
		}
		if slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer or
// KillAPIServer, on the same etcd, port, serving certificate and client CA,
// so Config and KubeConfig keep working. It returns once the server is ready and serves
// every installed CRD again.
func (s *Server) StartAPIServer(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logFiles == nil {
		return errors.New("the server was stopped at the end of its test")
	}
	if !s.apiStopped {
		// envtest would start a second process and lose track of the first.
		return errors.New("kube-apiserver is running: call StopAPIServer first")
	}
	if _, err := fmt.Fprintf(s.logFiles[0], "\n===== meshcp test harness: restarting kube-apiserver at %s =====\n", time.Now().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("writing the API server log: %w", err)
	}
	if err := s.apiServer.Start(); err != nil {
		return fmt.Errorf("restarting kube-apiserver (log: %s): %w", s.APIServerLog, err)
	}
	s.apiStopped = false
	if err := waitReady(ctx, s.Config); err != nil {
		return err
	}
	// Custom resources are served only once the CRD informers have synced.
	if err := envtest.WaitForCRDs(s.Config, s.CRDs, envtest.CRDInstallOptions{MaxTime: startTimeout}); err != nil {
		return fmt.Errorf("waiting for CRDs to be served after restart: %w", err)
	}
	return nil
}

// RestartAPIServer is StopAPIServer followed by StartAPIServer.
func (s *Server) RestartAPIServer(ctx context.Context) error {
	if err := s.StopAPIServer(); err != nil {
		return err
	}
	return s.StartAPIServer(ctx)
}

// LogTails returns the last n lines of the API server's and etcd's logs,
// labelled, for a human debugging a failure.
func (s *Server) LogTails(n int) string {
	var out string
	for _, f := range []struct{ name, path string }{{"kube-apiserver", s.APIServerLog}, {"etcd", s.EtcdLog}} {
		tail, err := tailFile(f.path, n)
		if err != nil {
			tail = err.Error()
		}
		out += fmt.Sprintf("----- last %d lines of %s output (%s) -----\n%s\n", n, f.name, f.path, tail)
	}
	return out
}

// waitReady polls /readyz until the API server reports ready.
func waitReady(ctx context.Context, cfg *rest.Config) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building a client: %w", err)
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		_, last = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kube-apiserver /readyz: %w (last error: %v)", err, last)
	}
	return nil
}

// waitEstablished polls until every CRD has condition Established=True.
func waitEstablished(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building an apiextensions client: %w", err)
	}
	for _, crd := range crds {
		var last error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
			got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				last = err
				return false, nil
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			last = fmt.Errorf("conditions: %+v", got.Status.Conditions)
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be Established: %w (last: %v)", crd.Name, err, last)
		}
	}
	return nil
}

// closeAll closes files, ignoring errors: they are logs written by child
// processes that have exited.
func closeAll(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// tailFile returns the last n lines of the file at path, reading at most
// its last 256 KiB.
func tailFile(path string, n int) (string, error) {
	const maxRead = 256 << 10
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reading log: %w", err)
	}
	offset := max(info.Size()-maxRead, 0)
	buf := make([]byte, info.Size()-offset)
	if _, err := f.ReadAt(buf, offset); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading log %s: %w", path, err)
	}
	return lastLines(string(buf), n), nil
}

// lastLines returns the last n lines of s, without a trailing newline.
func lastLines(s string, n int) string {
	end := len(s)
	for end > 0 && s[end-1] == '\n' {
		end--
	}
	start := end
	for lines := 0; start > 0; start-- {
		if s[start-1] == '\n' {
			lines++
			if lines == n {
				break
			}
		}
	}
	return s[start:end]
}
