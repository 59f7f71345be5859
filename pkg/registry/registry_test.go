package registry_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/registry"
	"github.com/meshcp/meshcp/pkg/registry/registrytest"
)

// fromFolder reads testdata/<name> as the daemon does in file mode.
func fromFolder(t *testing.T, name string) (*registry.Registry, string) {
	t.Helper()
	w := registrytest.Load(t, []string{filepath.Join("testdata", name)}, nil)
	return w.Registry, w.Dir
}

func write(t *testing.T, path, content string) { krttest.WriteFile(t, path, content) }

func service(t *testing.T, reg *registry.Registry, host string) registry.Service {
	t.Helper()
	got := reg.ServicesByHostname.Lookup(host)
	if len(got) != 1 {
		t.Fatalf("services of %s: %+v", host, got)
	}
	return got[0]
}

// endpointsOf renders a service's endpoints as "address:port health
// locality labels sa" lines for one port name, sorted.
func endpointsOf(reg *registry.Registry, serviceKey, port string) []string {
	var out []string
	for _, e := range reg.EndpointsOf(serviceKey) {
		p, ok := e.Ports[port]
		if !ok {
			continue
		}
		labels, _ := json.Marshal(e.Labels)
		out = append(out, strings.Join([]string{e.Address + ":" + itoa(p), e.Health.String(), e.Locality.String(),
			string(labels), e.ServiceAccount, itoa(e.Weight)}, " "))
	}
	slices.Sort(out)
	return out
}

func itoa(n uint32) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestKubernetesServices(t *testing.T) {
	reg, _ := fromFolder(t, "mesh")

	reviews := service(t, reg, "reviews.default.svc.cluster.local")
	wantPorts := []registry.Port{
		{Name: "tcp-admin", Number: 7000, Protocol: registry.TCP},
		{Name: "grpc", Number: 9080, Protocol: registry.GRPC, TargetPort: 50051},
		{Name: "metrics", Number: 15014, Protocol: registry.HTTP},
	}
	if !slices.Equal(reviews.Ports, wantPorts) || reviews.Resolution != registry.ClientSideLB ||
		!slices.Equal(reviews.Addresses, []string{"10.96.0.10"}) || reviews.Kind != registry.KubernetesService {
		t.Errorf("reviews = %+v", reviews)
	}

	legacy := service(t, reg, "legacy.default.svc.cluster.local")
	if legacy.Resolution != registry.Passthrough || legacy.Ports[0].Protocol != registry.Unsupported ||
		!legacy.VisibleTo("default") || !legacy.VisibleTo("ops") || legacy.VisibleTo("other") {
		t.Errorf("legacy = %+v", legacy)
	}

	search := service(t, reg, "search.default.svc.cluster.local")
	if search.Resolution != registry.DNS || !search.MeshExternal {
		t.Errorf("search = %+v", search)
	}
	if got := endpointsOf(reg, search.ResourceName(), "https"); !slices.Equal(got, []string{"search.example.com:443 HEALTHY  null  1"}) {
		t.Errorf("search endpoints = %q", got)
	}
}

// EndpointSlice conditions give the health, the slice's zone and the Pod's
// istio-locality label the locality, the Pod its labels and service
// account; a WorkloadEntry selected by the Service joins it on its own
// port of the same name.
func TestEndpointSlicesPodsAndWorkloadEntries(t *testing.T) {
	reg, _ := fromFolder(t, "mesh")
	key := registry.ServiceKey("default", "reviews.default.svc.cluster.local")
	want := []string{
		`127.0.0.11:50051 HEALTHY eu-west/zone-a/rack-1 {"app":"reviews","istio-locality":"eu-west.zone-a.rack-1","version":"v1"} reviews 1`,
		`127.0.0.12:50051 DRAINING /zone-b {"app":"reviews","version":"v2"} reviews 1`,
		`127.0.0.13:50051 UNHEALTHY /zone-b null  1`,
		`127.0.0.14:50052 HEALTHY  {"app":"reviews","version":"v3"} reviews-vm 1`,
	}
	if got := endpointsOf(reg, key, "grpc"); !slices.Equal(got, want) {
		t.Errorf("reviews grpc endpoints:\n got %q\nwant %q", got, want)
	}
	// The slice does not serve tcp-admin; the WorkloadEntry serves it on
	// the port itself.
	if got := endpointsOf(reg, key, "tcp-admin"); len(got) != 1 || !strings.HasPrefix(got[0], "127.0.0.14:7000 ") {
		t.Errorf("reviews tcp-admin endpoints = %q", got)
	}
	w := reg.Workloads.GetKey("Pod/default/reviews-v1")
	if w == nil || w.Node != "node-1" || w.ServiceAccount != "reviews" || !w.Ready || !slices.Equal(w.Addresses, []string{"127.0.0.11"}) {
		t.Errorf("workload reviews-v1 = %+v", w)
	}
}

