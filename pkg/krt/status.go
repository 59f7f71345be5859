package krt

// ObjectWithStatus is an input of a status collection together with the
// status its transformation computed for it, keyed like the input.
type ObjectWithStatus[I, IStatus any] struct {
	Obj    I
	Status IStatus
}

// ResourceName is the key of the input.
func (o ObjectWithStatus[I, IStatus]) ResourceName() string { return GetKey(o.Obj) }

// Equals compares the input and the status each as Equal does (their
// Equals methods first), never by reflecting over the pair: an input
// holding a protobuf message (a config.Config) would otherwise be read
// field by field, internals included, while another goroutine marshals
// it.
func (o ObjectWithStatus[I, IStatus]) Equals(x ObjectWithStatus[I, IStatus]) bool {
	return Equal(o.Obj, x.Obj) && Equal(o.Status, x.Status)
}

// TransformationSingleStatus computes a status for the input (nil: none)
// and zero or one output.
type TransformationSingleStatus[I, IStatus, O any] func(ctx HandlerContext, input I) (*IStatus, *O)

// TransformationMultiStatus computes a status for the input (nil: none)
// and any number of outputs.
type TransformationMultiStatus[I, IStatus, O any] func(ctx HandlerContext, input I) (*IStatus, []O)

// NewStatusCollection is NewCollection whose transformation also reports a
// status for its input, such as the conditions a controller writes back to
// the object. It returns the collection of (input, status) pairs and the
// collection of outputs. A status is removed when its input is deleted,
// although the transformation never runs for a delete, and it stays as it
// was when the transformation panics.
func NewStatusCollection[I, IStatus, O any](c Collection[I], f TransformationSingleStatus[I, IStatus, O], opts ...CollectionOption,
) (Collection[ObjectWithStatus[I, IStatus]], Collection[O]) {
	return newStatusCollection(c, "StatusCollection", opts, func(ctx HandlerContext, in *I) (*IStatus, *O, []O) {
		status, out := f(ctx, *in)
		return status, out, nil
	})
}

// NewStatusManyCollection is NewManyCollection with a status per input; see
// NewStatusCollection.
func NewStatusManyCollection[I, IStatus, O any](c Collection[I], f TransformationMultiStatus[I, IStatus, O], opts ...CollectionOption,
) (Collection[ObjectWithStatus[I, IStatus]], Collection[O]) {
	return newStatusCollection(c, "StatusManyCollection", opts, func(ctx HandlerContext, in *I) (*IStatus, *O, []O) {
		status, outs := f(ctx, *in)
		return status, nil, outs
	})
}

func newStatusCollection[I, IStatus, O any](c Collection[I], kind string, opts []CollectionOption,
	f func(ctx HandlerContext, in *I) (*IStatus, *O, []O),
) (Collection[ObjectWithStatus[I, IStatus]], Collection[O]) {
	parent := storeOf(c)
	cfg := newConfig[O](kind, opts)
	outputsSynced := &lateSyncer{ready: make(chan struct{})}
	statusOpts := append(append([]CollectionOption(nil), opts...), WithName(cfg.name+"/status"), WithMetadata(cfg.metadata))
	statuses := newStaticCollection(newConfig[ObjectWithStatus[I, IStatus]]("Status", statusOpts),
		func(o *ObjectWithStatus[I, IStatus]) string { return parent.key(&o.Obj) }, outputsSynced, nil)

	outputs := newDerivedWithHook(c, cfg, nil, func(ctx HandlerContext, in *I) (*O, []O) {
		status, one, many := f(ctx, in)
		ctx.tracker().extra = status
		return one, many
	}, func(r *result[I, O]) {
		switch status, _ := r.extra.(*IStatus); {
		case r.deleted:
			statuses.DeleteObject(r.key)
		case r.failed:
			// A panic keeps the previous status, like the previous output.
		case status == nil:
			statuses.DeleteObject(r.key)
		default:
			statuses.UpdateObject(ObjectWithStatus[I, IStatus]{Obj: *r.input, Status: *status})
		}
	})
	outputsSynced.set(outputs)
	statuses.mu.Lock()
	statuses.extraUpstream = []graphEdge{{from: outputs.store, kind: "status"}}
	statuses.mu.Unlock()
	return statuses, outputs
}

// lateSyncer is a Syncer whose target is only known after it is needed.
type lateSyncer struct {
	ready  chan struct{}
	target Syncer
}

func (s *lateSyncer) set(target Syncer) {
	s.target = target
	close(s.ready)
}

func (s *lateSyncer) HasSynced() bool { return isClosed(s.ready) && s.target.HasSynced() }

func (s *lateSyncer) WaitUntilSynced(stop <-chan struct{}) bool {
	return waitClosed(s.ready, stop) && s.target.WaitUntilSynced(stop)
}
