package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	istionetworking "istio.io/api/networking/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Short election timings, so a killed leader is replaced in seconds; the
// production defaults are 15s, 10s and 2s.
const (
	replicaLease       = 4 * time.Second
	replicaRenew       = 3 * time.Second
	replicaRetry       = 500 * time.Millisecond
	replicaLeaseName   = "e2e-replicas"
	failoverNodeID     = "e2e-failover"
	failoverSlack      = 5 * time.Second // process scheduling under -race on 2 cores
	replicaLeaseNSName = "default"
)

// failoverWatcher is an ADS client that reaches "the control plane"
// through a list of replica addresses, as a proxy reaches it through a
// Service: it stays on one replica, and when that one goes away it opens a
// new stream on the next and asks for everything again, as Envoy and
// grpc-go do.
type failoverWatcher struct {
	t       *testing.T
	mu      sync.Mutex
	latest  map[string]*istionetworking.VirtualService
	streams int // streams opened, the first included
	changed chan struct{}
}

func watchThroughReplicas(t *testing.T, addrs []string) *failoverWatcher {
	t.Helper()
	r := manual.NewBuilderWithScheme("replicas")
	var state resolver.State
	for _, a := range addrs {
		state.Addresses = append(state.Addresses, resolver.Address{Addr: a})
	}
	r.InitialState(state)
	cc, err := grpc.NewClient(r.Scheme()+":///controlplane", grpc.WithResolvers(r), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &failoverWatcher{t: t, changed: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		client := discoveryv3.NewAggregatedDiscoveryServiceClient(cc)
		for ctx.Err() == nil {
			w.watchOnce(ctx, client)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond): // a reconnect backoff
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cc.Close()
	})
	return w
}

// watchOnce runs one stream until it breaks.
func (w *failoverWatcher) watchOnce(ctx context.Context, client discoveryv3.AggregatedDiscoveryServiceClient) {
	stream, err := client.StreamAggregatedResources(ctx, grpc.WaitForReady(true))
	if err != nil {
		return
	}
	w.mu.Lock()
	w.streams++
	w.mu.Unlock()
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: failoverNodeID}, TypeUrl: vsKind, ResourceNames: []string{"*"}}); err != nil {
		return
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return
		}
		vss, err := decodeVirtualServices(resp)
		if err != nil {
			w.t.Errorf("failover watcher: %v", err)
			return
		}
		if err := stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: []string{"*"}}); err != nil {
			return
		}
		w.mu.Lock()
		w.latest = vss
		w.mu.Unlock()
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
}

// waitFor waits until the latest state satisfies cond.
func (w *failoverWatcher) waitFor(what string, cond func(map[string]*istionetworking.VirtualService) bool) {
	w.t.Helper()
	deadline := time.After(WaitTimeout)
	for {
		w.mu.Lock()
		ok := w.latest != nil && cond(w.latest)
		w.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-w.changed:
		case <-deadline:
			w.t.Fatalf("the failover watcher never saw %s", what)
		}
	}
}

func (w *failoverWatcher) streamsOpened() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.streams
}

// weights returns a matcher for a VirtualService's first route weights.
func weights(name string, want ...int32) func(map[string]*istionetworking.VirtualService) bool {
	return func(vss map[string]*istionetworking.VirtualService) bool {
		vs := vss[name]
		if vs == nil || len(vs.Http) == 0 {
			return false
		}
		var got []int32
		for _, r := range vs.Http[0].Route {
			got = append(got, r.Weight)
		}
		return slices.Equal(got, want)
	}
}

