package krt

// Collection is a keyed set of objects plus the stream of changes to it.
//
// Every object has a key (see GetKey); a collection holds at most one object
// per key. Objects handed out by a collection (from GetKey, List, Fetch or in
// events) are shared and must be treated as read-only.
type Collection[T any] interface {
	// GetKey returns the object stored under key, or nil.
	GetKey(key string) *T
	// List returns every object, in no particular order.
	List() []T
	// Metadata returns the metadata the collection was built with.
	Metadata() Metadata

	EventStream[T]
}

// EventStream delivers the changes of a collection to handlers.
type EventStream[T any] interface {
	Syncer

	// Register calls f for every change, one event at a time. The existing
	// state is delivered first, as ADD events.
	Register(f func(Event[T])) HandlerRegistration

	// RegisterBatch calls f with changes in batches. When runExistingState is
	// true the current state is delivered first as one batch of ADD events,
	// followed by live events, with no duplicate and no gap between the two.
	RegisterBatch(f func([]Event[T]), runExistingState bool) HandlerRegistration
}

// Syncer reports whether something has reached its initial state.
type Syncer interface {
	// HasSynced reports whether the initial state has been reached.
	HasSynced() bool
	// WaitUntilSynced blocks until the initial state has been reached, in
	// which case it returns true, or until stop is closed, in which case it
	// returns false.
	WaitUntilSynced(stop <-chan struct{}) bool
}

// HandlerRegistration is a handler's subscription to an EventStream.
//
// A registration is synced once its collection is synced and every event
// that made up the collection's initial state has been handled by it.
type HandlerRegistration interface {
	Syncer
	// UnregisterHandler stops delivery. Events not yet handled are dropped.
	UnregisterHandler()
}

// Singleton is a collection that holds zero or one object.
type Singleton[T any] interface {
	// Get returns the current value, or nil.
	Get() *T
	// Register calls f on every change of the value.
	Register(f func(Event[T])) HandlerRegistration
	// AsCollection exposes the singleton as a Collection, for example to read
	// it from a transformation with FetchOne.
	AsCollection() Collection[T]
	// Metadata returns the metadata the singleton was built with.
	Metadata() Metadata
}

// StaticSingleton is a Singleton whose value is set from outside the graph,
// such as a configuration file that was read.
type StaticSingleton[T any] interface {
	Singleton[T]
	// Set replaces the value; nil removes it.
	Set(value *T)
	// MarkSynced marks the singleton as having reached its initial state.
	MarkSynced()
}

// StaticCollection is a collection whose content is written from outside the
// graph, one object at a time or all at once.
type StaticCollection[T any] interface {
	Collection[T]
	// UpdateObject adds obj, or replaces the object with the same key.
	UpdateObject(obj T)
	// DeleteObject removes the object stored under key, if any.
	DeleteObject(key string)
	// DeleteObjects removes every object for which match returns true.
	DeleteObjects(match func(obj T) bool)
	// Reset replaces the whole content with objs: keys that are gone are
	// deleted, new keys added, and objects that changed updated.
	Reset(objs []T)
}

// HandlerContext is the handle a transformation receives. Passing it to
// Fetch or FetchOne records a dependency of the current input on what was
// read, so that the input is recomputed when that changes.
type HandlerContext interface {
	// DiscardResult keeps the input's previous output in place of the result
	// of the current run. The dependencies read in this run are still
	// recorded, so a later change to them recomputes the input again.
	DiscardResult()

	tracker() *dependencyTracker
}

// Metadata is free-form information attached to a collection at
// construction time, for example to tell handlers which cluster it came from.
type Metadata map[string]any

// Equaler is implemented by types that know when two values are the same.
// It is the first thing Equal consults and the cheapest way to keep
// unchanged results from producing events.
type Equaler[T any] interface {
	Equals(other T) bool
}

// ResourceNamer is implemented by types that choose their own key.
type ResourceNamer interface {
	ResourceName() string
}

// Labeler is implemented by objects that carry labels; FilterLabel and the
// selector filters read them through it.
type Labeler interface {
	GetLabels() map[string]string
}

// LabelSelectorer is implemented by objects that select other objects by
// their labels (a Service selecting Pods, for example); FilterSelects and
// FilterSelectsNonEmpty read the selector through it.
type LabelSelectorer interface {
	GetLabelSelector() map[string]string
}
