package registry

import (
	"log/slog"
	"slices"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/krt"
)

// Options tune the registry.
type Options struct {
	// Domain is the cluster's DNS domain in Kubernetes host names. Empty
	// means the domain each object's source recorded (the --domain flag),
	// else cluster.local. Istio's MeshConfig has no such field.
	Domain string
	// Debugger registers every collection for /debug/krtz.
	Debugger *krt.DebugHandler
	// Logger is handed to the collections.
	Logger *slog.Logger
}

func (o Options) collection(stop <-chan struct{}, name string) []krt.CollectionOption {
	opts := []krt.CollectionOption{krt.WithStop(stop), krt.WithName(name), krt.WithDebugging(o.Debugger)}
	if o.Logger != nil {
		opts = append(opts, krt.WithLogger(o.Logger))
	}
	return opts
}

// Registry is the service registry as krt collections: workloads,
// services and endpoints derived from Kubernetes Services, EndpointSlices
// and Pods, and from Istio ServiceEntries and WorkloadEntries.
type Registry struct {
	// Workloads holds Pods and WorkloadEntries, keyed "Kind/ns/name".
	Workloads krt.Collection[Workload]
	// Services holds every service, keyed "namespace/hostname".
	Services krt.Collection[Service]
	// Endpoints holds every endpoint of every service.
	Endpoints krt.Collection[Endpoint]
	// ServicesByHostname finds the services of a host name (one per
	// namespace that declares it).
	ServicesByHostname krt.Index[string, Service]
	// EndpointsByService finds the endpoints of a service by its key.
	EndpointsByService krt.Index[string, Endpoint]
}

// Collection names, as /debug/krtz shows them.
const (
	collPodWorkloads      = "registry/PodWorkloads"
	collEntryWorkloads    = "registry/WorkloadEntryWorkloads"
	collWorkloads         = "registry/Workloads"
	collKubeServices      = "registry/KubernetesServices"
	collEntryServices     = "registry/ServiceEntryServices"
	collServices          = "registry/Services"
	collSliceEndpoints    = "registry/EndpointSliceEndpoints"
	collServiceWEEndpoint = "registry/ServiceWorkloadEntryEndpoints"
	collEntryEndpoints    = "registry/ServiceEntryEndpoints"
	collEndpoints         = "registry/Endpoints"
)

// New builds the registry over the accepted configuration of src. A kind
// that src does not read is empty. Collections stop with stop.
func New(src *sources.Sources, stop <-chan struct{}, opts Options) *Registry {
	configs := func(gvk config.GroupVersionKind) krt.Collection[config.Config] {
		if k := src.Kind(gvk); k != nil {
			return k.Configs
		}
		return krt.NewStaticCollection[config.Config](nil, nil, opts.collection(stop, "registry/empty/"+gvk.String())...)
	}
	return build(configs(schema.Service), configs(schema.EndpointSlice), configs(schema.Pod),
		configs(schema.ServiceEntry), configs(schema.WorkloadEntry), stop, opts)
}

