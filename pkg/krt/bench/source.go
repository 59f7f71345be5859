package bench

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Source is an in-memory list-and-watch source for client-go informers: the
// cheapest input that still goes through the real reflector, FIFO and
// indexer. Objects are stored and sent as given, without copies or field
// management, so the input's own cost stays small next to what is measured.
type Source[T runtime.Object] struct {
	mu       sync.Mutex
	objects  []T
	index    map[string]int
	watchers []*watch.FakeWatcher
	list     runtime.Object // an empty list of the kind, such as &corev1.PodList{}
}

// watchBuffer holds a whole benchmark operation's events, so Update never
// blocks on the reflector.
const watchBuffer = 4096

// NewSource returns a source holding objs; list is an empty list of their
// kind, such as &corev1.PodList{}.
func NewSource[T runtime.Object](objs []T, list runtime.Object) *Source[T] {
	s := &Source[T]{index: map[string]int{}, list: list}
	for _, o := range objs {
		s.index[key(o)] = len(s.objects)
		s.objects = append(s.objects, o)
	}
	return s
}

func key(o runtime.Object) string {
	m := o.(metav1.Object)
	return m.GetNamespace() + "/" + m.GetName()
}

// Update replaces the object with obj's key and sends a MODIFIED event to
// every watcher.
func (s *Source[T]) Update(obj T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[key(obj)]
	if !ok {
		panic(fmt.Sprintf("bench source: no object %s", key(obj)))
	}
	s.objects[i] = obj
	for _, w := range s.watchers {
		w.Modify(obj)
	}
}

// ListerWatcher returns the source as an informer's ListerWatcher.
func (s *Source[T]) ListerWatcher() cache.ListerWatcher { return listerWatcher[T]{s} }

type listerWatcher[T runtime.Object] struct{ s *Source[T] }

func (lw listerWatcher[T]) List(metav1.ListOptions) (runtime.Object, error) {
	lw.s.mu.Lock()
	defer lw.s.mu.Unlock()
	items := make([]runtime.Object, len(lw.s.objects))
	for i, o := range lw.s.objects {
		items[i] = o
	}
	list := lw.s.list.DeepCopyObject()
	if err := meta.SetList(list, items); err != nil {
		return nil, fmt.Errorf("bench source: filling %T: %w", list, err)
	}
	if err := meta.NewAccessor().SetResourceVersion(list, "1"); err != nil {
		return nil, fmt.Errorf("bench source: %w", err)
	}
	return list, nil
}

func (lw listerWatcher[T]) Watch(metav1.ListOptions) (watch.Interface, error) {
	lw.s.mu.Lock()
	defer lw.s.mu.Unlock()
	w := watch.NewFakeWithChanSize(watchBuffer, false)
	lw.s.watchers = append(lw.s.watchers, w)
	return &stoppableWatch[T]{FakeWatcher: w, s: lw.s}, nil
}

// IsWatchListSemanticsUnSupported makes the reflector list, then watch: the
// streaming-list protocol needs an API server.
func (lw listerWatcher[T]) IsWatchListSemanticsUnSupported() bool { return true }

// stoppableWatch removes itself from its source when the reflector stops it.
type stoppableWatch[T runtime.Object] struct {
	*watch.FakeWatcher
	s *Source[T]
}

func (w *stoppableWatch[T]) Stop() {
	w.s.mu.Lock()
	w.s.watchers = slices.DeleteFunc(w.s.watchers, func(x *watch.FakeWatcher) bool { return x == w.FakeWatcher })
	w.s.mu.Unlock()
	w.FakeWatcher.Stop()
}
