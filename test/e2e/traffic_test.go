package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshcp/meshcp/test/grpctraffic"
)

// Real traffic through the daemon: proxyless gRPC clients (grpc-go's own
// xDS resolver, a bootstrap each) dial
// xds:///reviews.default.svc.cluster.local:9080 and make RPCs to real gRPC
// backends, each answering with its name; the daemon tells them where to
// send them. In file mode the backends listen on 127.x addresses of this
// process; in Kubernetes mode, whose API server refuses loopback
// endpoints, on test hosts in a network namespace (StartTestHosts). The
// same scenarios run with Istio VirtualServices and with Gateway API
// routes whose parent is the Service (mesh routing, GAMMA), where the
// Gateway API has the concept.

const (
	reviewsTarget = "reviews.default.svc.cluster.local:9080"
	reviewsHost   = "reviews.default.svc.cluster.local"
	// rpcTimeout bounds a batch of RPCs.
	rpcTimeout = grpctraffic.TallyTimeout
	// moveWithin is how soon an edit must move traffic.
	moveWithin = time.Second
)

// reviewsBackends are the workloads of reviews: two v1, one v2, one v3.
var reviewsBackends = struct{ names, versions []string }{
	names:    []string{"reviews-v1-a", "reviews-v1-b", "reviews-v2-a", "reviews-v3-a"},
	versions: []string{"v1", "v1", "v2", "v3"},
}

// trafficEnv is a daemon serving the reviews mesh, its backends, and
// where its configuration is written.
type trafficEnv struct {
	// t is the whole test's: the daemon belongs to it.
	t        *testing.T
	mode     string
	store    ConfigStore
	backends []Backend
	daemon   *Daemon
	// args start the daemon again on the same xDS port.
	args    []string
	xdsAddr string
	clients int
}

// freeXDSAddr reserves a loopback port for the daemon's xDS server, so a
// restarted daemon can listen where the clients expect it.
func freeXDSAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// fileTrafficEnv serves the mesh from a folder, backends on loopback.
func fileTrafficEnv(t *testing.T) *trafficEnv {
	dir := t.TempDir()
	backends := StartLoopbackBackends(t, reviewsBackends.names, reviewsBackends.versions,
		[]string{"127.77.0.2", "127.77.0.3", "127.77.0.4", "127.77.0.5"})
	env := &trafficEnv{t: t, mode: "file", store: FolderStore{Dir: dir}, backends: backends, xdsAddr: freeXDSAddr(t)}
	env.store.Apply(t, reviewsMesh(backends))
	env.args = []string{"--config-dir", dir, "--xds-addr", env.xdsAddr}
	env.start()
	return env
}

// kubeTrafficEnv serves the mesh from a real API server, backends on
// test hosts.
func kubeTrafficEnv(t *testing.T) *trafficEnv {
	hosts := StartTestHosts(t, len(reviewsBackends.names))
	backends := make([]Backend, len(hosts.IPs))
	for i, ip := range hosts.IPs {
		backends[i] = Backend{Name: reviewsBackends.names[i], Version: reviewsBackends.versions[i], Addr: net.JoinHostPort(ip, "9080")}
	}
	hosts.StartBackends(t, backends)
	c := StartCluster(t)
	env := &trafficEnv{t: t, mode: "kubernetes", store: NewClusterStore(t, c), backends: backends, xdsAddr: freeXDSAddr(t)}
	env.store.Apply(t, reviewsMesh(backends))
	env.args = []string{"--kubeconfig", c.KubeconfigPath, "--xds-addr", env.xdsAddr}
	env.start()
	return env
}

// start starts the daemon and waits until it serves every endpoint.
func (e *trafficEnv) start() {
	e.t.Helper()
	e.daemon = StartDaemon(e.t, e.args...)
	e.daemon.WaitReady()
	e.waitEndpoints(e.t, reviewsClusterName(""), e.backends...)
}

// client dials the target as a new client with a node id of its own.
func (e *trafficEnv) client(t *testing.T) *grpc.ClientConn {
	conn, _ := e.namedClient(t)
	return conn
}

