package krt

// Test-only views of a derived collection's internals.

type internals interface {
	statsOf() *collectionStats
	dependencyLists() int
}

func (d *derived[I, O]) statsOf() *collectionStats { return &d.stats }

func (d *derived[I, O]) dependencyLists() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	seen := map[*depList]struct{}{}
	for _, rec := range d.inputs {
		if rec.deps != nil {
			seen[rec.deps] = struct{}{}
		}
	}
	return len(seen)
}

// Recomputations returns how many times c ran its transformation.
func Recomputations[O any](c Collection[O]) uint64 {
	return c.(internals).statsOf().recomputations.Load()
}

// Panics returns how many runs of c's transformation panicked.
func Panics[O any](c Collection[O]) uint64 { return c.(internals).statsOf().panics.Load() }

// DependencyChecks returns how many dependency lists c checked against
// changes of fetched collections.
func DependencyChecks[O any](c Collection[O]) uint64 { return c.(internals).statsOf().checks.Load() }

// DependencyLists returns how many distinct dependency lists c's inputs use.
func DependencyLists[O any](c Collection[O]) int { return c.(internals).dependencyLists() }

// WithViolationHandler replaces the panic of a failed check, so tests can
// watch checks fail.
func WithViolationHandler(f func(msg string)) CollectionOption {
	return func(o *collectionOptions) { o.violation = f }
}

// PurityViolations returns how many runs of c failed the purity check.
func PurityViolations[O any](c Collection[O]) uint64 {
	return c.(internals).statsOf().purityViolations.Load()
}
