package krt

// Named is a name and namespace, embedded in derived types so that they are
// keyed like the Kubernetes object they came from.
type Named struct {
	Name      string
	Namespace string
}

// NewNamed takes the name and namespace of a Kubernetes-style object.
func NewNamed(o interface {
	GetName() string
	GetNamespace() string
}) Named {
	return Named{Name: o.GetName(), Namespace: o.GetNamespace()}
}

// ResourceName is the key: "namespace/name", or "name" when cluster-scoped.
func (n Named) ResourceName() string {
	return namespacedKey(n.Namespace, n.Name)
}

// GetName returns the name.
func (n Named) GetName() string { return n.Name }

// GetNamespace returns the namespace.
func (n Named) GetNamespace() string { return n.Namespace }