// namedClient is client, and the node id it announced.
func (e *trafficEnv) namedClient(t *testing.T) (*grpc.ClientConn, string) {
	e.clients++
	id := fmt.Sprintf("e2e-%s-%s-%d", e.mode, strings.ReplaceAll(t.Name(), "/", "-"), e.clients)
	return DialMesh(t, e.xdsAddr, id, reviewsTarget), id
}

// checkSent checks that /debug/config_dump shows what client id was sent
// (Envoy's config dump layout, holding every one of want), and that
// /debug/syncz shows it ACKed every type and NACKed none.
func (e *trafficEnv) checkSent(t *testing.T, id string, want ...string) {
	t.Helper()
	code, body, err := e.daemon.Get("/debug/config_dump?proxyID=" + url.QueryEscape(id))
	if err != nil || code != http.StatusOK {
		t.Fatalf("/debug/config_dump of %s: %d %v\n%s", id, code, err, body)
	}
	for _, w := range append(want, "envoy.admin.v3.ClustersConfigDump", "envoy.admin.v3.EndpointsConfigDump",
		"envoy.admin.v3.ListenersConfigDump", "envoy.admin.v3.RoutesConfigDump", reviewsTarget) {
		if !strings.Contains(string(body), w) {
			t.Errorf("the config dump of %s lacks %s", id, w)
		}
	}
	code, body, err = e.daemon.Get("/debug/syncz?node=" + url.QueryEscape(id))
	var z struct {
		Connections []struct {
			Types []struct {
				TypeURL  string          `json:"typeUrl"`
				Acked    json.RawMessage `json:"acked"`
				LastNack json.RawMessage `json:"lastNack"`
			} `json:"types"`
		} `json:"connections"`
	}
	if err != nil || code != http.StatusOK || json.Unmarshal(body, &z) != nil || len(z.Connections) != 1 || len(z.Connections[0].Types) != 4 {
		t.Fatalf("/debug/syncz?node=%s: %d %v\n%s", id, code, err, body)
	}
	for _, ts := range z.Connections[0].Types {
		if len(ts.Acked) == 0 || len(ts.LastNack) > 0 {
			t.Errorf("%s %s: acked %s, last NACK %s", id, ts.TypeURL, ts.Acked, ts.LastNack)
		}
	}
}

func reviewsClusterName(subset string) string { return "outbound|9080|" + subset + "|" + reviewsHost }

// waitRoutes waits until the daemon serves reviews routes holding every
// one of want (cluster names, header names): from then on a client that
// starts routes by them.
func (e *trafficEnv) waitRoutes(t testing.TB, what string, want ...string) {
	t.Helper()
	WaitServed(t, e.xdsAddr, "type.googleapis.com/envoy.config.route.v3.RouteConfiguration", []string{reviewsTarget}, what, func(rs string) bool {
		for _, w := range want {
			if !strings.Contains(rs, w) {
				return false
			}
		}
		return true
	})
}

// waitRoutesWithout waits until the daemon's reviews routes no longer
// hold marker.
func (e *trafficEnv) waitRoutesWithout(t testing.TB, marker string) {
	t.Helper()
	WaitServed(t, e.xdsAddr, "type.googleapis.com/envoy.config.route.v3.RouteConfiguration", []string{reviewsTarget}, "routes without "+marker,
		func(rs string) bool { return rs != "" && !strings.Contains(rs, marker) })
}

// waitEndpoints waits until the daemon serves exactly the given backends
// as the endpoints of a cluster.
func (e *trafficEnv) waitEndpoints(t testing.TB, cluster string, backends ...Backend) {
	t.Helper()
	var names []string
	for _, b := range backends {
		names = append(names, b.Name)
	}
	WaitServed(t, e.xdsAddr, "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment", []string{cluster},
		fmt.Sprintf("endpoints %v of %s", names, cluster), func(eps string) bool {
			for _, b := range e.backends {
				host, _, _ := net.SplitHostPort(b.Addr)
				if strings.Contains(eps, `"`+host+`"`) != contains(backends, b) {
					return false
				}
			}
			return true
		})
}