func TestServiceEntries(t *testing.T) {
	reg, _ := fromFolder(t, "mesh")

	api := service(t, reg, "api.example.com")
	if api.Resolution != registry.DNS || !api.MeshExternal || api.Ports[0].Protocol != registry.HTTPS {
		t.Errorf("api = %+v", api)
	}
	if got := endpointsOf(reg, api.ResourceName(), "https"); !slices.Equal(got, []string{"api.example.com:443 HEALTHY  null  1"}) {
		t.Errorf("api endpoints = %q", got)
	}

	// Both hosts of one entry, the same endpoints; ports from the
	// endpoint's map, else the target port.
	for _, host := range []string{"db.internal", "db-replica.internal"} {
		db := service(t, reg, host)
		if db.Resolution != registry.ClientSideLB || db.MeshExternal || !slices.Equal(db.Addresses, []string{"10.200.0.1"}) {
			t.Errorf("%s = %+v", host, db)
		}
		want := []string{
			`127.0.0.21:15432 HEALTHY us-east/zone-1 {"role":"primary"}  3`,
			`127.0.0.22:25432 HEALTHY  {"role":"replica"}  1`,
		}
		if got := endpointsOf(reg, db.ResourceName(), "tls-pg"); !slices.Equal(got, want) {
			t.Errorf("%s endpoints:\n got %q\nwant %q", host, got, want)
		}
	}

	// The selector picks the Pod (on the port itself) and the
	// WorkloadEntry (on its named port).
	payments := service(t, reg, "payments.mesh")
	if payments.Ports[0].Protocol != registry.GRPC {
		t.Errorf("payments = %+v", payments)
	}
	want := []string{
		`127.0.0.31:443 HEALTHY  {"app":"payments"} default 1`,
		`127.0.0.32:9443 HEALTHY us-east/zone-2 {"app":"payments","version":"vm"} payments 2`,
	}
	if got := endpointsOf(reg, payments.ResourceName(), "api"); !slices.Equal(got, want) {
		t.Errorf("payments endpoints:\n got %q\nwant %q", got, want)
	}
	// The selector index finds the ServiceEntry from the Pod's labels.
	if got := reg.Services.List(); len(got) == 0 {
		t.Fatal("no services")
	}
}

// Edits flow: a Pod relabelled moves its endpoint's labels, a slice that
// loses an address loses the endpoint, and a WorkloadEntry that stops
// matching leaves the ServiceEntry.
func TestRegistryFollowsEdits(t *testing.T) {
	reg, dir := fromFolder(t, "mesh")
	key := registry.ServiceKey("default", "reviews.default.svc.cluster.local")

	pods, err := os.ReadFile(filepath.Join(dir, "pods.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "pods.yaml"), strings.Replace(string(pods), "version: v2}", "version: v2b}", 1))
	krttest.WaitFor(t, reg.Endpoints, func() bool {
		got := endpointsOf(reg, key, "grpc")
		return len(got) == 4 && strings.Contains(got[1], `"version":"v2b"`)
	})

	slices_, err := os.ReadFile(filepath.Join(dir, "endpointslices.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(slices_), "- addresses: [127.0.0.13]")
	write(t, filepath.Join(dir, "endpointslices.yaml"), string(slices_)[:cut])
	krttest.WaitFor(t, reg.Endpoints, func() bool { return len(endpointsOf(reg, key, "grpc")) == 3 })

	entries, err := os.ReadFile(filepath.Join(dir, "serviceentries.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "serviceentries.yaml"), strings.Replace(string(entries), "labels: {app: payments, version: vm}", "labels: {app: billing}", 1))
	payments := registry.ServiceKey("default", "payments.mesh")
	krttest.WaitFor(t, reg.Endpoints, func() bool { return len(endpointsOf(reg, payments, "api")) == 1 })
}

// A transformation finds the services that select a workload through the
// selector index (Registry.ServicesFor), and follows relabelling.
func TestServicesFor(t *testing.T) {
	reg, dir := fromFolder(t, "mesh")
	stop := krttest.Stop(t)
	bySelector := krt.NewCollection(reg.Workloads, func(ctx krt.HandlerContext, w registry.Workload) *selectedBy {
		var hosts []string
		for _, s := range reg.ServicesFor(ctx, w) {
			hosts = append(hosts, s.Hostname)
		}
		return &selectedBy{Workload: w.ResourceName(), Hosts: hosts}
	}, krt.WithStop(stop), krt.WithName("test/ServicesFor"))
	hostsOf := func(key string) []string {
		if s := bySelector.GetKey(key); s != nil {
			return s.Hosts
		}
		return nil
	}
	krttest.WaitFor(t, bySelector, bySelector.HasSynced)
	for key, want := range map[string][]string{
		"Pod/default/reviews-v1":            {"reviews.default.svc.cluster.local"},
		"WorkloadEntry/default/reviews-vm":  {"reviews.default.svc.cluster.local"},
		"Pod/default/payments-0":            {"payments.mesh"},
		"WorkloadEntry/default/payments-vm": {"payments.mesh"},
	} {
		if got := hostsOf(key); !slices.Equal(got, want) {
			t.Errorf("%s is selected by %v, want %v", key, got, want)
		}
	}
	pods, err := os.ReadFile(filepath.Join(dir, "pods.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "pods.yaml"), strings.Replace(string(pods), "labels: {app: payments}", "labels: {app: reviews}", 1))
	krttest.WaitFor(t, bySelector, func() bool {
		return slices.Equal(hostsOf("Pod/default/payments-0"), []string{"reviews.default.svc.cluster.local"})
	})
}

// selectedBy is a workload and the hosts of the services selecting it.
type selectedBy struct {
	Workload string
	Hosts    []string
}

func (s selectedBy) ResourceName() string { return s.Workload }