// servesNode reports whether a replica's /debug/syncz lists a connection
// of node id.
func servesNode(t *testing.T, d *Daemon, id string) bool {
	t.Helper()
	_, body, err := d.Get("/debug/syncz")
	if err != nil {
		return false
	}
	var dump struct {
		Connections []struct {
			NodeID string `json:"nodeId"`
		} `json:"connections"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		t.Fatalf("/debug/syncz: %v", err)
	}
	for _, c := range dump.Connections {
		if c.NodeID == id {
			return true
		}
	}
	return false
}

// leaders returns the replicas whose log says they lead.
func leaders(ds []*Daemon) []*Daemon {
	var out []*Daemon
	for _, d := range ds {
		if len(d.LogLines(leadingMessage)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// Three replicas against one API server: every one serves xDS, exactly one
// (the Lease holder) writes statuses; when it is killed another takes the
// Lease within the lease duration and writes the next change, and a proxy
// that was connected to it reconnects to a survivor and converges.
func TestReplicas(t *testing.T) {
	c := StartCluster(t)
	createNamespace(t, c, testNamespace)
	createVS(t, c, virtualService("reviews", "reviews", 80, 20))
	args := []string{
		"--kubeconfig", c.KubeconfigPath,
		"--lease-namespace", replicaLeaseNSName, "--lease-name", replicaLeaseName,
		"--lease-duration", replicaLease.String(), "--lease-renew-deadline", replicaRenew.String(), "--lease-retry-period", replicaRetry.String(),
	}
	replicas := []*Daemon{StartDaemon(t, args...), StartDaemon(t, args...), StartDaemon(t, args...)}
	for _, d := range replicas {
		d.WaitReady()
	}

	t.Run("every replica serves xDS", func(t *testing.T) {
		for i, d := range replicas {
			w := watchVirtualServices(t, d.Addrs["xds"], "e2e-replica-direct")
			w.next("shop/reviews from replica "+string(rune('A'+i)), hasHost("shop/reviews", "reviews"))
		}
	})

	var leader *Daemon
	waitUntil(t, "one replica to lead", func() bool { return len(leaders(replicas)) == 1 }, func() string { return "" })
	leader = leaders(replicas)[0]
	createGatewayObjects(t, c)
	waitRouteCondition(t, c, "blog", "Accepted", "False", "NoMatchingParent")
	t.Run("only the leader writes status", func(t *testing.T) {
		if got := leaders(replicas); len(got) != 1 || got[0] != leader {
			t.Fatalf("%d replicas lead", len(got))
		}
		for _, d := range replicas {
			writes := statusWrites(t, d)
			if d == leader && writes == 0 {
				t.Error("the leader wrote no status")
			}
			if d != leader && writes != 0 {
				t.Errorf("a follower wrote %v statuses", writes)
			}
		}
	})

	// A proxy on the leader's replica (its address first, as a Service
	// might have picked it).
	var addrs []string
	var survivors []*Daemon
	addrs = append(addrs, leader.Addrs["xds"])
	for _, d := range replicas {
		if d != leader {
			addrs = append(addrs, d.Addrs["xds"])
			survivors = append(survivors, d)
		}
	}
	w := watchThroughReplicas(t, addrs)
	w.waitFor("shop/reviews at 80/20", weights("shop/reviews", 80, 20))
	waitUntil(t, "the proxy to be on the leader's replica", func() bool { return servesNode(t, leader, failoverNodeID) }, func() string { return "" })

	killed := time.Now()
	leader.Kill()

	t.Run("a killed leader is replaced within the lease duration", func(t *testing.T) {
		waitUntil(t, "a survivor to lead", func() bool { return len(leaders(survivors)) == 1 }, func() string { return "" })
		took := time.Since(killed)
		t.Logf("a survivor leads %s after the leader was killed (lease duration %s, retry period %s)", took.Round(10*time.Millisecond), replicaLease, replicaRetry)
		if took > replicaLease+2*replicaRetry+failoverSlack {
			t.Errorf("took %s to replace the leader, beyond the lease duration %s and two retries", took, replicaLease)
		}
		lease, err := c.Kube.CoordinationV1().Leases(replicaLeaseNSName).Get(t.Context(), replicaLeaseName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		newLeader := leaders(survivors)[0]
		if id := *lease.Spec.HolderIdentity; len(newLeader.LogLines(leadingMessage, "identity="+id)) != 1 {
			t.Errorf("the Lease names %s, not the replica that says it leads", id)
		}
		before := statusWrites(t, newLeader)
		editRoute(t, c, "blog", func(r *gatewayv1.HTTPRoute) { *r.Spec.ParentRefs[0].SectionName = "http" })
		waitRouteCondition(t, c, "blog", "Accepted", "True", "Accepted")
		if got := statusWrites(t, newLeader); got <= before {
			t.Errorf("the new leader's writes went from %v to %v", before, got)
		}
	})

	t.Run("a proxy of the killed replica reconnects and converges", func(t *testing.T) {
		updateVS(t, c, "reviews", &virtualService("", "reviews", 10, 90).Spec)
		w.waitFor("shop/reviews at 10/90, the change made after the kill", weights("shop/reviews", 10, 90))
		if n := w.streamsOpened(); n < 2 {
			t.Errorf("the proxy opened %d streams; it should have reconnected", n)
		}
		on := 0
		for _, d := range survivors {
			if servesNode(t, d, failoverNodeID) {
				on++
			}
		}
		if on != 1 {
			t.Errorf("the proxy is connected to %d survivors, want 1", on)
		}
	})
}