func contains(bs []Backend, b Backend) bool {
	for _, x := range bs {
		if x.Name == b.Name {
			return true
		}
	}
	return false
}

// version is the version of the backend that answered.
func (e *trafficEnv) version(name string) string {
	for _, b := range e.backends {
		if b.Name == name {
			return b.Version
		}
	}
	return "unknown(" + name + ")"
}

// byVersion sums answers by the backends' versions.
func (e *trafficEnv) byVersion(got map[string]int) map[string]int {
	out := map[string]int{}
	for who, n := range got {
		out[e.version(who)] += n
	}
	return out
}

// routing is one way of writing the scenarios' configuration: Istio's
// VirtualServices, or Gateway API routes on the Service. Each document is
// an object named as given; its name is also in the names of the routes
// the daemon serves for it, so a test can wait for exactly that object.
// An empty field is a concept that way of writing has not.
type routing struct {
	name string
	// split sends w1% to v1 and the rest to v2; only sends everything to
	// one version; header sends end-user: jason to v3 and the rest to v1;
	// abort fails every RPC with PERMISSION_DENIED.
	split  func(name string, w1 int) string
	only   func(name, version string) string
	header func(name string) string
	abort  func(name string) string
	// clusters names the clusters of versions that routes name, for
	// waiting until the daemon serves them.
	clusters func(versions ...string) []string
}

// vsYAML is a VirtualService of reviews whose first http route is named
// name; http is the list of its http routes, indented as a spec field.
func vsYAML(name, http string) string {
	return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: %s, namespace: default}
spec:
  hosts: [reviews.default.svc.cluster.local]
  http:
  - name: %s
%s`, name, name, http)
}

var istioRouting = routing{
	name: "Istio",
	split: func(name string, w1 int) string {
		return vsYAML(name, fmt.Sprintf(`    route:
    - {destination: {host: reviews, subset: v1}, weight: %d}
    - {destination: {host: reviews, subset: v2}, weight: %d}
`, w1, 100-w1))
	},
	only: func(name, version string) string {
		return vsYAML(name, `    route:
    - destination: {host: reviews, subset: `+version+`}
`)
	},
	header: func(name string) string {
		return vsYAML(name, `    match:
    - headers: {end-user: {exact: jason}}
    route:
    - destination: {host: reviews, subset: v3}
  - route:
    - destination: {host: reviews, subset: v1}
`)
	},
	abort: func(name string) string {
		return vsYAML(name, `    fault:
      abort: {grpcStatus: PERMISSION_DENIED, percentage: {value: 100}}
    route:
    - destination: {host: reviews, subset: v1}
`)
	},
	clusters: func(versions ...string) []string {
		var out []string
		for _, v := range versions {
			out = append(out, reviewsClusterName(v))
		}
		return out
	},
}

// meshRouteYAML is a Gateway API route of kind (HTTPRoute, GRPCRoute)
// whose parent is the Service reviews (mesh routing), with rules.
func meshRouteYAML(kind, name, rules string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: %s
metadata: {name: %s, namespace: default}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews, port: 9080}]
  rules:
%s`, kind, name, rules)
}

var gatewayAPIRouting = routing{
	name: "GatewayAPI",
	split: func(name string, w1 int) string {
		return meshRouteYAML("HTTPRoute", name, fmt.Sprintf(`  - backendRefs:
    - {name: reviews-v1, port: 9080, weight: %d}
    - {name: reviews-v2, port: 9080, weight: %d}
`, w1, 100-w1))
	},
	only: func(name, version string) string {
		return meshRouteYAML("GRPCRoute", name, `  - backendRefs: [{name: reviews-`+version+`, port: 9080}]
`)
	},
	header: func(name string) string {
		return meshRouteYAML("GRPCRoute", name, `  - matches: [{headers: [{name: end-user, value: jason}]}]
    backendRefs: [{name: reviews-v3, port: 9080}]
  - backendRefs: [{name: reviews-v1, port: 9080}]
`)
	},
	clusters: func(versions ...string) []string {
		var out []string
		for _, v := range versions {
			out = append(out, "outbound|9080||reviews-"+v+".default.svc.cluster.local")
		}
		return out
	},
}