// build derives the registry's collections from those of the five kinds.
func build(services, slices_, pods, serviceEntries, workloadEntries krt.Collection[config.Config], stop <-chan struct{}, opts Options) *Registry {
	podWorkloads := krt.NewCollection(pods, func(ctx krt.HandlerContext, c config.Config) *Workload {
		return workloadFromPod(c)
	}, opts.collection(stop, collPodWorkloads)...)
	entryWorkloads := krt.NewCollection(workloadEntries, func(ctx krt.HandlerContext, c config.Config) *Workload {
		return workloadFromWorkloadEntry(c)
	}, opts.collection(stop, collEntryWorkloads)...)
	workloads := krt.JoinCollection([]krt.Collection[Workload]{podWorkloads, entryWorkloads}, opts.collection(stop, collWorkloads)...)

	kubeServices := krt.NewCollection(services, func(ctx krt.HandlerContext, c config.Config) *Service {
		return serviceFromKubernetes(c, opts.Domain)
	}, opts.collection(stop, collKubeServices)...)
	entryServices := krt.NewManyCollection(serviceEntries, func(ctx krt.HandlerContext, c config.Config) []Service {
		return servicesFromServiceEntry(c)
	}, opts.collection(stop, collEntryServices)...)
	allServices := krt.JoinCollection([]krt.Collection[Service]{kubeServices, entryServices}, opts.collection(stop, collServices)...)

	sliceEndpoints := krt.NewManyCollection(slices_, func(ctx krt.HandlerContext, c config.Config) []Endpoint {
		var pods map[string]Workload
		if keys := podKeys(c); len(keys) > 0 {
			found := krt.Fetch(ctx, podWorkloads, krt.FilterKeys(keys...))
			pods = make(map[string]Workload, len(found))
			for _, w := range found {
				pods[w.ResourceName()] = w
			}
		}
		return endpointsFromSlice(c, opts.Domain, pods)
	}, opts.collection(stop, collSliceEndpoints)...)
	serviceWEEndpoints := krt.NewManyCollection(services, func(ctx krt.HandlerContext, c config.Config) []Endpoint {
		svc := serviceFromKubernetes(c, opts.Domain)
		if svc == nil {
			return nil
		}
		if svc.Resolution == DNS {
			return externalNameEndpoint(c, svc)
		}
		if len(svc.Selector) == 0 {
			return nil
		}
		selected := krt.Fetch(ctx, entryWorkloads, krt.FilterNamespace(c.Namespace), krt.FilterLabel(svc.Selector))
		return workloadEntryEndpoints(svc, "Service "+c.ResourceName(), selected)
	}, opts.collection(stop, collServiceWEEndpoint)...)
	entryEndpoints := krt.NewManyCollection(serviceEntries, func(ctx krt.HandlerContext, c config.Config) []Endpoint {
		var selected []Workload
		if sel := selectorOf(c); sel != nil {
			selected = krt.Fetch(ctx, workloads, krt.FilterNamespace(c.Namespace), krt.FilterLabel(sel))
		}
		return serviceEntryEndpoints(c, selected)
	}, opts.collection(stop, collEntryEndpoints)...)
	allEndpoints := krt.JoinCollection([]krt.Collection[Endpoint]{sliceEndpoints, serviceWEEndpoints, entryEndpoints},
		opts.collection(stop, collEndpoints)...)

	return &Registry{
		Workloads:          workloads,
		Services:           allServices,
		Endpoints:          allEndpoints,
		ServicesByHostname: krt.NewIndex(allServices, "hostname", func(s Service) []string { return []string{s.Hostname} }),
		EndpointsByService: krt.NewIndex(allEndpoints, "service", func(e Endpoint) []string { return []string{e.Service} }),
	}
}

// HasSynced reports whether every collection holds its initial state.
func (r *Registry) HasSynced() bool {
	return r.Workloads.HasSynced() && r.Services.HasSynced() && r.Endpoints.HasSynced()
}

// WaitUntilSynced waits for the initial state, or stop.
func (r *Registry) WaitUntilSynced(stop <-chan struct{}) bool {
	return r.Workloads.WaitUntilSynced(stop) && r.Services.WaitUntilSynced(stop) && r.Endpoints.WaitUntilSynced(stop)
}

// EndpointsOf returns the endpoints of a service, by its key, in key order.
// It reads the index without recording a dependency: it is for code
// outside the graph, such as xDS generators.
func (r *Registry) EndpointsOf(serviceKey string) []Endpoint {
	return r.EndpointsByService.Lookup(serviceKey)
}

// ServicesFor returns, inside a transformation, the services whose
// selector picks workload w (in its namespace), through the selector index.
func (r *Registry) ServicesFor(ctx krt.HandlerContext, w Workload) []Service {
	return krt.Fetch(ctx, r.Services, krt.FilterNamespace(w.Namespace), krt.FilterSelectsNonEmpty(w.Labels))
}

// SortedServices returns every service, ordered by key.
func (r *Registry) SortedServices() []Service {
	out := r.Services.List()
	slices.SortFunc(out, func(a, b Service) int {
		if a.ResourceName() < b.ResourceName() {
			return -1
		}
		if a.ResourceName() > b.ResourceName() {
			return 1
		}
		return 0
	})
	return out
}
