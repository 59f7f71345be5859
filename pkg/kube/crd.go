package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/meshcp/meshcp/pkg/krt"
)

// crdRequirement is the CustomResourceDefinition a collection reads
// through, and the version of it the collection reads.
type crdRequirement struct {
	name    string // "virtualservices.networking.istio.io"
	version string // "v1"
}

// ready reports whether crd serves what r needs: it is established, not
// being deleted, and serves r.version. Before that, lists of the kind fail
// with NotFound, and the informer would retry and never sync.
func (r crdRequirement) ready(crd *apiextensionsv1.CustomResourceDefinition) bool {
	if crd == nil || crd.DeletionTimestamp != nil {
		return false
	}
	established := false
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			established = true
		}
	}
	if !established {
		return false
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == r.version && v.Served {
			return true
		}
	}
	return false
}

// crdWatcher watches the CustomResourceDefinitions of the cluster for all
// the collections of a Client, with one informer, and tells each
// subscriber whether the CRD it needs is ready: once the informer has
// synced, then on every change. Notifications for all subscribers are
// made under one lock, in order, so a subscriber never sees them out of
// order or concurrently.
type crdWatcher struct {
	informer cache.SharedIndexInformer

	mu     sync.Mutex
	synced bool
	subs   map[string]map[*crdSubscription]struct{} // by CRD name
}

// crdSubscription is one collection waiting on one CRD.
type crdSubscription struct {
	need     crdRequirement
	notified bool // the first notification was made
	ready    bool // what was last notified
	onChange func(ready bool)
}

// crdWatcher returns the client's CRD watcher, starting it on first use.
// It runs until the client shuts down.
func (c *Client) crdWatcher() (*crdWatcher, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errShutDown
	}
	if c.crds != nil {
		return c.crds, nil
	}
	if c.extensions == nil {
		return nil, errors.New("the client has no apiextensions clientset to watch CustomResourceDefinitions with")
	}
	const what = "apiextensions.k8s.io/v1 CustomResourceDefinition"
	crds := c.extensions.ApiextensionsV1().CustomResourceDefinitions()
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := crds.List(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", what, err)
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := crds.Watch(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("watching %s: %w", what, err)
			}
			return w, nil
		},
	}, c.extensions)
	informer := cache.NewSharedIndexInformerWithOptions(lw, &apiextensionsv1.CustomResourceDefinition{}, cache.SharedIndexInformerOptions{
		Indexers:          cache.Indexers{},
		ObjectDescription: what,
	})
	if err := informer.SetTransform(slimCRD); err != nil {
		return nil, fmt.Errorf("setting the transform of the %s informer: %w", what, err)
	}
	if err := informer.SetWatchErrorHandlerWithContext(watchErrorLogger(c.logger, what)); err != nil {
		return nil, fmt.Errorf("setting the watch error handler of the %s informer: %w", what, err)
	}
	w := &crdWatcher{informer: informer, subs: map[string]map[*crdSubscription]struct{}{}}
	changed := func(obj any) {
		if name, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			w.changed(name)
		}
	}
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: changed,
	})
	if err != nil {
		return nil, fmt.Errorf("adding a handler to the %s informer: %w", what, err)
	}
	ctx := c.ctx
	c.runLocked(func() { informer.RunWithContext(ctx) })
	c.runLocked(func() {
		select {
		case <-reg.HasSyncedChecker().Done():
			w.markSynced()
		case <-ctx.Done():
		}
	})
	c.crds = w
	return w, nil
}

// slimCRD keeps of a CustomResourceDefinition only what crdRequirement
// reads, plus its names. A CRD carries the OpenAPI schema of every version
// of its kind, hundreds of kilobytes for the Gateway API ones, which the
// informer would otherwise keep for as long as it runs.
func slimCRD(obj any) (any, error) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return obj, nil
	}
	slim := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: crd.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              crd.Name,
			UID:               crd.UID,
			ResourceVersion:   crd.ResourceVersion,
			Generation:        crd.Generation,
			DeletionTimestamp: crd.DeletionTimestamp,
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: crd.Spec.Group,
			Names: crd.Spec.Names,
			Scope: crd.Spec.Scope,
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: crd.Status.Conditions},
	}
	for _, v := range crd.Spec.Versions {
		slim.Spec.Versions = append(slim.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v.Name, Served: v.Served, Storage: v.Storage,
		})
	}
	return slim, nil
}

// subscribe calls onChange with whether need is ready, once the CRD
// informer has synced (at once if it has), then on every change of it.
func (w *crdWatcher) subscribe(need crdRequirement, onChange func(ready bool)) *crdSubscription {
	w.mu.Lock()
	defer w.mu.Unlock()
	sub := &crdSubscription{need: need, onChange: onChange}
	if w.subs[need.name] == nil {
		w.subs[need.name] = map[*crdSubscription]struct{}{}
	}
	w.subs[need.name][sub] = struct{}{}
	if w.synced {
		w.notifyLocked(sub)
	}
	return sub
}

// unsubscribe stops the notifications of sub. When it returns, no
// notification of sub is running or will run.
func (w *crdWatcher) unsubscribe(sub *crdSubscription) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.subs[sub.need.name], sub)
	if len(w.subs[sub.need.name]) == 0 {
		delete(w.subs, sub.need.name)
	}
}

