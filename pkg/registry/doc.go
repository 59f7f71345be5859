// Package registry is meshcp's service registry: what services exist,
// on which ports and protocols, and which endpoints serve them, derived as
// krt collections from the accepted configuration (package
// config/sources).
//
// # Model
//
// A Service is a host name and its ports: a Kubernetes Service
// (name.namespace.svc.<domain>) or one host of an Istio ServiceEntry. Each
// Port has a Protocol, told as Istio tells it: appProtocol first, then the
// port name's prefix ("grpc-api" is gRPC), else Unsupported. Resolution
// says how clients find endpoints (EDS, DNS, or passthrough for headless
// services and resolution NONE).
//
// An Endpoint is one address serving one service, with its port for each
// service port name, the labels of the workload behind it (subsets select
// by them), its service account, Locality and Health. Endpoints come from:
//
//   - EndpointSlices (label kubernetes.io/service-name): addresses, ports,
//     conditions (ready: healthy; terminating but serving: draining;
//     otherwise unhealthy) and zone; the Pod named by targetRef adds its
//     labels, service account, network and locality (the istio-locality
//     label, region.zone.subzone). Topology hints are ignored.
//   - WorkloadEntries picked by a Kubernetes Service's selector.
//   - ServiceEntries: their inline endpoints; or the Pods and
//     WorkloadEntries of their namespace that the workloadSelector picks;
//     or, for DNS resolution with neither, the host itself.
//   - ExternalName Services: the external name, resolved by DNS.
//
// A Workload is a Pod or a WorkloadEntry: labels, service account,
// addresses, node, locality, named ports, readiness.
//
// # Collections
//
// New builds the graph over config sources; every transformation reads
// other collections only through krt.Fetch. Registry.Services is indexed by
// host name (ServicesByHostname) and, through Service.GetLabelSelector,
// by selector: krt.FilterSelectsNonEmpty(labels) finds the services that
// select a workload (Registry.ServicesFor). Registry.Endpoints is indexed
// by service key (EndpointsByService). Workloads are found by label
// through krt.FilterLabel, so a relabelled Pod recomputes only the
// services whose selectors matched it before or after.
//
// The DNS domain of Kubernetes host names is Options.Domain, else the one
// the sources recorded on each object (the daemon's --domain flag), else
// cluster.local. Istio's MeshConfig has no such field.
//
// Conflicts: a host declared by a Kubernetes Service and by a ServiceEntry
// of the same namespace is the Kubernetes Service. The same address of one
// service from two origins is two Endpoints here; xDS builders keep one.
package registry
