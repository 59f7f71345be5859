// Package krt is meshcp's declarative controller runtime: state is kept in
// collections, and derived state is declared as pure functions from one
// collection to another. The runtime works out what to recompute when
// something changes, and tells whoever is listening.
//
// # Collections
//
// A Collection[T] is a set of objects, each under a key (see GetKey), plus
// the stream of changes to it. Collections come from outside the graph
// (NewStaticCollection and NewStatic, written by code that reads flags;
// pkg/krt/files watches files and folders; pkg/kube reads the Kubernetes
// API through informers) or are derived from other collections.
// Everything a collection hands out is shared and read-only.
//
// # Transformations
//
// A derived collection is a parent collection and a transformation:
// NewCollection maps each input to zero or one output, NewManyCollection to
// any number, NewSingleton computes one value from nothing but what it
// fetches. A transformation is a pure function of its input and of what it
// reads through Fetch: it may run at any time, any number of times, and must
// not read anything else that changes (a global, a file, a clock), because
// the runtime would not know to run it again when that changes.
//
// # Combinators
//
// JoinCollection puts collections of one type together, the first holding
// a key winning it (deleting the winner falls back to the next copy, as an
// update); JoinWithMergeCollection merges every copy of a key instead. An
// Index finds objects by a derived key, and Index.AsCollection turns it
// into a collection of groups. NewStatusCollection and
// NewStatusManyCollection also keep a status per input (a controller's
// conditions), removed when the input is deleted. A RecomputeTrigger lets
// code outside the graph make dependants run again.
//
// # Fetch and dependencies
//
// Fetch (and FetchOne, and Index.Fetch) is the only way a transformation
// reads another collection. Each call records a dependency of the current
// input on that collection and its filters: FilterKey, FilterKeys,
// FilterObjectName, FilterIndex, FilterNamespace, FilterLabel,
// FilterSelects, FilterSelectsNonEmpty and FilterGeneric. Dependencies are
// recorded afresh on every run, registered before the read so no change can
// slip between the two, and kept in a reverse index: when an object of the
// fetched collection changes, the runtime finds the inputs whose filters
// match the object as it was or as it is, and recomputes only those. Label
// and selector filters are indexed by label, so a Service selector change
// recomputes the pods the old or the new selector picked, not every pod of
// the namespace. FilterGeneric cannot be indexed; inputs that use it are
// checked on every change of the collection they fetched, and no others
// are. Inputs that read the same things share one stored dependency list.
//
// # Events
//
// A change is an Event: ADD, UPDATE or DELETE of one key, with the old and
// new object. Results are compared with Equal (a type's Equals method, then
// proto.Equal, then reflect.DeepEqual; a struct embedding a protobuf message
// without Equals is refused with a panic at construction), and an equal
// result produces no event, so an unchanged value stops a change from
// travelling further down the graph. An object whose key changes is a
// DELETE of the old key and an ADD of the new one. Handlers registered with
// Register or RegisterBatch run on their own goroutine: a slow handler
// delays nobody else.
//
// # Sync
//
// A collection is synced once it holds its initial state. A derived
// collection is synced after its parent is synced and every input of the
// parent's initial state has been computed, so sync travels down a chain in
// order. It also waits for the collections its transformations fetched from
// to be synced, and for the recomputations their initial objects cause:
// synced never means "computed against a half-loaded cache" (a cycle of
// collections fetching from each other would therefore never sync).
// RegisterBatch(f, true) hands a handler the current state as one
// batch of ADDs followed by live events, with no duplicate and no gap; the
// registration is synced once the handler has seen the initial state.
//
// # Debugging
//
// A DebugHandler registers every collection built WithDebugging. Served
// over HTTP (/debug/krtz) it dumps the whole graph as JSON: each
// collection's objects, and for derived collections each input's outputs
// and dependencies, named by collection and filter; ?collection=, ?key=
// and ?format=dot|mermaid narrow it or draw it. It is also a Prometheus
// collector of per-collection counters (events, recomputations, impact of
// dependency events, queue depth, panics, time to sync). With
// KRT_LOG_LEVEL=debug each sync ("NAME synced (uid U)") and each batch of
// dependency events ("event size N, impacts M objects") is logged.
// KRT_CHECKS turns on two guards: a mutation detector for shared objects
// and a purity check that runs each transformation twice.
//
// # Lifetime
//
// Every collection needs WithStop. Closing the stop channel ends its worker
// goroutine, drops its handlers and removes it from the DebugHandler it was
// registered with; its last state stays readable.
package krt
