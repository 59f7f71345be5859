package envoy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/registry/registrytest"
	"github.com/meshcp/meshcp/pkg/xds"
	"github.com/meshcp/meshcp/pkg/xds/envoy"
	"github.com/meshcp/meshcp/pkg/xds/xdstest"
)

// served is a world read from a folder, served over a real xDS server on
// loopback by envoy.Serve, as the daemon does.
type served struct {
	*registrytest.World
	srv  *xds.Server
	gen  *envoy.Generator
	logs *krttest.Logs
}

func serveWorld(t *testing.T, files map[string]string) *served {
	t.Helper()
	w := registrytest.Load(t, nil, files)
	opts := xds.DefaultOptions()
	opts.Addr, opts.TLSAddr = "127.0.0.1:0", ""
	opts.Debounce = xds.DebounceOptions{Quiet: 5 * time.Millisecond, Max: 50 * time.Millisecond}
	logs := &krttest.Logs{}
	srv, err := xds.NewServer(opts, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	gen, err := envoy.Serve(srv, envoy.Sources{Registry: w.Registry, Configs: w.Sources}, stop, envoy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(stop); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(stop)
		srv.Wait()
	})
	return &served{World: w, srv: srv, gen: gen, logs: logs}
}

// write replaces a file of the world's folder.
func (s *served) write(t *testing.T, name, content string) {
	t.Helper()
	krttest.WriteFile(t, filepath.Join(s.Dir, name), content)
}

// adsClient is a state-of-the-world ADS stream of a proxyless gRPC
// client (or of an Envoy, when its id is one: "sidecar~ip~pod.ns~domain"),
// asking for what grpc-go asks for and ACKing every response.
// Every resource it receives is checked with envoy.Validate, and every
// response against gRPC's 4 MiB.
type adsClient struct {
	t         *testing.T
	id        string
	namespace string
	s         *xdstest.Stream[discoveryv3.DiscoveryRequest, discoveryv3.DiscoveryResponse]
	names     map[string][]string
	// labels are the node's LABELS, sent with the first request, if set.
	labels map[string]any
}

func connectGRPC(t *testing.T, addr, id, namespace string) *adsClient {
	t.Helper()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(xdstest.Dial(t, addr))
	return &adsClient{t: t, id: id, namespace: namespace, s: xdstest.Open(t, ads.StreamAggregatedResources), names: map[string][]string{}}
}

func (c *adsClient) send(req *discoveryv3.DiscoveryRequest) {
	c.t.Helper()
	c.s.Send(req)
}

// watch subscribes to names of a type and returns the answer, ACKed.
func (c *adsClient) watch(typeURL string, names ...string) *discoveryv3.DiscoveryResponse {
	c.t.Helper()
	c.names[typeURL] = names
	first := len(c.names) == 1
	req := &discoveryv3.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: names}
	if first {
		meta := map[string]any{"GENERATOR": "grpc", "NAMESPACE": c.namespace}
		if strings.Contains(c.id, "~") { // "sidecar~ip~pod.ns~domain": an Envoy
			delete(meta, "GENERATOR")
		}
		if c.labels != nil {
			meta["LABELS"] = c.labels
		}
		md, _ := structpb.NewStruct(meta)
		req.Node = &corev3.Node{Id: c.id, Metadata: md}
	}
	c.send(req)
	return c.next()
}

// next returns the next response, ACKed, failing the test if none comes.
func (c *adsClient) next() *discoveryv3.DiscoveryResponse {
	c.t.Helper()
	resp := c.s.Recv(krttest.Timeout)
	c.check(resp)
	c.send(&discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: c.names[resp.TypeUrl]})
	return resp
}

// nothingMore checks that no response but the answer to a sentinel
// request (an unknown type) comes: nothing else was pushed.
func (c *adsClient) nothingMore() {
	c.t.Helper()
	const sentinel = "example.com/Sentinel"
	c.names[sentinel] = nil
	c.send(&discoveryv3.DiscoveryRequest{TypeUrl: sentinel})
	if resp := c.next(); resp.TypeUrl != sentinel {
		c.t.Fatalf("%s: got a push of %s (%d resources), want nothing", c.id, resp.TypeUrl, len(resp.Resources))
	}
}

