// Package leader elects one replica of the daemon for the work only one
// may do, such as writing statuses back to the API server, through a
// client-go Lease. Every replica campaigns; the one holding the Lease
// leads until it loses it or stops, when it hands the Lease back so that
// another takes over within a retry period.
package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Defaults of the election, as client-go's own controllers use them.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Options configure an election.
type Options struct {
	// Namespace and Name locate the Lease; both are required.
	Namespace string
	Name      string
	// Identity names this replica in the Lease; empty means the host name
	// (the pod's name, in a cluster) and a random suffix, so that two
	// processes on one host differ.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod tune the election;
	// zero means the defaults above.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// Logger receives the election's events; nil means slog.Default().
	Logger *slog.Logger
}

// Elector campaigns for one Lease.
type Elector struct {
	client  kubernetes.Interface
	opts    Options
	log     *slog.Logger
	leading atomic.Bool
}

// New returns an Elector for the Lease opts name. Nothing happens until
// Run.
func New(client kubernetes.Interface, opts Options) (*Elector, error) {
	if client == nil {
		return nil, errors.New("leader election needs a Kubernetes client")
	}
	if opts.Namespace == "" || opts.Name == "" {
		return nil, fmt.Errorf("leader election needs the Lease's namespace and name, not %q/%q", opts.Namespace, opts.Name)
	}
	if opts.Identity == "" {
		id, err := defaultIdentity()
		if err != nil {
			return nil, err
		}
		opts.Identity = id
	}
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.RenewDeadline == 0 {
		opts.RenewDeadline = DefaultRenewDeadline
	}
	if opts.RetryPeriod == 0 {
		opts.RetryPeriod = DefaultRetryPeriod
	}
	if !(opts.LeaseDuration > opts.RenewDeadline && opts.RenewDeadline > opts.RetryPeriod) {
		return nil, fmt.Errorf("leader election needs lease duration (%s) > renew deadline (%s) > retry period (%s)",
			opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Elector{client: client, opts: opts, log: log.With("lease", opts.Namespace+"/"+opts.Name, "identity", opts.Identity)}, nil
}

// defaultIdentity is the host name and a random suffix.
func defaultIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("naming this replica for leader election: %w", err)
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("naming this replica for leader election: %w", err)
	}
	return host + "_" + hex.EncodeToString(b[:]), nil
}

// Identity is the name this replica campaigns under.
func (e *Elector) Identity() string { return e.opts.Identity }

// IsLeader reports whether this replica leads now.
func (e *Elector) IsLeader() bool { return e.leading.Load() }

// Run campaigns until ctx is done. Each time this replica wins, lead runs
// with a context that is cancelled when the Lease is lost (or ctx done);
// lead must return then, and this replica campaigns again. Terms never
// overlap: lead runs on Run's goroutine, one term after the other. When
// ctx is done, a Lease still held is released.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context)) {
	for ctx.Err() == nil {
		if err := e.campaign(ctx, lead); err != nil {
			e.log.Error("leader election failed; retrying", "error", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(e.opts.RetryPeriod):
		}
	}
}

// campaign runs one client-go election until this replica has led and
// lost the Lease, or ctx is done.
func (e *Elector) campaign(ctx context.Context, lead func(ctx context.Context)) error {
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, e.opts.Namespace, e.opts.Name,
		e.client.CoreV1(), e.client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: e.opts.Identity})
	if err != nil {
		return err
	}
	terms := make(chan context.Context)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            e.opts.Name,
		LeaseDuration:   e.opts.LeaseDuration,
		RenewDeadline:   e.opts.RenewDeadline,
		RetryPeriod:     e.opts.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			// client-go calls this on a goroutine of its own; the term
			// is handed over to Run's goroutine.
			OnStartedLeading: func(term context.Context) {
				select {
				case terms <- term:
				case <-term.Done():
				}
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				if identity != e.opts.Identity {
					e.log.Info("another replica leads", "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		le.Run(ctx)
	}()
	for {
		select {
		case term := <-terms:
			e.leading.Store(true)
			e.log.Info("leading")
			lead(term)
			e.leading.Store(false)
			if ctx.Err() == nil {
				e.log.Warn("lost the lease; campaigning again")
			}
		case <-done:
			return nil
		}
	}
}