func TestTrafficFileMode(t *testing.T) {
	env := fileTrafficEnv(t)
	for _, r := range []routing{istioRouting, gatewayAPIRouting} {
		t.Run(r.name, func(t *testing.T) { runTrafficScenarios(t, env, r) })
	}
	// Restarts last: the daemon started again belongs to the whole test.
	for _, r := range []routing{istioRouting, gatewayAPIRouting} {
		restartScenario(t, env, r)
	}
}

func TestTrafficKubernetesMode(t *testing.T) {
	env := kubeTrafficEnv(t)
	for _, r := range []routing{istioRouting, gatewayAPIRouting} {
		t.Run(r.name, func(t *testing.T) { runTrafficScenarios(t, env, r) })
	}
	for _, r := range []routing{istioRouting, gatewayAPIRouting} {
		restartScenario(t, env, r)
	}
}

// applyRouting applies routing documents whose routes carry marker, and
// waits until the daemon serves them and the routes name the clusters
// want. When t ends it deletes them and waits until the daemon no longer
// serves them, so the next test starts from none.
func (e *trafficEnv) applyRouting(t *testing.T, docs, marker string, want ...string) {
	t.Helper()
	e.store.Apply(t, docs)
	t.Cleanup(func() {
		e.store.Delete(t, docs)
		e.waitRoutesWithout(t, marker)
	})
	e.waitRoutes(t, marker, append(want, marker)...)
}

