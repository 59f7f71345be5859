package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	mcp "istio.io/api/mcp/v1alpha1"
	istionetworking "istio.io/api/networking/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/examples"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

// pushDebounce is the daemon's default quiet period, which the latency
// checks below allow for; pushMargin is what they allow beyond it (the
// suite runs with the race detector on 2 shared cores).
const (
	pushDebounce = 100 * time.Millisecond
	pushMargin   = 2 * time.Second
)

// adsWatcher is a state-of-the-world ADS client watching every
// VirtualService, ACKing each response.
type adsWatcher struct {
	t      *testing.T
	stream grpc.BidiStreamingClient[discoveryv3.DiscoveryRequest, discoveryv3.DiscoveryResponse]
	got    chan map[string]*istionetworking.VirtualService
	errs   chan error
}

func watchVirtualServices(t *testing.T, addr, nodeID string) *adsWatcher {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := &adsWatcher{t: t, stream: stream, got: make(chan map[string]*istionetworking.VirtualService, 16), errs: make(chan error, 1)}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: nodeID}, TypeUrl: vsKind, ResourceNames: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			resp, err := stream.Recv()
			if err != nil {
				w.errs <- err
				return
			}
			vss, err := decodeVirtualServices(resp)
			if err != nil {
				w.errs <- err
				return
			}
			if err := stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: []string{"*"}}); err != nil {
				w.errs <- err
				return
			}
			w.got <- vss
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cc.Close()
	})
	return w
}

func decodeVirtualServices(resp *discoveryv3.DiscoveryResponse) (map[string]*istionetworking.VirtualService, error) {
	out := map[string]*istionetworking.VirtualService{}
	for _, body := range resp.Resources {
		var r mcp.Resource
		if err := body.UnmarshalTo(&r); err != nil {
			return nil, fmt.Errorf("a %s resource is not an MCP Resource: %w", resp.TypeUrl, err)
		}
		var vs istionetworking.VirtualService
		if err := r.Body.UnmarshalTo(&vs); err != nil {
			return nil, fmt.Errorf("%s: the body is not a VirtualService: %w", r.Metadata.GetName(), err)
		}
		out[r.Metadata.GetName()] = &vs
	}
	return out, nil
}

// next waits for the next response that satisfies cond and returns when it
// arrived.
func (w *adsWatcher) next(what string, cond func(map[string]*istionetworking.VirtualService) bool) time.Time {
	w.t.Helper()
	deadline := time.After(WaitTimeout)
	for {
		select {
		case vss := <-w.got:
			if cond(vss) {
				return time.Now()
			}
		case err := <-w.errs:
			w.t.Fatalf("the ADS stream ended while waiting for %s: %v", what, err)
		case <-deadline:
			w.t.Fatalf("no response with %s within %s", what, WaitTimeout)
		}
	}
}

func hasHost(name, host string) func(map[string]*istionetworking.VirtualService) bool {
	return func(vss map[string]*istionetworking.VirtualService) bool {
		vs := vss[name]
		return vs != nil && len(vs.Hosts) > 0 && vs.Hosts[0] == host
	}
}

// checkLatency fails the test when a change took longer than the debounce
// window (plus the folder watch's, in file mode) and the margin.
func checkLatency(t *testing.T, what string, took, window time.Duration) {
	t.Helper()
	t.Logf("%s reached the client %s after the write", what, took.Round(time.Millisecond))
	if took > window+pushMargin {
		t.Errorf("%s took %s, beyond the debounce window %s plus %s", what, took, window, pushMargin)
	}
}

// timedWrite runs an API write, logs how long the API server took, and
// returns when it answered.
func timedWrite(t *testing.T, what string, write func()) time.Time {
	t.Helper()
	start := time.Now()
	write()
	done := time.Now()
	t.Logf("%s took the API server %s", what, done.Sub(start).Round(time.Millisecond))
	return done
}

