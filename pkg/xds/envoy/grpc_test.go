package envoy_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	xdsserver "github.com/meshcp/meshcp/pkg/xds"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
	"github.com/meshcp/meshcp/test/grpctraffic"
	"github.com/meshcp/meshcp/test/testcert"
)

// This file proves that grpc-go's own xDS client accepts what the builders
// generate and routes real RPCs by it. The resources are served by
// go-control-plane's reference server and snapshot cache over loopback
// (test-only: meshcp's ADS server is pkg/xds), to real gRPC backends on
// 127.0.0.x, each answering with its own name.

const target = "reviews.default.svc.cluster.local:9080"

// backends are the reviews pods: name, address, version; ready false marks
// an endpoint the EndpointSlice says is not ready, whose server runs but
// must get no traffic.
var backends = []struct {
	name, addr, version string
	ready               bool
}{
	{"reviews-v1-0", "127.0.0.11", "v1", true},
	{"reviews-v1-1", "127.0.0.12", "v1", true},
	{"reviews-v2-0", "127.0.0.13", "v2", true},
	{"reviews-v3-0", "127.0.0.14", "v3", true},
	{"reviews-v3-1", "127.0.0.15", "v3", false},
}

// startBackends starts one gRPC server per backend, all on one port, and
// returns the port.
func startBackends(t *testing.T) uint32 {
	t.Helper()
	var port int
	for _, b := range backends {
		lis, err := net.Listen("tcp", net.JoinHostPort(b.addr, fmt.Sprint(port)))
		if err != nil {
			t.Fatalf("backend %s: %v", b.name, err)
		}
		port = lis.Addr().(*net.TCPAddr).Port
		t.Cleanup(grpctraffic.Serve(lis, b.name).Stop)
	}
	return uint32(port)
}

// meshFiles is the configuration of reviews: the Service, its slice
// (conditions from backends), the Pods (versions) and a DestinationRule
// with a subset per version.
func meshFiles(port uint32) map[string]string {
	var slice, pods strings.Builder
	fmt.Fprintf(&slice, "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: reviews-1, namespace: default, labels: {kubernetes.io/service-name: reviews}}\n"+
		"addressType: IPv4\nports: [{name: grpc, port: %d}]\nendpoints:\n", port)
	for _, b := range backends {
		fmt.Fprintf(&slice, "- {addresses: [%s], conditions: {ready: %v}, targetRef: {kind: Pod, name: %s}}\n", b.addr, b.ready, b.name)
		fmt.Fprintf(&pods, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, labels: {app: reviews, version: %s}}\n"+
			"spec: {serviceAccountName: reviews, containers: [{name: app, image: reviews}]}\n", b.name, b.version)
	}
	return map[string]string{
		"service.yaml": fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: reviews, namespace: default}\n"+
			"spec: {clusterIP: 10.96.0.10, selector: {app: reviews}, ports: [{name: grpc, port: 9080, targetPort: %d}]}\n", port),
		"slice.yaml": slice.String(),
		"pods.yaml":  pods.String(),
		"dr.yaml": "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: reviews, namespace: default}\n" +
			"spec:\n  host: reviews\n  subsets:\n  - {name: v1, labels: {version: v1}}\n  - {name: v2, labels: {version: v2}}\n  - {name: v3, labels: {version: v3}}\n",
	}
}