// runTrafficScenarios runs the scenarios of one way of routing, each as a
// subtest that removes what it applied.
func runTrafficScenarios(t *testing.T, env *trafficEnv, r routing) {
	t.Run("no routing config spreads RPCs over every endpoint", func(t *testing.T) {
		got := grpctraffic.Tally(t, env.client(t), 400)
		for _, b := range env.backends {
			if got[b.Name] < 40 {
				t.Errorf("%s got %d of 400 RPCs: %v", b.Name, got[b.Name], got)
			}
		}
		t.Logf("%s mode, %s: 400 RPCs spread %v", env.mode, r.name, got)
	})

	t.Run("80/20 split over two versions", func(t *testing.T) {
		env.applyRouting(t, r.split("reviews-split", 80), "reviews-split", r.clusters("v1", "v2")...)
		const n = 2000
		start := time.Now()
		conn, id := env.namedClient(t)
		got := env.byVersion(grpctraffic.Tally(t, conn, n))
		took := time.Since(start)
		env.checkSent(t, id, r.clusters("v1", "v2")...)
		v1 := 100 * float64(got["v1"]) / n
		if v1 < 75 || v1 > 85 || got["v1"]+got["v2"] != n {
			t.Errorf("%v: v1 %.1f%%, want 80±5 and nothing outside v1 and v2", got, v1)
		}
		t.Logf("%s mode, %s: %d/%d of %d RPCs to v1/v2 (v1 %.1f%%), %s including the client's xDS start",
			env.mode, r.name, got["v1"], got["v2"], n, v1, took.Round(10*time.Millisecond))
	})

	t.Run("a header match routes marked RPCs to v3", func(t *testing.T) {
		env.applyRouting(t, r.header("reviews-header"), "reviews-header", append(r.clusters("v3", "v1"), "end-user")...)
		conn := env.client(t)
		marked := env.byVersion(grpctraffic.Tally(t, conn, 50, "end-user", "jason"))
		unmarked := env.byVersion(grpctraffic.Tally(t, conn, 50))
		if marked["v3"] != 50 || unmarked["v1"] != 50 {
			t.Errorf("marked RPCs by version %v, unmarked %v; want 50 of 50 to v3, and to v1", marked, unmarked)
		}
		t.Logf("%s mode, %s: %d of 50 marked RPCs to v3, %d of 50 unmarked to v1", env.mode, r.name, marked["v3"], unmarked["v1"])
	})

	t.Run("fault abort fails RPCs with the configured code", func(t *testing.T) {
		if r.abort == nil {
			t.Skipf("%s routes have no fault injection", r.name)
		}
		env.applyRouting(t, r.abort("reviews-abort"), "reviews-abort", "envoy.filters.http.fault")
		ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		defer cancel()
		conn := env.client(t)
		for i := range 50 {
			who, err := Call(ctx, conn)
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("RPC %d: answered by %q, error %v; want PERMISSION_DENIED", i, who, err)
			}
		}
	})

	t.Run("an edit moves traffic within a second", func(t *testing.T) {
		env.applyRouting(t, r.only("reviews-edit", "v1"), "reviews-edit", r.clusters("v1")...)
		conn := env.client(t)
		if got := env.byVersion(grpctraffic.Tally(t, conn, 20)); got["v1"] != 20 {
			t.Fatalf("before the edit: %v", got)
		}
		edited := time.Now()
		env.store.Apply(t, r.only("reviews-edit", "v2"))
		took, lost := waitForVersion(t, env, conn, "v2", edited)
		t.Logf("%s mode, %s: the edit moved traffic to v2 %s after the write (%s)", env.mode, r.name, took.Round(time.Millisecond), lost)
		if took > moveWithin {
			t.Errorf("the edit took %s to move traffic, want under %s", took, moveWithin)
		}
	})

	t.Run("removing an endpoint stops traffic to it", func(t *testing.T) {
		gone := env.backends[1] // reviews-v1-b
		slice, cluster, serving := reviewsSlice(env.backends), reviewsClusterName(""), env.backends
		if r.name == gatewayAPIRouting.name {
			env.applyRouting(t, r.only("reviews-removal", "v1"), "reviews-removal", r.clusters("v1")...)
			slice, cluster, serving = versionSlice(env.backends, "v1"), r.clusters("v1")[0], env.backends[:2]
		}
		t.Cleanup(func() {
			env.store.Apply(t, slice(nil))
			env.waitEndpoints(t, cluster, serving...)
		})
		conn := env.client(t)
		if got := grpctraffic.Tally(t, conn, 100); got[gone.Name] == 0 {
			t.Fatalf("before the removal %s got no RPC: %v", gone.Name, got)
		}
		removed := time.Now()
		env.store.Apply(t, slice(&gone))
		ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		defer cancel()
		var last time.Time
		for streak := 0; streak < 50; {
			who, err := Call(ctx, conn)
			if err != nil {
				t.Fatalf("RPC failed while the endpoint went away: %v", err)
			}
			if who == gone.Name {
				streak, last = 0, time.Now()
			} else {
				streak++
			}
		}
		if got := grpctraffic.Tally(t, conn, 200); got[gone.Name] > 0 {
			t.Errorf("after the removal %s still got %d of 200 RPCs", gone.Name, got[gone.Name])
		}
		t.Logf("%s mode, %s: the last RPC to the removed endpoint was %s after the write", env.mode, r.name, max(last.Sub(removed), 0).Round(time.Millisecond))
	})
}