// waitSynced asks /debug/syncz to wait until every client ACKed the last
// push, and returns its answer.
func waitSynced(t *testing.T, d *Daemon) map[string]any {
	t.Helper()
	_, body, err := d.Get("/debug/syncz")
	if err != nil {
		t.Fatal(err)
	}
	var dump struct {
		Generation uint64 `json:"generation"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		t.Fatalf("/debug/syncz: %v\n%s", err, body)
	}
	status, body, err := d.Get(fmt.Sprintf("/debug/syncz?generation=%d&wait=10s", dump.Generation))
	if err != nil || status != 200 {
		t.Fatalf("/debug/syncz?generation=%d&wait=10s: %d %v\n%s", dump.Generation, status, err, body)
	}
	var res map[string]any
	_ = json.Unmarshal(body, &res)
	return res
}

// A client subscribed to VirtualServices over xDS gets the folder's and
// every edit of it, within the debounce windows; the daemon's own 'xds
// watch' client prints the same; /debug/syncz shows the client's ACKs.
func TestXDSFileMode(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, examples.FS); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config")
	const fileDebounce = 20 * time.Millisecond
	d := StartDaemon(t, "--config-dir", cfg, "--mesh-config", filepath.Join(dir, "mesh.yaml"), "--debounce", fileDebounce.String())
	if d.Addrs["xds"] == "" {
		t.Fatalf("the start-up line names no xds address: %v", d.Addrs)
	}
	w := watchVirtualServices(t, d.Addrs["xds"], "e2e-file")
	w.next("the examples", func(vss map[string]*istionetworking.VirtualService) bool {
		return vss["bookinfo/reviews"] != nil && vss["bookinfo/ratings"] != nil
	})

	cli := startWatchCLI(t, d.Addrs["xds"])

	wrote := time.Now()
	krttest.WriteFile(t, filepath.Join(cfg, "bookinfo", "details.yaml"), `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: details, namespace: bookinfo}
spec:
  hosts: [details]
  http:
  - route:
    - destination: {host: details}
`)
	got := w.next("bookinfo/details", hasHost("bookinfo/details", "details"))
	checkLatency(t, "a new file", got.Sub(wrote), fileDebounce+pushDebounce)

	wrote = time.Now()
	krttest.WriteFile(t, filepath.Join(cfg, "bookinfo", "details.yaml"), `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: details, namespace: bookinfo}
spec:
  hosts: [details.v2]
  http:
  - route:
    - destination: {host: details}
