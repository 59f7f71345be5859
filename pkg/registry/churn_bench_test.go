package registry

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
)

// churnWorld is a mesh of services with one EndpointSlice each, and the
// registry over them, fed through static collections (no files, no API
// server: the cost measured is the registry's).
type churnWorld struct {
	slices  krt.StaticCollection[config.Config]
	pods    krt.StaticCollection[config.Config]
	reg     *Registry
	events  atomic.Int64
	arrived chan struct{} // a signal per event batch
	perHost int
}

func sliceConfig(svc, perHost int, readyFlip int) config.Config {
	spec := &schema.EndpointSliceSpec{AddressType: discoveryv1.AddressTypeIPv4}
	port, name := int32(8080), "http"
	spec.Ports = []discoveryv1.EndpointPort{{Name: &name, Port: &port}}
	for e := range perHost {
		ready := e != readyFlip
		spec.Endpoints = append(spec.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", svc/250, svc%250, e+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("svc%d-%d", svc, e)},
		})
	}
	return config.Config{Meta: config.Meta{GroupVersionKind: schema.EndpointSlice, Name: fmt.Sprintf("svc%d-1", svc), Namespace: "ns",
		Labels: map[string]string{serviceNameLabel: fmt.Sprintf("svc%d", svc)}}, Spec: spec}
}

func podConfig(svc, e int, version string) config.Config {
	return config.Config{Meta: config.Meta{GroupVersionKind: schema.Pod, Name: fmt.Sprintf("svc%d-%d", svc, e), Namespace: "ns",
		Labels: map[string]string{"app": fmt.Sprintf("svc%d", svc), "version": version}},
		Spec: &corev1.PodSpec{ServiceAccountName: "sa"}, Status: &corev1.PodStatus{PodIP: fmt.Sprintf("10.%d.%d.%d", svc/250, svc%250, e+1)}}
}

func newChurnWorld(b *testing.B, services, perHost int) *churnWorld {
	b.Setenv(krt.ChecksEnv, "") // the purity check runs every transformation twice
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	opts := func(name string) []krt.CollectionOption {
		return []krt.CollectionOption{krt.WithStop(stop), krt.WithName(name)}
	}
	var svcs, slices, pods []config.Config
	for s := range services {
		svcs = append(svcs, config.Config{Meta: config.Meta{GroupVersionKind: schema.Service, Name: fmt.Sprintf("svc%d", s), Namespace: "ns"},
			Spec: &corev1.ServiceSpec{Selector: map[string]string{"app": fmt.Sprintf("svc%d", s)}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
		slices = append(slices, sliceConfig(s, perHost, -1))
		for e := range perHost {
			pods = append(pods, podConfig(s, e, "v1"))
		}
	}
	w := &churnWorld{perHost: perHost, arrived: make(chan struct{}, 1)}
	w.slices = krt.NewStaticCollection(nil, slices, opts("slices")...)
	w.pods = krt.NewStaticCollection(nil, pods, opts("pods")...)
	empty := func(n string) krt.Collection[config.Config] {
		return krt.NewStaticCollection[config.Config](nil, nil, opts(n)...)
	}
	w.reg = build(krt.NewStaticCollection(nil, svcs, opts("services")...), w.slices, w.pods, empty("se"), empty("we"), stop, Options{})
	if !w.reg.WaitUntilSynced(stop) {
		b.Fatal("never synced")
	}
	if got := len(w.reg.Endpoints.List()); got != services*perHost {
		b.Fatalf("%d endpoints, want %d", got, services*perHost)
	}
	// Live events only: the current state is not replayed as ADDs.
	w.reg.Endpoints.RegisterBatch(func(events []krt.Event[Endpoint]) {
		w.events.Add(int64(len(events)))
		select {
		case w.arrived <- struct{}{}:
		default:
		}
	}, false)
	return w
}

// waitEvents waits until the endpoints collection has sent n more events.
func (w *churnWorld) waitEvents(b *testing.B, from, n int64) {
	timeout := time.After(10 * time.Second)
	for w.events.Load() < from+n {
		select {
		case <-w.arrived:
		case <-timeout:
			b.Fatalf("got %d endpoint events, want %d", w.events.Load()-from, n)
		}
	}
}

// BenchmarkEndpointChurn measures one endpoint changing in a mesh of
// growing size: an EndpointSlice condition flipping (ready), and a Pod
// relabelled (its endpoint's labels change). Each op waits for the one
// endpoint event it causes. Flat allocations per op across sizes mean the
// change is scoped: only the slice concerned is recomputed, not the mesh
// (ns/op is the same work plus goroutine hand-offs, noisy on a busy
// machine).
func BenchmarkEndpointChurn(b *testing.B) {
	for _, size := range []struct{ services, perHost int }{{10, 10}, {100, 10}, {1000, 10}} {
		name := fmt.Sprintf("endpoints=%d", size.services*size.perHost)
		b.Run("slice-condition/"+name, func(b *testing.B) {
			w := newChurnWorld(b, size.services, size.perHost)
			start := w.events.Load()
			b.ResetTimer()
			for i := range b.N {
				// The first endpoint of a service goes unready, and back on
				// the next round: one endpoint changes per op.
				flip := -1
				if (i/size.services)%2 == 0 {
					flip = 0
				}
				w.slices.UpdateObject(sliceConfig(i%size.services, size.perHost, flip))
				w.waitEvents(b, start, 1)
				start++
			}
		})
		b.Run("pod-relabel/"+name, func(b *testing.B) {
			w := newChurnWorld(b, size.services, size.perHost)
			start := w.events.Load()
			b.ResetTimer()
			for i := range b.N {
				w.pods.UpdateObject(podConfig(i%size.services, 0, fmt.Sprintf("v%d", i+2)))
				w.waitEvents(b, start, 1)
				start++
			}
		})
	}
}
