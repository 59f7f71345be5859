// Package bench measures krt against a hand-written client-go controller
// doing the same job, in the seed's world: 1000 pods in 2 namespaces with 25
// app labels, 50 services, and a Workload per pod naming the services that
// select it. Both controllers read the same kind of informers, fed by the
// same in-memory source, and emit the same Workload events.
package bench

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/meshcp/meshcp/pkg/krt"
)

// The size of the seed's world.
const (
	Pods       = 1000
	Namespaces = 2
	Apps       = 25
	Services   = Namespaces * Apps
)

// Workload is a pod's IP and the services that select it: what both
// controllers produce.
type Workload struct {
	krt.Named
	IP           string
	ServiceNames []string
}

// Equals compares workloads field by field.
func (w Workload) Equals(o Workload) bool {
	return w.Named == o.Named && w.IP == o.IP && slices.Equal(w.ServiceNames, o.ServiceNames)
}

// Event is a Workload event as both controllers report it.
type Event struct {
	Type     krt.EventType
	Workload Workload
}

// App returns the app label of pod (or service) i.
func App(i int) string { return fmt.Sprintf("app-%02d", i%Apps) }

// Namespace returns the namespace of pod (or service) i.
func Namespace(i int) string { return fmt.Sprintf("ns-%d", i%Namespaces) }

// PodIP returns the IP of pod i after the given number of updates.
func PodIP(i, generation int) string {
	return fmt.Sprintf("10.%d.%d.%d", generation%250, i/250, i%250)
}

// NewPods returns the world's pods, each labelled with its app.
func NewPods() []*corev1.Pod {
	pods := make([]*corev1.Pod, Pods)
	for i := range pods {
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       Namespace(i),
				Name:            fmt.Sprintf("pod-%04d", i),
				Labels:          map[string]string{"app": App(i)},
				ResourceVersion: "1",
			},
			Status: corev1.PodStatus{PodIP: PodIP(i, 0)},
		}
	}
	return pods
}

// NewServices returns one service per (namespace, app), selecting that app.
func NewServices() []*corev1.Service {
	services := make([]*corev1.Service, Services)
	for i := range services {
		services[i] = &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       Namespace(i),
				Name:            fmt.Sprintf("svc-%02d", i),
				ResourceVersion: "1",
			},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": App(i)}},
		}
	}
	return services
}

// NewInformer returns an informer over source with a namespace index, as a
// client-go informer factory would build it.
func NewInformer[T runtime.Object](source *Source[T], example T) cache.SharedIndexInformer {
	return cache.NewSharedIndexInformer(source.ListerWatcher(), example, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}