func (c *adsClient) check(resp *discoveryv3.DiscoveryResponse) {
	c.t.Helper()
	if size := proto.Size(resp); size > 4<<20 {
		c.t.Errorf("%s: a %s response of %d bytes, over gRPC's 4 MiB", c.id, resp.TypeUrl, size)
	}
	for _, a := range resp.Resources {
		m, err := a.UnmarshalNew()
		if err != nil {
			c.t.Fatalf("%s: %v", c.id, err)
		}
		if err := envoy.Validate(m); err != nil {
			c.t.Errorf("%s: %s: %v", c.id, resp.TypeUrl, err)
		}
	}
}

// resourceNames lists the names of the resources of a response.
func resourceNames(t *testing.T, resp *discoveryv3.DiscoveryResponse) []string {
	t.Helper()
	var out []string
	for _, a := range resp.Resources {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		name := m.ProtoReflect().Descriptor().Fields().ByName("name")
		if name == nil {
			name = m.ProtoReflect().Descriptor().Fields().ByName("cluster_name")
		}
		out = append(out, m.ProtoReflect().Get(name).String())
	}
	slices.Sort(out)
	return out
}

var reviewsClusters = []string{reviewsC, reviewsV1, reviewsV2, reviewsV3}

// subscribeReviews has a client subscribe as grpc-go does to
// xds:///reviews.default.svc.cluster.local:9080, and to the clusters of
// ratings too.
func subscribeReviews(c *adsClient) {
	clusters := append(slices.Clone(reviewsClusters), "outbound|9080||"+ratings)
	c.watch(envoy.ListenerType, target)
	c.watch(envoy.RouteType, target)
	c.watch(envoy.ClusterType, clusters...)
	c.watch(envoy.EndpointType, clusters...)
}

const ratingsFiles = `apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: default}
spec: {clusterIP: 10.96.0.11, selector: {app: ratings}, ports: [{name: grpc, port: 9080}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ratings-1, namespace: default, labels: {kubernetes.io/service-name: ratings}}
addressType: IPv4
ports: [{name: grpc, port: 9080}]
endpoints:
- {addresses: [10.1.0.40], conditions: {ready: true}}
`

func servedReviews(t *testing.T) *served {
	files := meshFiles(9080)
	files["ratings.yaml"] = ratingsFiles
	return serveWorld(t, files)
}

// An endpoint change re-sends EDS alone, and only the clusters it
// changed; the Model is not rebuilt for it.
func TestEndpointChangeResendsOnlyItsClusters(t *testing.T) {
	s := servedReviews(t)
	c := connectGRPC(t, s.srv.Addr(), "client-eds", "default")
	subscribeReviews(c)
	builds := s.gen.Stats().ModelBuilds

	// reviews-v3-1 becomes ready: the v3 subset and the whole service
	// change, v1, v2 and ratings do not.
	files := meshFiles(9080)
	s.write(t, "slice.yaml", strings.Replace(files["slice.yaml"], "{ready: false}", "{ready: true}", 1))
	resp := c.next()
	if resp.TypeUrl != envoy.EndpointType || fmt.Sprint(resourceNames(t, resp)) != fmt.Sprint(slices.Sorted(slices.Values([]string{reviewsC, reviewsV3}))) {
		t.Fatalf("an endpoint change sent %s %v, want EDS of %s and %s only", resp.TypeUrl, resourceNames(t, resp), reviewsC, reviewsV3)
	}
	c.nothingMore()
	if got := s.gen.Stats().ModelBuilds; got != builds {
		t.Errorf("an endpoint change rebuilt the Model (%d builds, was %d)", got, builds)
	}
}

