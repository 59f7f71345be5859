package krt

// NewStatic returns a singleton whose value is set from outside the graph,
// starting with initial. With startSynced false it is synced on MarkSynced.
//
// The value is keyed like any object (see GetKey); a value of a type without
// a key is stored under a fixed key. Setting a value with another key is a
// DELETE of the old key and an ADD of the new one.
func NewStatic[T any](initial *T, startSynced bool, opts ...CollectionOption) StaticSingleton[T] {
	cfg := newConfig[T]("Static", opts)
	var synced Syncer = neverSynced{}
	if startSynced {
		synced = nil
	}
	s := &staticSingleton[T]{newStaticCollection(cfg, singletonKeyFunc(cfg.access), synced, nil)}
	s.Set(initial)
	return s
}

type staticSingleton[T any] struct {
	*staticCollection[T]
}

func (s *staticSingleton[T]) Get() *T { return s.only() }

func (s *staticSingleton[T]) Set(value *T) {
	if value == nil {
		s.resetPointers(nil)
		return
	}
	s.resetPointers([]*T{value})
}

func (s *staticSingleton[T]) MarkSynced() { s.markSynced() }

func (s *staticSingleton[T]) AsCollection() Collection[T] { return s.staticCollection }

// NewSingleton derives a single value from other collections: f is re-run
// whenever anything it read with Fetch changes.
func NewSingleton[O any](f TransformationEmpty[O], opts ...CollectionOption) Singleton[O] {
	cfg := newConfig[O]("Singleton", opts)
	inputOpts := append(append([]CollectionOption(nil), opts...), WithName(cfg.name+"/input"), WithDebugging(nil))
	trigger := newStaticCollection(newConfig[singletonInput]("SingletonInput", inputOpts),
		func(*singletonInput) string { return singletonKey }, nil, []singletonInput{{}})
	d := newDerivedWithHook(Collection[singletonInput](trigger), cfg, singletonKeyFunc(cfg.access),
		func(ctx HandlerContext, _ *singletonInput) (*O, []O) { return f(ctx), nil }, nil)
	return singleton[O]{d}
}

// singletonInput is the one input of a derived Singleton.
type singletonInput struct{}

type singleton[O any] struct {
	*derived[singletonInput, O]
}

func (s singleton[O]) Get() *O { return s.only() }

func (s singleton[O]) AsCollection() Collection[O] { return s.derived }

// singletonKeyFunc keys a singleton's value by its own key when its type
// has one, and by a fixed key otherwise.
func singletonKeyFunc[T any](a *objectAccess[T]) func(*T) string {
	if a.key != nil {
		return a.key
	}
	return func(*T) string { return singletonKey }
}

// neverSynced is a Syncer for things marked synced by an explicit call.
type neverSynced struct{}

func (neverSynced) HasSynced() bool { return false }

func (neverSynced) WaitUntilSynced(stop <-chan struct{}) bool {
	<-stop
	return false
}