// restartScenario: clients keep routing while the daemon is killed (by
// the configuration they hold), reconnect when it is started again on the
// same port, and follow an edit made after the restart.
func restartScenario(t *testing.T, env *trafficEnv, r routing) {
	t.Logf("%s mode, %s: clients through a daemon restart", env.mode, r.name)
	name := "reviews-restart"
	env.store.Apply(t, r.only(name, "v1"))
	env.waitRoutes(t, "all to v1", append(r.clusters("v1"), name)...)
	var runners []*rpcRunner
	for range 3 {
		runners = append(runners, startRPCRunner(t, env.client(t)))
	}
	for _, rr := range runners {
		rr.waitFor(t, env, "v1", time.Now())
	}
	env.daemon.Kill()
	killed := time.Now()
	time.Sleep(1500 * time.Millisecond)
	for i, rr := range runners {
		ok, failed := rr.since(killed)
		if ok == 0 || failed > 0 {
			t.Errorf("%s: client %d while the daemon was down: %d RPCs answered, %d failed; want them all answered by the config it holds", r.name, i, ok, failed)
		}
	}
	env.start()
	env.store.Apply(t, r.only(name, "v2"))
	edited := time.Now()
	for _, rr := range runners {
		rr.waitFor(t, env, "v2", edited)
	}
	t.Logf("%s mode, %s: every client reconnected and moved to v2 %s after the edit that followed the restart",
		env.mode, r.name, time.Since(edited).Round(time.Millisecond))
	for i, rr := range runners {
		rr.stop()
		failed, raced := rr.failures()
		if failed > raced {
			t.Errorf("%s: client %d had %d failed RPCs, only %d of them in grpc-go's cluster switch", r.name, i, failed, raced)
		}
		t.Logf("%s mode, %s: client %d lost %d RPCs to grpc-go's cluster switch", env.mode, r.name, i, raced)
	}
	env.store.Delete(t, r.only(name, "v2"))
	env.waitRoutesWithout(t, name)
}

// When a route starts naming a cluster a gRPC client did not use before,
// some of its RPCs fail with Unavailable "unknown cluster selected for
// RPC": grpc-go (v1.85, ClientConn.updateResolverStateAndUnlock) installs
// the resolver's new config selector before its cluster manager has
// processed the config that adds the cluster, and an RPC picked in
// between finds no picker for it (grpc-java fixed the same race in
// grpc/grpc-java#11947). The server cannot close that window: the client
// already holds the cluster and its endpoints when it opens. The tests
// count such RPCs, fail on any other error, and fail if they happen later
// than moveWithin after the edit.

// clusterSwitchRace reports whether an RPC failed in that window.
func clusterSwitchRace(err error) bool {
	return status.Code(err) == codes.Unavailable && strings.Contains(status.Convert(err).Message(), "unknown cluster selected for RPC")
}

// waitForVersion makes RPCs until 20 in a row are answered by version, and
// returns how long after since the first of them was, and how many RPCs
// were lost to grpc-go's cluster switch (see clusterSwitchRace).
func waitForVersion(t *testing.T, env *trafficEnv, conn *grpc.ClientConn, version string, since time.Time) (time.Duration, switchLoss) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	var first time.Time
	var lost switchLoss
	for streak := 0; streak < 20; {
		who, err := Call(ctx, conn)
		switch {
		case clusterSwitchRace(err) && time.Since(since) < moveWithin:
			lost.add(time.Now())
			continue
		case err != nil:
			t.Fatalf("waiting for traffic to move to %s, %s after the edit: %v", version, time.Since(since).Round(time.Millisecond), err)
		}
		if env.version(who) != version {
			streak, first = 0, time.Time{}
			continue
		}
		if streak == 0 {
			first = time.Now()
		}
		streak++
	}
	return first.Sub(since), lost
}

// switchLoss is what a client lost to grpc-go's cluster switch: how many
// RPCs, from when to when.
type switchLoss struct {
	rpcs        int
	first, last time.Time
}

func (l *switchLoss) add(at time.Time) {
	if l.rpcs == 0 {
		l.first = at
	}
	l.rpcs++
	l.last = at
}

// String says how many RPCs failed, over how long.
func (l switchLoss) String() string {
	if l.rpcs == 0 {
		return "no RPC lost to grpc-go's cluster switch"
	}
	return fmt.Sprintf("%d RPCs lost to grpc-go's cluster switch within %s", l.rpcs, l.last.Sub(l.first).Round(100*time.Microsecond))
}

// rpcRunner makes RPCs without pause until the test ends, recording each.
type rpcRunner struct {
	mu      sync.Mutex
	answers []answer
	stop    func()
}

type answer struct {
	at  time.Time
	who string
	err error
}