// A VirtualService change re-sends RDS and nothing else: clusters,
// endpoints and listeners do not depend on it.
func TestVirtualServiceChangeResendsRoutes(t *testing.T) {
	s := servedReviews(t)
	c := connectGRPC(t, s.srv.Addr(), "client-rds", "default")
	subscribeReviews(c)
	s.write(t, "vs.yaml", splitVS)
	resp := c.next()
	if resp.TypeUrl != envoy.RouteType || fmt.Sprint(resourceNames(t, resp)) != "["+target+"]" {
		t.Fatalf("a VirtualService change sent %s %v, want RDS %s", resp.TypeUrl, resourceNames(t, resp), target)
	}
	c.nothingMore()
	// A DestinationRule change concerns clusters, endpoints and routes.
	s.write(t, "dr.yaml", strings.Replace(meshFiles(9080)["dr.yaml"], "subsets:", "trafficPolicy: {loadBalancer: {simple: LEAST_REQUEST}}\n  subsets:", 1))
	if resp := c.next(); resp.TypeUrl != envoy.ClusterType || len(resp.Resources) != 5 {
		t.Fatalf("a DestinationRule change sent %s with %d resources first, want every watched cluster", resp.TypeUrl, len(resp.Resources))
	}
	c.nothingMore() // the policy changes no endpoint and no route
}

// Clients of one namespace watching one target share each output: one
// Model per push and one generation per type, however many connect.
func TestClientsShareOnePushsOutputs(t *testing.T) {
	s := servedReviews(t)
	const n = 20
	var clients []*adsClient
	for i := range n {
		c := connectGRPC(t, s.srv.Addr(), fmt.Sprintf("client-%d", i), "default")
		subscribeReviews(c)
		clients = append(clients, c)
	}
	st := s.gen.Stats()
	if st.ModelBuilds != 1 || st.Generations != 4 || st.Reuses != 4*(n-1) {
		t.Errorf("%d clients connecting: %+v, want 1 Model, 4 generations, the rest reused", n, st)
	}
	s.write(t, "vs.yaml", splitVS)
	for _, c := range clients {
		if resp := c.next(); resp.TypeUrl != envoy.RouteType {
			t.Fatalf("%s got %s", c.id, resp.TypeUrl)
		}
	}
	after := s.gen.Stats()
	if after.ModelBuilds != st.ModelBuilds+1 || after.Generations != st.Generations+1 {
		t.Errorf("one VirtualService change for %d clients: %+v (was %+v), want one more Model and one RDS generation", n, after, st)
	}
}

