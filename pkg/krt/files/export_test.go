package files

import "github.com/meshcp/meshcp/pkg/krt"

// Probe is a test's view into a collection of this package: the debug
// errors it hands to krt, and a way to wait for its next read of the files.
type Probe struct{ errors *fileErrors }

// Errors returns the debug errors, by file path.
func (p *Probe) Errors() map[string]string { return p.errors.snapshot() }

// NextRead returns a channel closed when the next read of the files has
// completed, before its result reaches the collection.
func (p *Probe) NextRead() <-chan struct{} { return p.errors.nextReport() }

// NewFolderCollectionProbed is NewFolderCollectionWithOptions, with a Probe.
func NewFolderCollectionProbed[T any](dir string, parse func(path string, data []byte) ([]T, error), stop <-chan struct{}, o Options, opts ...krt.CollectionOption) (krt.Collection[T], *Probe, error) {
	f, err := newFolder(dir, parse, stop, o, opts)
	if err != nil {
		return nil, nil, err
	}
	return f.collection, &Probe{f.errors}, nil
}

// NewFileSingletonProbed is NewFileSingletonWithOptions, with a Probe.
func NewFileSingletonProbed[T any](path string, parse func(data []byte) (*T, error), stop <-chan struct{}, o Options, opts ...krt.CollectionOption) (krt.Singleton[T], *Probe, error) {
	s, err := newFileSingleton(path, parse, stop, o, opts)
	if err != nil {
		return nil, nil, err
	}
	return s.value, &Probe{s.errors}, nil
}