func startRPCRunner(t *testing.T, conn *grpc.ClientConn) *rpcRunner {
	r := &rpcRunner{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			rpc, stop := context.WithTimeout(ctx, 5*time.Second)
			who, err := Call(rpc, conn)
			stop()
			if ctx.Err() != nil {
				return
			}
			r.mu.Lock()
			r.answers = append(r.answers, answer{time.Now(), who, err})
			r.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	r.stop = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	t.Cleanup(r.stop)
	return r
}

// since counts the RPCs answered and failed after t.
func (r *rpcRunner) since(t time.Time) (ok, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.answers {
		switch {
		case a.at.Before(t):
		case a.err != nil:
			failed++
		default:
			ok++
		}
	}
	return ok, failed
}

// failures counts the RPCs that failed, and those of them lost to
// grpc-go's cluster switch (see clusterSwitchRace).
func (r *rpcRunner) failures() (failed, raced int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.answers {
		if a.err != nil {
			failed++
			if clusterSwitchRace(a.err) {
				raced++
			}
		}
	}
	return failed, raced
}

// waitFor waits until the last 20 RPCs since t were answered by version.
func (r *rpcRunner) waitFor(t *testing.T, env *trafficEnv, version string, since time.Time) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		r.mu.Lock()
		streak := 0
		var last answer
		for i := len(r.answers) - 1; i >= 0 && streak < 20; i-- {
			a := r.answers[i]
			if a.at.Before(since) || a.err != nil || env.version(a.who) != version {
				break
			}
			streak++
		}
		if len(r.answers) > 0 {
			last = r.answers[len(r.answers)-1]
		}
		r.mu.Unlock()
		if streak == 20 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a client's RPCs did not move to %s within %s; the last was answered by %q (error %v)", version, WaitTimeout, last.who, last.err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reviewsMesh is the reviews Service and its workloads: a Pod per
// backend (labels app and version), the Service's EndpointSlice, a
// DestinationRule with a subset per version, and a Service per version
// (with its own slice) for Gateway API routes to weigh between.
func reviewsMesh(backends []Backend) string {
	_, port, _ := net.SplitHostPort(backends[0].Addr)
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec:
  selector: {app: reviews}
  ports: [{name: grpc, port: 9080, targetPort: %s}]
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: reviews, namespace: default}
spec:
  host: reviews
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}}
  - {name: v3, labels: {version: v3}}
`, port)
	for _, be := range backends {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default, labels: {app: reviews, version: %s}}
spec: {serviceAccountName: reviews, containers: [{name: app, image: reviews}]}
`, be.Name, be.Version)
	}
	b.WriteString("---\n" + reviewsSlice(backends)(nil))
	for _, v := range []string{"v1", "v2", "v3"} {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Service
metadata: {name: reviews-%s, namespace: default}
spec:
  selector: {app: reviews, version: %s}
  ports: [{name: grpc, port: 9080, targetPort: %s}]
`, v, v, port)
		b.WriteString("---\n" + versionSlice(backends, v)(nil))
	}
	return b.String()
}

// reviewsSlice renders the EndpointSlice of reviews, without one backend
// when without is set.
func reviewsSlice(backends []Backend) func(without *Backend) string {
	return func(without *Backend) string { return endpointSlice("reviews", "reviews-1", backends, without) }
}

// versionSlice renders the EndpointSlice of reviews-<version>.
func versionSlice(backends []Backend, version string) func(without *Backend) string {
	var picked []Backend
	for _, b := range backends {
		if b.Version == version {
			picked = append(picked, b)
		}
	}
	return func(without *Backend) string {
		return endpointSlice("reviews-"+version, "reviews-"+version+"-1", picked, without)
	}
}

func endpointSlice(service, name string, backends []Backend, without *Backend) string {
	_, port, _ := net.SplitHostPort(backends[0].Addr)
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s, namespace: default, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
ports: [{name: grpc, port: %s, protocol: TCP}]
endpoints:
`, name, service, port)
	for _, be := range backends {
		if without != nil && be.Name == without.Name {
			continue
		}
		fmt.Fprintf(&b, "- {addresses: [%s], conditions: {ready: true}, targetRef: {kind: Pod, name: %s, namespace: default}}\n", be.IP(), be.Name)
	}
	return b.String()
}