// What the builders could not generate as written is on /debug/syncz for
// each client it concerns, and logged once for all of them.
func TestBuilderWarningsOnSyncz(t *testing.T) {
	s := servedReviews(t)
	s.write(t, "vs.yaml", `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http:
  - mirror: {host: ratings}
    route:
    - destination: {host: reviews, subset: v1}
`)
	var clients []*adsClient
	for _, id := range []string{"warned-1", "warned-2"} {
		c := connectGRPC(t, s.srv.Addr(), id, "default")
		c.watch(envoy.ListenerType, target)
		resp := c.watch(envoy.RouteType, target)
		for !strings.Contains(string(mustJSON(t, resp)), "v1|") {
			resp = c.next() // the VirtualService may arrive after the first answer
		}
		clients = append(clients, c)
	}
	rec := httptest.NewRecorder()
	s.srv.SyncHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/syncz", nil))
	var dump struct {
		Connections []struct {
			NodeID string `json:"nodeId"`
			Types  []struct {
				TypeURL  string   `json:"typeUrl"`
				Warnings []string `json:"warnings"`
			} `json:"types"`
		} `json:"connections"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &dump); err != nil {
		t.Fatal(err)
	}
	for _, c := range dump.Connections {
		for _, ts := range c.Types {
			if ts.TypeURL == envoy.RouteType && (len(ts.Warnings) != 1 || !strings.Contains(ts.Warnings[0], "VirtualService/default/reviews spec.http[0].mirror")) {
				t.Errorf("%s RDS warnings = %v", c.NodeID, ts.Warnings)
			}
		}
	}
	if n := s.logs.Count("level=WARN", "configuration not generated as written", "spec.http[0].mirror"); n != 1 {
		t.Errorf("the warning was logged %d times at warning level, want once", n)
	}
}

// /debug/config_dump?proxyID= shows what that client holds, in Envoy's
// config dump layout.
func TestConfigDumpShowsWhatTheClientHolds(t *testing.T) {
	s := servedReviews(t)
	c := connectGRPC(t, s.srv.Addr(), "dumped", "default")
	subscribeReviews(c)
	h := envoy.ConfigDumpHandler(s.srv)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		body, _ := io.ReadAll(rec.Body)
		return rec.Code, string(body)
	}
	code, body := get("/debug/config_dump?proxyID=dumped")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	// protojson spaces its output unpredictably: compare it re-encoded.
	var dump struct {
		Configs []map[string]any `json:"configs"`
	}
	if err := json.Unmarshal([]byte(body), &dump); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	var types []string
	for _, c := range dump.Configs {
		types = append(types, fmt.Sprint(c["@type"]))
	}
	if want := "type.googleapis.com/envoy.admin.v3.ClustersConfigDump type.googleapis.com/envoy.admin.v3.EndpointsConfigDump " +
		"type.googleapis.com/envoy.admin.v3.ListenersConfigDump type.googleapis.com/envoy.admin.v3.RoutesConfigDump"; strings.Join(types, " ") != want {
		t.Errorf("dumps %v, want %s", types, want)
	}
	flat, _ := json.Marshal(dump)
	for _, want := range []string{`"dynamic_active_clusters"`, `"dynamic_endpoint_configs"`, `"dynamic_listeners"`, `"name":"` + target + `"`,
		`"dynamic_route_configs"`, `"cluster_name":"` + reviewsV3 + `"`, `"last_updated"`} {
		if !strings.Contains(string(flat), want) {
			t.Errorf("the dump lacks %s", want)
		}
	}
	if code, _ := get("/debug/config_dump?proxyID=nobody"); code != http.StatusNotFound {
		t.Errorf("an unknown proxy answered %d", code)
	}
	if code, _ := get("/debug/config_dump"); code != http.StatusBadRequest {
		t.Errorf("no proxyID answered %d", code)
	}
}

func mustJSON(t *testing.T, resp *discoveryv3.DiscoveryResponse) []byte {
	t.Helper()
	var out []byte
	for _, a := range resp.Resources {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, []byte(asJSON(m))...)
	}
	return out
}

// A push that reaches no Envoy client builds no Model: a daemon that only
// distributes configuration pays nothing for the Envoy types.
func TestNoModelWithoutEnvoyClients(t *testing.T) {
	s := servedReviews(t)
	generation := func() uint64 {
		rec := httptest.NewRecorder()
		s.srv.SyncHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/syncz", nil))
		var z struct {
			Generation uint64 `json:"generation"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &z); err != nil {
			t.Fatal(err)
		}
		return z.Generation
	}
	before := generation()
	s.write(t, "vs.yaml", splitVS)
	deadline := time.Now().Add(krttest.Timeout)
	for generation() == before {
		if time.Now().After(deadline) {
			t.Fatal("the VirtualService was never pushed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.gen.Stats().ModelBuilds; n != 0 {
		t.Errorf("%d Models built with no Envoy client connected", n)
	}
	c := connectGRPC(t, s.srv.Addr(), "late", "default")
	c.watch(envoy.ListenerType, target)
	c.watch(envoy.RouteType, target)
	if n := s.gen.Stats().ModelBuilds; n != 1 {
		t.Errorf("%d Models built for the first client, want 1", n)
	}
}

// The clusters of a DNS service carry its endpoints: an endpoint change
// re-sends them (and still nothing else).
func TestEndpointChangeOfADNSServiceResendsItsCluster(t *testing.T) {
	entry := func(host string) string {
		return `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: default}
spec:
  hosts: [api.example.com]
  ports: [{number: 443, name: grpc, protocol: GRPC}]
  resolution: DNS
  endpoints: [{address: ` + host + `}]
`
	}
	s := serveWorld(t, map[string]string{"entry.yaml": entry("a.example.com")})
	c := connectGRPC(t, s.srv.Addr(), "client-dns", "default")
	const cluster = "outbound|443||api.example.com"
	if resp := c.watch(envoy.ClusterType, cluster); !strings.Contains(string(mustJSON(t, resp)), "a.example.com") {
		t.Fatalf("the DNS cluster does not name its endpoint: %s", mustJSON(t, resp))
	}
	s.write(t, "entry.yaml", entry("b.example.com"))
	resp := c.next()
	if resp.TypeUrl != envoy.ClusterType || !strings.Contains(string(mustJSON(t, resp)), "b.example.com") {
		t.Fatalf("the endpoint change sent %s: %s", resp.TypeUrl, mustJSON(t, resp))
	}
	c.nothingMore()
}
