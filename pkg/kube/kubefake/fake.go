// Package kubefake builds kube.Clients over client-go fake clientsets, for
// unit tests of code that reads the cluster through pkg/kube. It is a
// package of its own so that production binaries do not link the fakes.
//
// The fakes are object trackers, not API servers. Compared with the real
// thing, the Client built here:
//
//   - honours namespaces, and label selectors on list and on watch (an
//     object that stops matching is a DELETE, as from the API server);
//   - ignores field selectors: every object is listed and watched (check
//     the options sent, through the recorded actions of the fake, instead);
//   - assigns ResourceVersions to lists but not to objects, which keep the
//     ResourceVersion they were created with;
//   - does not validate, default or set status: a CustomResourceDefinition
//     is Established only if the test says so in its status;
//   - keeps custom resources when their CRD is deleted, where the API server
//     deletes them.
package kubefake

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	istiofake "istio.io/client-go/pkg/clientset/versioned/fake"
	istioscheme "istio.io/client-go/pkg/clientset/versioned/scheme"
	apiextensionsfake "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
	gatewayscheme "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/scheme"

	"github.com/meshcp/meshcp/pkg/kube"
)

// Client is a kube.Client over fake clientsets, with the fakes at hand for
// tests that reach into their trackers or recorded actions. Writes through
// Kube(), Istio() and the others go to the same fakes.
type Client struct {
	*kube.Client
	// KubeFake serves the built-in kinds.
	KubeFake *k8sfake.Clientset
	// IstioFake serves Istio's kinds.
	IstioFake *istiofake.Clientset
	// GatewayAPIFake serves Gateway API's kinds.
	GatewayAPIFake *gatewayfake.Clientset
	// ExtensionsFake serves CustomResourceDefinitions.
	ExtensionsFake *apiextensionsfake.Clientset
	// MetadataFake serves metadata-only collections. It has its own
	// tracker: objects of the other fakes do not show in it.
	MetadataFake *metadatafake.FakeMetadataClient
}

// NewClient returns a Client holding objects, each in the fake that serves
// it: Istio and Gateway API objects in theirs, CustomResourceDefinitions
// in the apiextensions fake, *metav1.PartialObjectMetadata (with its
// TypeMeta set to the kind it describes) in the metadata fake, and
// everything else in the Kubernetes fake. An object no fake serves, or one
// a fake refuses, fails the test. The Client is shut down when the test ends, after the cleanups
// registered later, such as the stop channels of its collections.
func NewClient(t testing.TB, objects ...runtime.Object) *Client {
	t.Helper()
	return NewClientWithOptions(t, nil, objects...)
}

// NewClientWithOptions is NewClient with options for the kube.Client.
func NewClientWithOptions(t testing.TB, opts []kube.ClientOption, objects ...runtime.Object) *Client {
	t.Helper()
	metadataScheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(metadataScheme); err != nil {
		t.Fatalf("kubefake: building the metadata scheme: %v", err)
	}
	c := &Client{
		KubeFake:  k8sfake.NewClientset(),
		IstioFake: istiofake.NewSimpleClientset(),
		// Not NewClientset: its field-managed tracker maps resources to kinds
		// by the same guess as Tracker.Add and cannot find "gateways".
		GatewayAPIFake: gatewayfake.NewSimpleClientset(),
		ExtensionsFake: apiextensionsfake.NewClientset(),
		MetadataFake:   metadatafake.NewSimpleMetadataClient(metadataScheme),
	}
	fakes := []fakeClientset{c.KubeFake, c.IstioFake, c.GatewayAPIFake, c.ExtensionsFake, c.MetadataFake}
	for _, f := range fakes {
		f.PrependWatchReactor("*", watchReactor(f.Tracker()))
	}
	for _, obj := range objects {
		if err := c.add(obj); err != nil {
			t.Fatalf("kubefake: adding %T: %v", obj, err)
		}
	}
	c.Client = kube.NewClientFromClientsets(kube.Clientsets{
		Kube:       c.KubeFake,
		Istio:      istioWithoutWatchList{c.IstioFake},
		GatewayAPI: c.GatewayAPIFake,
		Extensions: c.ExtensionsFake,
		Metadata:   c.MetadataFake,
	}, opts...)
	t.Cleanup(c.Shutdown)
	return c
}

// fakeClientset is what every fake clientset has.
type fakeClientset interface {
	PrependWatchReactor(resource string, reaction clienttesting.WatchReactionFunc)
	Tracker() clienttesting.ObjectTracker
}

