package leader_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshcp/meshcp/pkg/leader"
	"github.com/meshcp/meshcp/test/apiserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// replica is one campaigner, recording its terms.
type replica struct {
	elector *leader.Elector
	cancel  context.CancelFunc
	done    chan struct{}
	terms   atomic.Int32
}

func start(t *testing.T, client kubernetes.Interface, identity string, leading *atomic.Int32, overlap *atomic.Bool) *replica {
	t.Helper()
	e, err := leader.New(client, leader.Options{
		Namespace: "default", Name: "test-lease", Identity: identity,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{elector: e, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		e.Run(ctx, func(term context.Context) {
			if leading.Add(1) > 1 {
				overlap.Store(true)
			}
			r.terms.Add(1)
			<-term.Done()
			leading.Add(-1)
		})
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) stop() {
	r.cancel()
	<-r.done
}

// Against a real API server: of two replicas one leads, the Lease names
// it, their terms never overlap, and when the leader stops it hands the
// Lease back so the other takes over at once rather than after the lease
// expires.
func TestOneLeaderAndTakeover(t *testing.T) {
	srv := apiserver.Start(t)
	client := kubernetes.NewForConfigOrDie(srv.Config)
	var leading atomic.Int32
	var overlap atomic.Bool
	a := start(t, client, "a", &leading, &overlap)
	b := start(t, client, "b", &leading, &overlap)

	first, second := waitLeader(t, a, b)
	lease, err := client.CoordinationV1().Leases("default").Get(t.Context(), "test-lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := *lease.Spec.HolderIdentity; got != first.elector.Identity() {
		t.Errorf("the Lease names %q, the leader is %q", got, first.elector.Identity())
	}
	stopped := time.Now()
	first.stop()
	waitFor(t, "the other replica to lead", func() bool { return second.elector.IsLeader() })
	if took := time.Since(stopped); took > 2*time.Second {
		t.Errorf("takeover took %s; the Lease was not handed back", took)
	}
	if overlap.Load() {
		t.Error("two replicas led at once")
	}
	if first.terms.Load() != 1 || second.terms.Load() != 1 {
		t.Errorf("terms: %d and %d", first.terms.Load(), second.terms.Load())
	}
}

func waitLeader(t *testing.T, rs ...*replica) (leader *replica, other *replica) {
	t.Helper()
	waitFor(t, "a leader", func() bool {
		for i, r := range rs {
			if r.elector.IsLeader() {
				leader, other = r, rs[1-i]
				return true
			}
		}
		return false
	})
	return leader, other
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOptions(t *testing.T) {
	for _, opts := range []leader.Options{
		{Name: "x"},
		{Namespace: "x"},
		{Namespace: "x", Name: "y", LeaseDuration: time.Second, RenewDeadline: 2 * time.Second},
	} {
		if _, err := leader.New(kubernetes.New(nil), opts); err == nil {
			t.Errorf("%+v accepted", opts)
		}
	}
	e, err := leader.New(kubernetes.New(nil), leader.Options{Namespace: "x", Name: "y"})
	if err != nil || e.Identity() == "" {
		t.Errorf("defaults: %v, identity %q", err, e.Identity())
	}
}
