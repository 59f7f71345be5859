package load

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	istionetworking "istio.io/api/networking/v1alpha3"
	istionetworkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshcp/meshcp/test/e2e"
)

const (
	vsType = "networking.istio.io/v1/VirtualService"
	// virtualServices is how many VirtualServices every client watches;
	// each operation changes one of them.
	virtualServices = 20
	namespace       = "load"
	opTimeout       = time.Minute
)

// BenchmarkConvergence measures how fast a change reaches every client:
// N synthetic ADS clients (each on its own connection, with fixed
// flow-control windows as Envoy keeps them; see clientKindEnv for the two
// implementations) watch all VirtualServices; one op changes one VirtualService (an API server update
// in Kubernetes mode, a file write in file mode) and waits until all N have
// received it and sent their ACK. The daemon runs with its defaults (100ms
// push debounce; in file mode also the folder watch's 100ms debounce) as
// its own process. Reported: p50-s and p99-s from the start of the write to
// the last client, connect-s for N clients arriving at once, the server's
// CPU seconds per op and while the clients connect (and the clients' own,
// which share the 2 cores), and the server's heap (and goroutine stacks)
// per connected client, after a GC.
//
// Run with a fixed number of ops, for example:
//
//	go test ./test/load -run '^$' -bench Convergence -benchtime 40x -timeout 30m
func BenchmarkConvergence(b *testing.B) {
	raiseFileLimit(b)
	for _, mode := range []string{"kubernetes", "file"} {
		for _, protocol := range []string{"sotw", "delta"} {
			for _, n := range []int{100, 1000, 5000} {
				b.Run(fmt.Sprintf("mode=%s/protocol=%s/clients=%d", mode, protocol, n), func(b *testing.B) {
					runConvergence(b, mode, protocol == "delta", n)
				})
			}
		}
	}
}

// writer changes VirtualService 0 so that it carries marker.
type writer interface {
	write(b testing.TB, marker string)
}

func runConvergence(b *testing.B, mode string, delta bool, n int) {
	d, w := startDaemon(b, mode)
	base := serverStats(b, d)
	name := fmt.Sprintf("%s-%v-%d", mode, delta, n)
	connectProfile := saveProfiles(b, d, name+"-connect", false)
	clientsBefore := selfCPU(b)
	f, connect, err := newFleet(fleetConfig{addr: d.Addrs["xds"], typeURL: vsType, n: n, delta: delta, kind: clientKind(), connect: 5 * time.Minute})
	clientsConnect := selfCPU(b) - clientsBefore
	if err != nil {
		b.Fatal(err)
	}
	defer f.close()
	connectProfile()
	connected := serverStats(b, d)
	stopProfiles := saveProfiles(b, d, name, true)

	var latencies, writes []time.Duration
	clientsBefore = selfCPU(b)
	for i := 0; b.Loop(); i++ {
		marker := fmt.Sprintf("op-%06d", i)
		op := f.expect(marker)
		start := time.Now()
		w.write(b, marker)
		writes = append(writes, time.Since(start))
		if err := f.wait(op, opTimeout); err != nil {
			b.Fatalf("op %d: %v", i, err)
		}
		latencies = append(latencies, time.Since(start))
	}
	b.StopTimer()
	clientsOps := selfCPU(b) - clientsBefore
	stopProfiles()
	after := serverStats(b, d)
	slices.Sort(latencies)
	slices.Sort(writes)
	b.ReportMetric(percentile(latencies, 50).Seconds(), "p50-s")
	b.ReportMetric(percentile(latencies, 99).Seconds(), "p99-s")
	b.ReportMetric(percentile(writes, 50).Seconds(), "write-p50-s")
	b.ReportMetric(connect.Seconds(), "connect-s")
	b.ReportMetric((after.cpu-connected.cpu)/float64(len(latencies)), "server-cpu-s/op")
	b.ReportMetric((after.generation-connected.generation)/float64(len(latencies)), "pushes/op")
	b.ReportMetric(connected.cpu-base.cpu, "connect-cpu-s")
	b.ReportMetric(clientsConnect, "clients-connect-cpu-s")
	b.ReportMetric(clientsOps/float64(len(latencies)), "clients-cpu-s/op")
	b.ReportMetric((connected.heap-base.heap)/float64(n)/1024, "heap-KB/client")
	b.ReportMetric((connected.stack-base.stack)/float64(n)/1024, "stack-KB/client")
	b.ReportMetric(0, "ns/op") // the latency percentiles say it better
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// profileDirEnv names a folder where the daemon's heap profile and
// goroutines (after the clients connected) and CPU profiles (while they connect, and during the
// ops) are saved, to see where the time and memory go.
const profileDirEnv = "MESHCP_LOAD_PROFILES"

// saveProfiles saves the profiles when profileDirEnv is set; the returned
// function waits for the CPU profile.
func saveProfiles(b *testing.B, d *e2e.Daemon, name string, heap bool) func() {
	dir := os.Getenv(profileDirEnv)
	if dir == "" {
		return func() {}
	}
	save := func(path, file string) {
		_, body, err := d.Get(path)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+"-"+file), body, 0o644)
		}
		if err != nil {
			b.Logf("saving %s: %v", path, err)
		}
	}
	if heap {
		save("/debug/pprof/heap", "heap.pprof")
		save("/debug/pprof/goroutine?debug=1", "goroutine.txt")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		save("/debug/pprof/profile?seconds=5", "cpu.pprof")
	}()
	time.Sleep(100 * time.Millisecond) // let the profile start
	return func() { <-done }
}