`)
	got = w.next("the edited bookinfo/details", hasHost("bookinfo/details", "details.v2"))
	checkLatency(t, "an edit", got.Sub(wrote), fileDebounce+pushDebounce)

	if err := os.Remove(filepath.Join(cfg, "bookinfo", "details.yaml")); err != nil {
		t.Fatal(err)
	}
	w.next("bookinfo/details removed", func(vss map[string]*istionetworking.VirtualService) bool { return vss["bookinfo/details"] == nil })

	res := waitSynced(t, d)
	if res["synced"] != true || res["connections"].(float64) < 1 {
		t.Errorf("/debug/syncz wait: %v", res)
	}
	_, body, _ := d.Get("/debug/syncz")
	if !strings.Contains(string(body), `"nodeId": "e2e-file"`) || !strings.Contains(string(body), `"acked"`) {
		t.Errorf("/debug/syncz does not show the client's ACK:\n%s", truncate(body, 3000))
	}
	cli.wait(t, "bookinfo/details")

	// The ACKs of the pushes are timed from the change.
	_, metrics, err := httpGet(d.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`meshcp_xds_change_to_ack_seconds_count\{type="networking.istio.io/v1/VirtualService"\} [1-9]`).Match(metrics) {
		t.Errorf("no change-to-ACK samples in the metrics:\n%s", grepLines(metrics, "meshcp_xds"))
	}
}

func grepLines(b []byte, substr string) string {
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// watchCLI is `controlplane xds watch` running beside a test.
type watchCLI struct {
	cmd   *exec.Cmd
	lines chan string
}

// startWatchCLI runs the daemon binary's xDS client for VirtualServices
// until it printed 3 responses (the current state, a create and an edit).
func startWatchCLI(t *testing.T, addr string) *watchCLI {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "xds", "watch", "--addr", addr, "--type", vsKind, "--count", "3", "--timeout", WaitTimeout.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &watchCLI{cmd: cmd, lines: make(chan string, 8)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Its first line is the current state: then it is subscribed.
	select {
	case line := <-c.lines:
		if !strings.Contains(line, `"name":"bookinfo/reviews"`) {
			t.Fatalf("xds watch printed %s", line)
		}
	case <-time.After(WaitTimeout):
		t.Fatal("xds watch printed nothing")
	}
	return c
}

// wait checks that the client printed a response naming name and exited
// 0 after its --count.
func (c *watchCLI) wait(t *testing.T, name string) {
	t.Helper()
	var seen bool
	for line := range c.lines {
		var u struct {
			Type      string            `json:"type"`
			Resources []json.RawMessage `json:"resources"`
		}
		if err := json.Unmarshal([]byte(line), &u); err != nil || u.Type != vsKind {
			t.Errorf("xds watch printed %q (%v)", line, err)
		}
		seen = seen || strings.Contains(line, `"name":"`+name+`"`)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Errorf("xds watch: %v", err)
	}
	if !seen {
		t.Errorf("xds watch never printed %s", name)
	}
}

// Against a real API server: a VirtualService created, changed and deleted
// through the API reaches a subscribed client within the debounce window.
func TestXDSKubernetesMode(t *testing.T) {
	c := StartCluster(t)
	d := StartDaemon(t, "--kubeconfig", c.KubeconfigPath)
	d.WaitReady()
	createNamespace(t, c, testNamespace)
	w := watchVirtualServices(t, d.Addrs["xds"], "e2e-kube")
	w.next("the (empty) current state", func(map[string]*istionetworking.VirtualService) bool { return true })

	// Timed from the API server's answer: the first write of a custom
	// resource kind can take the API server itself a few seconds under
	// -race on 2 shared cores; that is not the push's latency.
	wrote := timedWrite(t, "the create", func() { createVS(t, c, virtualService("reviews", "reviews", 80, 20)) })
	got := w.next("shop/reviews", hasHost("shop/reviews", "reviews"))
	checkLatency(t, "an API create", got.Sub(wrote), pushDebounce)

	wrote = timedWrite(t, "the update", func() { updateVS(t, c, "reviews", &virtualService("reviews", "reviews.v2", 50, 50).Spec) })
	got = w.next("the updated shop/reviews", hasHost("shop/reviews", "reviews.v2"))
	checkLatency(t, "an API update", got.Sub(wrote), pushDebounce)

	if err := c.Istio.NetworkingV1().VirtualServices(testNamespace).Delete(t.Context(), "reviews", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.next("shop/reviews removed", func(vss map[string]*istionetworking.VirtualService) bool { return vss["shop/reviews"] == nil })
	if res := waitSynced(t, d); res["synced"] != true {
		t.Errorf("/debug/syncz wait: %v", res)
	}
}

// Gateway API objects reach an xDS client as the VirtualServices they
// become: an HTTPRoute created through the API shows up as a derived
// VirtualService, and moving a route onto the listener adds another.
func TestXDSGatewayAPI(t *testing.T) {
	c := StartCluster(t)
	d := StartDaemon(t, "--kubeconfig", c.KubeconfigPath, "--lease-namespace", "default")
	d.WaitReady()
	w := watchVirtualServices(t, d.Addrs["xds"], "e2e-gateway")
	w.next("the (empty) current state", func(map[string]*istionetworking.VirtualService) bool { return true })

	createGatewayObjects(t, c)
	wrote := time.Now() // the last of the objects written: the latency of the push, not of the writes before it
	got := w.next("HTTPRoute shop's VirtualService, through the gateway to shop", func(vss map[string]*istionetworking.VirtualService) bool {
		vs := vss[shopVSKey]
		return hasHost(shopVSKey, "shop.example.com")(vss) && len(vs.Gateways) == 1 && vs.Gateways[0] == "web/web-istio-autogenerated-k8s-gateway-http" &&
			len(vs.Http) == 1 && len(vs.Http[0].Route) == 1 && vs.Http[0].Route[0].Destination.GetHost() == "shop.web.svc.cluster.local"
	})
	checkLatency(t, "a Gateway and its HTTPRoutes", got.Sub(wrote), pushDebounce)

	wrote = timedWrite(t, "the route edit", func() {
		editRoute(t, c, "blog", func(r *gatewayv1.HTTPRoute) { *r.Spec.ParentRefs[0].SectionName = "http" })
	})
	blogKey := "web/web.web-istio-autogenerated-k8s-gateway-http.blog.example.com"
	got = w.next("the VirtualService of HTTPRoute blog", hasHost(blogKey, "blog.example.com"))
	checkLatency(t, "an HTTPRoute edit", got.Sub(wrote), pushDebounce)
}
