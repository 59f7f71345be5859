package krt

// EventType says what happened to an object.
type EventType int

const (
	// EventAdd is a new key: New is set, Old is nil.
	EventAdd EventType = iota
	// EventUpdate is a changed object under an existing key: both are set.
	EventUpdate
	// EventDelete is a key that went away: Old is set, New is nil.
	EventDelete
)

// String returns "add", "update" or "delete".
func (e EventType) String() string {
	switch e {
	case EventAdd:
		return "add"
	case EventUpdate:
		return "update"
	case EventDelete:
		return "delete"
	}
	return "unknown"
}

// Event is one change of one key of a collection. A change of key is never
// an update: it is a delete of the old key and an add of the new one.
type Event[T any] struct {
	Old   *T
	New   *T
	Event EventType
}

// Latest returns the object as it is after the event: New, or Old for a
// delete.
func (e Event[T]) Latest() T {
	if e.New != nil {
		return *e.New
	}
	return *e.Old
}

// Items returns the objects the event touches: Old and New, whichever are
// set. A dependency matches an event if it matches any of them, so an object
// that moves out of a filter is noticed as well as one that moves in.
func (e Event[T]) Items() []T {
	items := make([]T, 0, 2)
	if e.Old != nil {
		items = append(items, *e.Old)
	}
	if e.New != nil {
		items = append(items, *e.New)
	}
	return items
}