// add stores obj in the fake that serves it, under its resource.
func (c *Client) add(obj runtime.Object) error {
	target, gvk, err := c.fakeFor(obj)
	if err != nil {
		return err
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	// Tracker.Add would guess the resource from the kind, and pluralises
	// Gateway as "gatewaies", where no informer looks.
	return target.Tracker().Create(resourceFor(gvk), obj, accessor.GetNamespace())
}

// fakeFor returns the fake that serves obj and the kind of obj.
func (c *Client) fakeFor(obj runtime.Object) (fakeClientset, schema.GroupVersionKind, error) {
	if partial, ok := obj.(*metav1.PartialObjectMetadata); ok {
		gvk := partial.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return nil, gvk, fmt.Errorf("a PartialObjectMetadata needs the APIVersion and Kind it describes in its TypeMeta")
		}
		return c.MetadataFake, gvk, nil
	}
	if gvk, ok := kindIn(apiextensionsscheme.Scheme, obj); ok {
		return c.ExtensionsFake, gvk, nil
	}
	if gvk, ok := kindIn(istioscheme.Scheme, obj); ok {
		return c.IstioFake, gvk, nil
	}
	if gvk, ok := kindIn(gatewayscheme.Scheme, obj); ok {
		return c.GatewayAPIFake, gvk, nil
	}
	gvks, _, err := kubescheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, schema.GroupVersionKind{}, fmt.Errorf("no fake serves %T: %w", obj, err)
	}
	return c.KubeFake, gvks[0], nil
}

// kindIn returns the kind of obj if scheme knows it as a kind of a named
// API group. The schemes of the generated clientsets also register a few
// meta/v1 types in the core group, which do not count.
func kindIn(scheme *runtime.Scheme, obj runtime.Object) (schema.GroupVersionKind, bool) {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 || gvks[0].Group == "" {
		return schema.GroupVersionKind{}, false
	}
	return gvks[0], true
}

// resourceFor guesses the resource of a kind as client-go's fakes do, but
// pluralises a vowel followed by "y" right: gateways, not gatewaies.
func resourceFor(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	gvr, singular := meta.UnsafeGuessKindToResource(gvk)
	name := singular.Resource
	if n := len(name); n >= 2 && name[n-1] == 'y' && strings.ContainsRune("aeiou", rune(name[n-2])) {
		gvr.Resource = name + "s"
	}
	return gvr
}

// istioWithoutWatchList tells client-go that the Istio fake cannot stream
// lists (the other fakes say so themselves); otherwise informers would
// wait forever for the end of a stream the fake never marks.
type istioWithoutWatchList struct{ *istiofake.Clientset }

// IsWatchListSemanticsUnSupported is the method client-go looks for.
func (istioWithoutWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// watchReactor serves watches from tracker, passing the options on (some
// generated fakes drop them, and lose the objects created between an
// informer's list and its watch), filtering events by label selector, and
// copying every object, since the tracker may hand out the object it
// stores and informers' transforms change what they receive.
func watchReactor(tracker clienttesting.ObjectTracker) clienttesting.WatchReactionFunc {
	return func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		selector, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return true, nil, fmt.Errorf("kubefake: label selector %q: %w", opts.LabelSelector, err)
		}
		source, err := tracker.Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return true, nil, err
		}
		return true, newFilteredWatch(source, selector), nil
	}
}

// filteredWatch relays the events of a watch that match a label selector,
// as copies. An object modified out of the selector is relayed as a
// DELETE, as the API server does.
type filteredWatch struct {
	source   watch.Interface
	selector labels.Selector
	result   chan watch.Event
	done     chan struct{}
	stopOnce sync.Once
}

func newFilteredWatch(source watch.Interface, selector labels.Selector) *filteredWatch {
	w := &filteredWatch{source: source, selector: selector, result: make(chan watch.Event), done: make(chan struct{})}
	go w.relay()
	return w
}

// ResultChan returns the relayed events.
func (w *filteredWatch) ResultChan() <-chan watch.Event { return w.result }

// Stop stops the watch; the relay ends even if nobody reads any more.
func (w *filteredWatch) Stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.source.Stop()
	})
}

func (w *filteredWatch) relay() {
	defer close(w.result)
	for {
		var event watch.Event
		var ok bool
		select {
		case event, ok = <-w.source.ResultChan():
			if !ok {
				return
			}
		case <-w.done:
			return
		}
		event, keep := w.filter(event)
		if !keep {
			continue
		}
		select {
		case w.result <- event:
		case <-w.done:
			return
		}
	}
}

func (w *filteredWatch) filter(event watch.Event) (watch.Event, bool) {
	if event.Object == nil {
		return event, true
	}
	event.Object = event.Object.DeepCopyObject()
	obj, ok := event.Object.(metav1.Object)
	if !ok {
		return event, true // a Status, a bookmark
	}
	matches := w.selector.Matches(labels.Set(obj.GetLabels()))
	switch event.Type {
	case watch.Added, watch.Deleted:
		return event, matches
	case watch.Modified:
		if !matches {
			event.Type = watch.Deleted
		}
	}
	return event, true
}
