package bench

import (
	"fmt"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/meshcp/meshcp/pkg/krt"
)

// SelectorFilter says how the krt controller reads a pod's services.
type SelectorFilter int

const (
	// ByIndexAndSelector fetches services by namespace with
	// FilterSelectsNonEmpty: krt knows which pods a selector change touches.
	ByIndexAndSelector SelectorFilter = iota
	// ByIndexOnly fetches every service of the namespace and checks the
	// selector by hand: krt only knows the namespace.
	ByIndexOnly
)

// NewKrtWorkloads declares the workload controller with krt. computed
// counts the runs of the transformation.
func NewKrtWorkloads(pods krt.Collection[*corev1.Pod], services krt.Collection[*corev1.Service], filter SelectorFilter,
	computed *atomic.Int64, stop <-chan struct{},
) krt.Collection[Workload] {
	byNamespace := krt.NewNamespaceIndex(services)
	return krt.NewCollection(pods, func(ctx krt.HandlerContext, p *corev1.Pod) *Workload {
		computed.Add(1)
		if p.Status.PodIP == "" {
			return nil
		}
		var selected []*corev1.Service
		if filter == ByIndexAndSelector {
			selected = byNamespace.Fetch(ctx, p.Namespace, krt.FilterSelectsNonEmpty(p.GetLabels()))
		} else {
			for _, s := range byNamespace.Fetch(ctx, p.Namespace) {
				if selects(s.Spec.Selector, p.Labels) {
					selected = append(selected, s)
				}
			}
		}
		names := make([]string, len(selected))
		for i, s := range selected {
			names[i] = s.Name
		}
		return &Workload{Named: krt.NewNamed(p), IP: p.Status.PodIP, ServiceNames: names}
	}, krt.WithStop(stop), krt.WithName("Workloads"))
}

// Legacy is the same controller written by hand in the client-go style:
// informer handlers feed a workqueue of pod keys, a worker reconciles one
// pod at a time from the listers, and a service change enqueues the pods its
// old and new selectors match, listed by namespace with a label selector.
type Legacy struct {
	pods      corev1listers.PodLister
	services  corev1listers.ServiceLister
	queue     workqueue.TypedInterface[types.NamespacedName]
	workloads map[types.NamespacedName]Workload // owned by the worker
	onEvent   func(Event)

	// Reconciles counts calls of Reconcile.
	Reconciles atomic.Int64
	synced     []cache.InformerSynced
}

// NewLegacy wires the controller to the informers; onEvent receives every
// Workload change.
func NewLegacy(podInformer, serviceInformer cache.SharedIndexInformer, onEvent func(Event)) (*Legacy, error) {
	l := &Legacy{
		pods:      corev1listers.NewPodLister(podInformer.GetIndexer()),
		services:  corev1listers.NewServiceLister(serviceInformer.GetIndexer()),
		queue:     workqueue.NewTyped[types.NamespacedName](),
		workloads: map[types.NamespacedName]Workload{},
		onEvent:   onEvent,
	}
	enqueuePod := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok {
			l.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		}
	}
	podReg, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueuePod,
		UpdateFunc: func(_, obj any) { enqueuePod(obj) },
		DeleteFunc: enqueuePod,
	})
	if err != nil {
		return nil, fmt.Errorf("pod handler: %w", err)
	}
	serviceReg, err := serviceInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { l.enqueueSelected(obj) },
		UpdateFunc: func(oldObj, newObj any) {
			l.enqueueSelected(oldObj)
			l.enqueueSelected(newObj)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			l.enqueueSelected(obj)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("service handler: %w", err)
	}
	l.synced = []cache.InformerSynced{podReg.HasSynced, serviceReg.HasSynced}
	return l, nil
}

// enqueueSelected enqueues the pods a service selects.
func (l *Legacy) enqueueSelected(obj any) {
	s, ok := obj.(*corev1.Service)
	if !ok || len(s.Spec.Selector) == 0 {
		return
	}
	pods, err := l.pods.Pods(s.Namespace).List(labels.SelectorFromValidatedSet(s.Spec.Selector))
	if err != nil {
		return
	}
	for _, p := range pods {
		l.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	}
}

// Run processes the queue until stop closes.
func (l *Legacy) Run(stop <-chan struct{}) {
	go func() {
		<-stop
		l.queue.ShutDown()
	}()
	if !cache.WaitForCacheSync(stop, l.synced...) {
		return
	}
	for {
		key, shutdown := l.queue.Get()
		if shutdown {
			return
		}
		l.Reconcile(key)
		l.queue.Done(key)
	}
}

// Reconcile brings the workload of one pod up to date.
func (l *Legacy) Reconcile(key types.NamespacedName) {
	l.Reconciles.Add(1)
	old, existed := l.workloads[key]
	pod, err := l.pods.Pods(key.Namespace).Get(key.Name)
	if errors.IsNotFound(err) || (err == nil && pod.Status.PodIP == "") {
		if existed {
			delete(l.workloads, key)
			l.onEvent(Event{Type: krt.EventDelete, Workload: old})
		}
		return
	}
	if err != nil {
		return
	}
	services, err := l.services.Services(key.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	var names []string
	for _, s := range services {
		if selects(s.Spec.Selector, pod.Labels) {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	w := Workload{Named: krt.Named{Namespace: key.Namespace, Name: key.Name}, IP: pod.Status.PodIP, ServiceNames: names}
	switch {
	case !existed:
		l.workloads[key] = w
		l.onEvent(Event{Type: krt.EventAdd, Workload: w})
	case !old.Equals(w):
		l.workloads[key] = w
		l.onEvent(Event{Type: krt.EventUpdate, Workload: w})
	}
}

// selects reports whether a non-empty selector matches labels.
func selects(selector, lbls map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if got, ok := lbls[k]; !ok || got != v {
			return false
		}
	}
	return true
}