// stats are read from the daemon's own metrics.
type stats struct{ cpu, heap, stack, generation float64 }

// serverStats forces a GC in the daemon (through pprof's heap endpoint)
// and reads its CPU seconds, heap in use and stack in use.
func serverStats(b *testing.B, d *e2e.Daemon) stats {
	b.Helper()
	// Twice: the first GC moves sync.Pool caches aside, the second frees
	// them, so what remains is what connections hold.
	for range 2 {
		if status, _, err := d.Get("/debug/pprof/heap?gc=1"); err != nil || status != http.StatusOK {
			b.Fatalf("forcing a GC: %d %v", status, err)
		}
	}
	resp, err := http.Get(d.MetricsURL())
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var s stats
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "process_cpu_seconds_total":
			s.cpu = v
		case "go_memstats_heap_inuse_bytes":
			s.heap = v
		case "go_memstats_stack_inuse_bytes":
			s.stack = v
		case "meshcp_xds_push_generation":
			s.generation = v
		}
	}
	return s
}

// startDaemon starts the daemon with its default push settings in a mode,
// serving virtualServices VirtualServices, and returns the writer of
// changes.
func startDaemon(b *testing.B, mode string) (*e2e.Daemon, writer) {
	b.Helper()
	if mode == "file" {
		dir := b.TempDir()
		w := &fileWriter{dir: dir}
		for i := range virtualServices {
			w.writeVS(b, i, "initial")
		}
		d := e2e.StartDaemon(b, append([]string{"--config-dir", dir, "--log-level", "warn,bootstrap=info"}, daemonArgs()...)...)
		d.WaitReady()
		return d, w
	}
	c := e2e.StartCluster(b)
	ctx := context.Background()
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	w := &kubeWriter{c: c}
	for i := range virtualServices {
		vs, err := c.Istio.NetworkingV1().VirtualServices(namespace).Create(ctx, virtualService(i, "initial"), metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			w.current = vs
		}
	}
	d := e2e.StartDaemon(b, append([]string{"--kubeconfig", c.KubeconfigPath, "--log-level", "warn,bootstrap=info"}, daemonArgs()...)...)
	d.WaitReady()
	return d, w
}

// daemonArgsEnv adds flags to the daemon's command line, to measure other
// settings (for example "--push-concurrency=10 --push-debounce=50ms").
const daemonArgsEnv = "MESHCP_LOAD_DAEMON_ARGS"

func daemonArgs() []string { return strings.Fields(os.Getenv(daemonArgsEnv)) }

func virtualService(i int, marker string) *istionetworkingv1.VirtualService {
	host := fmt.Sprintf("svc-%d.%s.svc.cluster.local", i, namespace)
	return &istionetworkingv1.VirtualService{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("vs-%d", i), Namespace: namespace, Labels: map[string]string{"load.meshcp.io/op": marker}},
		Spec: istionetworking.VirtualService{
			Hosts: []string{host},
			Http: []*istionetworking.HTTPRoute{{
				Route: []*istionetworking.HTTPRouteDestination{{Destination: &istionetworking.Destination{Host: host}}},
			}},
		},
	}
}

// kubeWriter updates VirtualService 0 through the API server, one write
// per op (no read first: it keeps the resourceVersion of its last write).
type kubeWriter struct {
	c       *e2e.Cluster
	current *istionetworkingv1.VirtualService
}

func (w *kubeWriter) write(b testing.TB, marker string) {
	next := w.current.DeepCopy()
	next.Labels["load.meshcp.io/op"] = marker
	updated, err := w.c.Istio.NetworkingV1().VirtualServices(namespace).Update(context.Background(), next, metav1.UpdateOptions{})
	if err != nil {
		b.Fatalf("updating vs-0: %v", err)
	}
	w.current = updated
}

// fileWriter rewrites vs-0's file (write and rename, as editors and
// ConfigMap updates do).
type fileWriter struct{ dir string }

func (w *fileWriter) write(b testing.TB, marker string) { w.writeVS(b, 0, marker) }

func (w *fileWriter) writeVS(b testing.TB, i int, marker string) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: vs-%d\n  namespace: %s\n  labels: {load.meshcp.io/op: %q}\n", i, namespace, marker)
	fmt.Fprintf(&buf, "spec:\n  hosts: [svc-%d.%s.svc.cluster.local]\n  http:\n  - route:\n    - destination: {host: svc-%d.%s.svc.cluster.local}\n", i, namespace, i, namespace)
	path := filepath.Join(w.dir, fmt.Sprintf("vs-%d.yaml", i))
	if err := os.WriteFile(path+".tmp", buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
}

// selfCPU is the CPU seconds this process (the clients) has used.
func selfCPU(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// raiseFileLimit lets this process (and the daemon it starts) hold
// thousands of connections.
func raiseFileLimit(b *testing.B) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
}
