package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// informerKey identifies an informer of a Client. Collections asking for
// the same key share one informer, and so one list, one watch and one copy
// of each object.
type informerKey struct {
	gvr          schema.GroupVersionResource
	metadataOnly bool
	filter       Filter // normalized
}

// informerSpec is what a collection asks of the Client: which informer, a
// description for errors and logs, and how to build it if it is not
// running yet.
type informerSpec struct {
	key      informerKey
	describe string       // "v1 Pod (ns=default)"
	objType  reflect.Type // chooses the caller's transforms
	build    func() cache.SharedIndexInformer
}

// sharedInformer is a running informer and the number of collections
// reading it.
type sharedInformer struct {
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	users    int
}

// acquireInformer returns the running informer of spec.key, building and
// starting one if there is none, and a release function to call once the
// caller no longer reads it. The informer stops when its last user releases
// it, or when the client shuts down.
func (c *Client) acquireInformer(spec informerSpec) (cache.SharedIndexInformer, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, fmt.Errorf("reading %s: %w", spec.describe, errShutDown)
	}
	shared, ok := c.informers[spec.key]
	if !ok {
		informer := spec.build()
		// The transform runs before the informer stores an object: see
		// transforms.
		if err := informer.SetTransform(c.transforms.forType(spec.objType)); err != nil {
			return nil, nil, fmt.Errorf("setting the transform of the %s informer: %w", spec.describe, err)
		}
		if err := informer.SetWatchErrorHandlerWithContext(watchErrorLogger(c.logger, spec.describe)); err != nil {
			return nil, nil, fmt.Errorf("setting the watch error handler of the %s informer: %w", spec.describe, err)
		}
		ctx, cancel := context.WithCancel(c.ctx)
		shared = &sharedInformer{informer: informer, cancel: cancel}
		c.informers[spec.key] = shared
		c.runLocked(func() { informer.RunWithContext(ctx) })
	}
	shared.users++
	var once sync.Once
	release := func() { once.Do(func() { c.releaseInformer(spec.key, shared) }) }
	return shared.informer, release, nil
}

func (c *Client) releaseInformer(key informerKey, shared *sharedInformer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	shared.users--
	if shared.users > 0 {
		return
	}
	if c.informers[key] == shared {
		delete(c.informers, key)
	}
	shared.cancel()
}

// runLocked runs f on a goroutine that Shutdown waits for. c.mu must be
// held and the client not closed, so that no goroutine starts after
// Shutdown began waiting.
func (c *Client) runLocked(f func()) {
	c.running.Add(1)
	go func() {
		defer c.running.Done()
		f()
	}()
}

// watchErrorLogger reports list and watch failures through slog, naming
// the informer, in place of client-go's klog default. The informer retries
// with backoff by itself; the log is how an unreachable or forbidden API
// shows.
func watchErrorLogger(logger *slog.Logger, describe string) cache.WatchErrorHandlerWithContext {
	return func(_ context.Context, _ *cache.Reflector, err error) {
		switch {
		case errors.Is(err, io.EOF):
			// The watch ended normally; the reflector starts a new one.
		case errors.Is(err, io.ErrUnexpectedEOF), apierrors.IsResourceExpired(err), apierrors.IsGone(err):
			logger.Debug("watch closed; resuming", "informer", describe, "err", err)
		default:
			logger.Warn("list or watch failed; retrying", "informer", describe, "err", err)
		}
	}
}