func (w *crdWatcher) markSynced() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.synced = true
	for _, subs := range w.subs {
		for sub := range subs {
			w.notifyLocked(sub)
		}
	}
}

// changed is called for every event of the CRD named name.
func (w *crdWatcher) changed(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.synced {
		return // markSynced notifies everyone of the synced state
	}
	for sub := range w.subs[name] {
		w.notifyLocked(sub)
	}
}

// notifyLocked tells sub whether its CRD is ready, if that is news. It
// reads the informer's store rather than the event, so that events
// delivered late never make a subscriber go back to an older state.
func (w *crdWatcher) notifyLocked(sub *crdSubscription) {
	ready := false
	if obj, exists, err := w.informer.GetStore().GetByKey(sub.need.name); err == nil && exists {
		crd, _ := obj.(*apiextensionsv1.CustomResourceDefinition)
		ready = sub.need.ready(crd)
	}
	if sub.notified && sub.ready == ready {
		return
	}
	sub.notified, sub.ready = true, ready
	sub.onChange(ready)
}

// crdCollection feeds a collection of a CRD-backed kind from the shared
// informer of its kind while the CRD is ready, and keeps it empty while it
// is not. The informer is started when the CRD becomes ready and released
// when it stops being so: an informer for a resource the API server does
// not serve would only fail and retry.
type crdCollection[T Object] struct {
	client *Client
	spec   informerSpec
	store  krt.StaticCollection[T]
	synced *krt.SyncGate
	stop   <-chan struct{}
	logger *slog.Logger

	mu      sync.Mutex
	stopped bool
	feed    *crdFeed // nil while the CRD is not ready
}

// crdFeed is one period during which the CRD is ready: the informer
// read and the collection's handler on it.
type crdFeed struct {
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration
	release  func()
	done     chan struct{} // closed when the period ends
}

// newCRDCollection returns a collection of T fed by spec's informer
// whenever need is ready. It is synced once the CRD informer has synced
// and either the CRD is not ready (the collection is empty, correctly) or
// the informer has delivered its initial list.
func newCRDCollection[T Object](c *Client, spec informerSpec, need crdRequirement, stop <-chan struct{}, opts []krt.CollectionOption) (krt.Collection[T], error) {
	watcher, err := c.crdWatcher()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", spec.describe, err)
	}
	g := &crdCollection[T]{
		client: c,
		spec:   spec,
		synced: krt.NewSyncGate(),
		stop:   stop,
		logger: c.logger.With("informer", spec.describe, "crd", need.name, "version", need.version),
	}
	opts = append(append(defaultOptions[T](), opts...), krt.WithStop(stop))
	g.store = krt.NewStaticCollection[T](g.synced, nil, opts...)
	sub := watcher.subscribe(need, g.setReady)
	go func() {
		<-stop
		watcher.unsubscribe(sub)
		g.shutdown()
	}()
	return g.store, nil
}

// setReady starts or ends the feed as the CRD becomes ready or stops being
// so. The CRD watcher calls it in order, never concurrently.
func (g *crdCollection[T]) setReady(ready bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	switch {
	case ready && g.feed == nil:
		if err := g.startFeedLocked(); err != nil {
			g.logger.Error("cannot read the kind although its CRD is ready", "err", err)
			g.synced.MarkSynced() // empty is the best the collection can do
		}
	case !ready && g.feed != nil:
		g.logger.Info("CustomResourceDefinition removed or no longer serving the version; the collection is emptied until it is back")
		g.endFeedLocked()
		g.store.Reset(nil)
		g.synced.MarkSynced()
	case !ready:
		g.logger.Info("waiting for the CustomResourceDefinition to be established; the collection stays empty until then")
		g.synced.MarkSynced()
	}
}

func (g *crdCollection[T]) startFeedLocked() error {
	if g.synced.HasSynced() {
		g.logger.Info("CustomResourceDefinition established; reading the kind")
	}
	informer, release, err := g.client.acquireInformer(g.spec)
	if err != nil {
		return err
	}
	feed := &crdFeed{informer: informer, release: release, done: make(chan struct{})}
	reg, err := informer.AddEventHandler(storeHandler(g.store, g.guard(feed)))
	if err != nil {
		release()
		return fmt.Errorf("adding a handler to the %s informer: %w", g.spec.describe, err)
	}
	feed.reg = reg
	g.feed = feed
	go func() {
		select {
		case <-reg.HasSyncedChecker().Done():
			g.synced.MarkSynced()
		case <-feed.done:
		case <-g.stop:
		}
	}()
	return nil
}

// endFeedLocked detaches the collection from the informer of the current
// feed and releases it.
func (g *crdCollection[T]) endFeedLocked() {
	feed := g.feed
	g.feed = nil
	close(feed.done)
	_ = feed.informer.RemoveEventHandler(feed.reg)
	feed.release()
}

// guard lets the writes of feed through only while it is the current one.
func (g *crdCollection[T]) guard(feed *crdFeed) func(write func()) {
	return func(write func()) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.feed == feed {
			write()
		}
	}
}

// shutdown ends the feed for good when the collection is stopped; the
// collection keeps its last state, as every stopped krt collection does.
func (g *crdCollection[T]) shutdown() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	if g.feed != nil {
		g.endFeedLocked()
	}
}
