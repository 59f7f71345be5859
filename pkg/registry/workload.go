package registry

import (
	"maps"
	"slices"
)

// WorkloadKind says which object a workload was read from.
type WorkloadKind string

// The kinds of workload.
const (
	PodWorkload           WorkloadKind = "Pod"
	WorkloadEntryWorkload WorkloadKind = "WorkloadEntry"
)

// Workload is something that runs and serves: a Pod, or a WorkloadEntry
// (a VM or anything else outside Kubernetes). Services reach workloads by
// their labels.
type Workload struct {
	Kind      WorkloadKind `json:"kind"`
	Name      string       `json:"name"`
	Namespace string       `json:"namespace"`
	// Labels are the Pod's labels or the WorkloadEntry's spec.labels.
	Labels         map[string]string `json:"labels,omitempty"`
	ServiceAccount string            `json:"serviceAccount,omitempty"`
	// Addresses are the pod IPs, or the WorkloadEntry's address.
	Addresses []string `json:"addresses,omitempty"`
	// Node is the node a Pod is scheduled on.
	Node     string   `json:"node,omitempty"`
	Locality Locality `json:"locality"`
	Network  string   `json:"network,omitempty"`
	// Ports are the named ports: a Pod's named container ports, a
	// WorkloadEntry's spec.ports.
	Ports map[string]uint32 `json:"ports,omitempty"`
	// Weight is a WorkloadEntry's load balancing weight; 1 otherwise.
	Weight uint32 `json:"weight"`
	// Ready is false for a Pod whose Ready condition is not True.
	Ready bool `json:"ready"`
}

// WorkloadKey identifies a workload: "Kind/namespace/name".
func WorkloadKey(kind WorkloadKind, namespace, name string) string {
	return string(kind) + "/" + namespace + "/" + name
}

// ResourceName is the workload's key (see WorkloadKey).
func (w Workload) ResourceName() string { return WorkloadKey(w.Kind, w.Namespace, w.Name) }

// GetName returns the name of the Pod or WorkloadEntry.
func (w Workload) GetName() string { return w.Name }

// GetNamespace returns the namespace, so krt.FilterNamespace applies.
func (w Workload) GetNamespace() string { return w.Namespace }

// GetLabels returns the labels, so krt.FilterLabel finds workloads through
// the collection's label index.
func (w Workload) GetLabels() map[string]string { return w.Labels }

// Equals compares workloads field by field.
func (w Workload) Equals(o Workload) bool {
	return w.Kind == o.Kind && w.Name == o.Name && w.Namespace == o.Namespace && maps.Equal(w.Labels, o.Labels) &&
		w.ServiceAccount == o.ServiceAccount && slices.Equal(w.Addresses, o.Addresses) && w.Node == o.Node &&
		w.Locality == o.Locality && w.Network == o.Network && maps.Equal(w.Ports, o.Ports) && w.Weight == o.Weight && w.Ready == o.Ready
}