const (
	splitVS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http:
  - route:
    - {destination: {host: reviews, subset: v1}, weight: 80}
    - {destination: {host: reviews, subset: v2}, weight: 20}
`
	headerVS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews.default.svc.cluster.local]
  http:
  - match:
    - headers: {end-user: {exact: jason}}
    route:
    - destination: {host: reviews, subset: v3}
  - route:
    - destination: {host: reviews, subset: v1}
`
	faultVS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http:
  - match:
    - uri: {prefix: /reviews.Reviews/}
    fault:
      abort: {grpcStatus: RESOURCE_EXHAUSTED, percentage: {value: 100}}
    route:
    - destination: {host: reviews, subset: v1}
`
)

// xdsServer is go-control-plane's ADS server over a snapshot cache, with a
// record of NACKs.
type xdsServer struct {
	addr  string
	cache cachev3.SnapshotCache
	mu    sync.Mutex
	nacks []string
	acked map[string]bool // "node type" ACKed
}

func startXDSServer(t *testing.T) *xdsServer {
	t.Helper()
	x := &xdsServer{cache: cachev3.NewSnapshotCache(true, cachev3.IDHash{}, nil), acked: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	callbacks := serverv3.CallbackFuncs{StreamRequestFunc: func(_ int64, req *discoveryv3.DiscoveryRequest) error {
		x.mu.Lock()
		defer x.mu.Unlock()
		if d := req.GetErrorDetail(); d != nil {
			x.nacks = append(x.nacks, fmt.Sprintf("%s NACKed %s %v: %s", req.GetNode().GetId(), req.GetTypeUrl(), req.GetResourceNames(), d.GetMessage()))
		} else if req.GetResponseNonce() != "" && req.GetVersionInfo() != "" {
			x.acked[req.GetNode().GetId()+" "+req.GetTypeUrl()] = true
		}
		return nil
	}}
	srv := serverv3.NewServer(ctx, x.cache, callbacks)
	gs := grpc.NewServer()
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(gs, srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	x.addr = lis.Addr().String()
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() {
		gs.Stop()
		cancel()
	})
	return x
}

func (x *xdsServer) checkNoNACK(t *testing.T) {
	t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, n := range x.nacks {
		t.Error(n)
	}
}

// grpcNode is the node of a proxyless client, as its bootstrap says.
func grpcNode(id string) *corev3.Node {
	md, _ := structpb.NewStruct(map[string]any{"GENERATOR": "grpc", "NAMESPACE": "default"})
	return &corev3.Node{Id: id, Metadata: md}
}

// serve generates everything a proxyless client of node id needs from the
// model, validates it and sets it as the node's snapshot. Warnings fail
// the test unless allowed.
func (x *xdsServer) serve(t *testing.T, id string, m *envoy.Model, allowWarnings ...bool) {
	t.Helper()
	x.serveEdited(t, id, m, nil, allowWarnings...)
}

// serveEdited is serve with each generated resource passed to edit
// before it is set (nil: as generated).
func (x *xdsServer) serveEdited(t *testing.T, id string, m *envoy.Model, edit func(proto.Message), allowWarnings ...bool) {
	t.Helper()
	proxy, err := xdsserver.ProxyFromNode(grpcNode(id))
	if err != nil {
		t.Fatal(err)
	}
	if proxy.Kind != envoy.ProxylessGRPC {
		t.Fatalf("node %s read as %s", id, proxy.Kind)
	}
	gen := envoy.Builders{}
	// go-control-plane's cache answers an ADS client only when the
	// snapshot holds exactly the names it asks for: the listener, its
	// routes, the clusters those routes name, and their endpoints.
	names := map[string][]string{envoy.ListenerType: {target}, envoy.RouteType: {target}}
	resources := map[resourcev3.Type][]types.Resource{}
	for _, typ := range []string{envoy.ListenerType, envoy.RouteType, envoy.ClusterType, envoy.EndpointType} {
		res := gen.Generate(envoy.Request{Proxy: proxy, TypeURL: typ, Names: names[typ]}, m)
		if len(res.Resources) == 0 {
			t.Fatalf("%s: no %s generated", id, typ)
		}
		for _, w := range res.Warnings {
			if len(allowWarnings) == 0 {
				t.Errorf("%s %s: %s", id, typ, w)
			}
		}
		for _, r := range res.Resources {
			if err := envoy.Validate(r.Message); err != nil {
				t.Fatalf("%s %s %s: %v", id, typ, r.Name, err)
			}
			if edit != nil {
				edit(r.Message)
			}
			resources[typ] = append(resources[typ], r.Message)
			if rc, ok := r.Message.(*routev3.RouteConfiguration); ok {
				names[envoy.ClusterType] = append(names[envoy.ClusterType], routeClusters(rc)...)
			}
		}
		if typ == envoy.ClusterType {
			names[envoy.EndpointType] = res.Names()
		}
	}
	snap, err := cachev3.NewSnapshot("1", resources)
	if err != nil {
		t.Fatal(err)
	}
	// snap.Consistent() is not called: it looks for route names in filter
	// chains only, not in API listeners, so it calls gRPC's listeners
	// inconsistent. The client itself is the judge here.
	if err := x.cache.SetSnapshot(context.Background(), id, snap); err != nil {
		t.Fatal(err)
	}
}

// routeClusters are the clusters a route configuration sends traffic to.
func routeClusters(rc *routev3.RouteConfiguration) []string {
	var out []string
	for _, vh := range rc.VirtualHosts {
		for _, r := range vh.Routes {
			a := r.GetRoute()
			if c := a.GetCluster(); c != "" {
				out = append(out, c)
			}
			for _, wc := range a.GetWeightedClusters().GetClusters() {
				out = append(out, wc.GetName())
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// dial connects a proxyless client with its own bootstrap and node id;
// extra is more of the bootstrap (certificate providers).
func (x *xdsServer) dial(t *testing.T, id string, extra ...string) *grpc.ClientConn {
	t.Helper()
	return grpctraffic.Dial(t, grpctraffic.Bootstrap(x.addr, id, "default", extra...), target)
}

// call makes one RPC and returns who answered.
func call(ctx context.Context, conn *grpc.ClientConn, md ...string) (string, error) {
	return grpctraffic.Call(ctx, conn, md...)
}

// tally makes n RPCs and counts the answers by backend.
func tally(t *testing.T, conn *grpc.ClientConn, n int, md ...string) map[string]int {
	t.Helper()
	return grpctraffic.Tally(t, conn, n, md...)
}

// waitACKs waits until node id has ACKed every type, or fails on a NACK.
func (x *xdsServer) waitACKs(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		x.mu.Lock()
		nacks, all := slices.Clone(x.nacks), true
		for _, typ := range envoy.Types() {
			all = all && x.acked[id+" "+typ]
		}
		x.mu.Unlock()
		if len(nacks) > 0 {
			t.Fatalf("NACKs: %v", nacks)
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not ACK every type", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// grpc-go accepts everything the builders use for gRPC clients: least
// request and ring hash balancers, circuit breakers, outlier detection,
// TLS through certificate providers, regex and header matches, weighted
// subsets, max_stream_duration, retries, fault delay and abort, and the
// Envoy-only features left out. The richer testdata configuration is
// served and the client must ACK every type.
func TestGRPCClientAcceptsEveryFeature(t *testing.T) {
	x := startXDSServer(t)
	x.serve(t, "client-features", loadWorld(t, "mesh", nil).model(), true)
	// ISTIO_MUTUAL clusters name certificate provider "default": the
	// client's bootstrap must define it, as istio-agent's bootstraps do,
	// or it refuses them (A29).
	conn := x.dial(t, "client-features", certificateProviders(t))
	conn.Connect()
	x.waitACKs(t, "client-features")
}

// certificateProviders is a bootstrap fragment with the file-watcher
// certificate provider "default" over a CA and a workload certificate
// made for the test.
func certificateProviders(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "test root")
	spiffe, _ := url.Parse("spiffe://cluster.local/ns/default/sa/client")
	workload := ca.Issue(t, &x509.Certificate{URIs: []*url.URL{spiffe}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}})
	files := map[string][]byte{"root-cert.pem": ca.PEM, "cert.pem": workload.Cert, "key.pem": workload.Key}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf(`,
		"certificate_providers": {"default": {"plugin_name": "file_watcher", "config": {
			"certificate_file": %q, "private_key_file": %q, "ca_certificate_file": %q, "refresh_interval": "900s"}}}`,
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "root-cert.pem"))
}

func versionOf(name string) string {
	for _, b := range backends {
		if b.name == name {
			return b.version
		}
	}
	return "?"
}

func TestGRPCClientRoutesByGeneratedConfig(t *testing.T) {
	port := startBackends(t)
	x := startXDSServer(t)
	files := meshFiles(port)
	model := func(vs string) *envoy.Model {
		extra := map[string]string{}
		for k, v := range files {
			extra[k] = v
		}
		if vs != "" {
			extra["vs.yaml"] = vs
		}
		return loadWorld(t, "", extra).model()
	}
	x.serve(t, "client-plain", model(""))
	x.serve(t, "client-split", model(splitVS))
	x.serve(t, "client-header", model(headerVS))
	x.serve(t, "client-fault", model(faultVS))

	t.Run("no VirtualService: every ready endpoint, none other", func(t *testing.T) {
		got := tally(t, x.dial(t, "client-plain"), 400)
		for _, b := range backends {
			if b.ready && got[b.name] == 0 {
				t.Errorf("%s got no RPC: %v", b.name, got)
			}
			if !b.ready && got[b.name] > 0 {
				t.Errorf("%s is not ready but got %d RPCs", b.name, got[b.name])
			}
		}
		t.Logf("spread: %v", got)
	})

	t.Run("80/20 between two subsets", func(t *testing.T) {
		const n = 2000
		got := tally(t, x.dial(t, "client-split"), n)
		byVersion := map[string]int{}
		for who, c := range got {
			byVersion[versionOf(who)] += c
		}
		v1 := 100 * float64(byVersion["v1"]) / n
		if v1 < 75 || v1 > 85 || byVersion["v1"]+byVersion["v2"] != n {
			t.Errorf("split %v: v1 %.1f%%, want 80±5 and nothing outside v1 and v2", byVersion, v1)
		}
		t.Logf("split over %d RPCs: %v (v1 %.1f%%)", n, byVersion, v1)
	})

	t.Run("header match routes to v3", func(t *testing.T) {
		conn := x.dial(t, "client-header")
		marked := tally(t, conn, 50, "end-user", "jason")
		if len(marked) != 1 || marked["reviews-v3-0"] != 50 {
			t.Errorf("marked RPCs went to %v, want all 50 to reviews-v3-0 (the ready v3)", marked)
		}
		unmarked := tally(t, conn, 50)
		for who := range unmarked {
			if versionOf(who) != "v1" {
				t.Errorf("unmarked RPCs went to %v, want v1 only", unmarked)
			}
		}
	})

	t.Run("fault abort fails every RPC with the configured code", func(t *testing.T) {
		conn := x.dial(t, "client-fault")
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		for i := range 100 {
			who, err := call(ctx, conn)
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("RPC %d: answered by %q, error %v; want RESOURCE_EXHAUSTED", i, who, err)
			}
		}
	})
	x.checkNoNACK(t)
}

// Why gRPC clients get no path_separated_prefix (see pathPrefixes):
// grpc-go rejects a route configuration that uses it. Should a grpc-go
// release accept it, this test fails, and the builders can send it to gRPC
// clients too.
func TestGRPCClientRejectsPathSeparatedPrefix(t *testing.T) {
	x := startXDSServer(t)
	x.serveEdited(t, "client-separated", loadWorld(t, "", meshFiles(9080)).model(), func(m proto.Message) {
		if rc, ok := m.(*routev3.RouteConfiguration); ok {
			for _, vh := range rc.VirtualHosts {
				for _, r := range vh.Routes {
					r.Match.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: "/reviews.Reviews"}
				}
			}
		}
	})
	x.dial(t, "client-separated").Connect()
	deadline := time.Now().Add(10 * time.Second)
	for {
		x.mu.Lock()
		nacks := slices.Clone(x.nacks)
		x.mu.Unlock()
		for _, n := range nacks {
			if strings.Contains(n, envoy.RouteType) && strings.Contains(n, "path specifier") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("grpc-go did not NACK path_separated_prefix; NACKs: %v", nacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
