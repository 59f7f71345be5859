package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
)

// newVirtualServices builds "gateway/VirtualServices": the fragments of
// every route kind, grouped by listener and host ("gateway/RouteFragments"
// indexed into "gateway/RouteFragmentsByHost"), each group merged into
// one VirtualService.
func newVirtualServices(fragments []krt.Collection[routeFragment], o *options) krt.Collection[config.Config] {
	domain := o.domain
	all := krt.JoinCollection(fragments, o.collection("gateway/RouteFragments")...)
	byHost := krt.NewIndex(all, "virtualservice", func(f routeFragment) []string { return []string{f.virtualServiceKey()} })
	groups := byHost.AsCollection(o.collection("gateway/RouteFragmentsByHost")...)
	return krt.NewCollection(groups, func(ctx krt.HandlerContext, g krt.IndexObject[string, routeFragment]) *config.Config {
		return mergeVirtualService(g.Objects, domain)
	}, o.collection("gateway/VirtualServices")...)
}

// mergeVirtualService merges the fragments of one listener and host into
// a VirtualService bound to the listener's Istio Gateway. Its http routes
// are in the Gateway API's precedence order (see precedence); tcp and tls
// routes in route order, oldest first. It lives in the namespace of the
// first route in that order, one of those the listener admits, so the
// Istio Gateway's hosts admit it; its name is derived from the listener
// and host, so it is the same whichever routes contribute.
func mergeVirtualService(fragments []routeFragment, domain string) *config.Config {
	if len(fragments) == 0 {
		return nil
	}
	fs := slices.Clone(fragments)
	slices.SortFunc(fs, func(a, b routeFragment) int { return a.Route.compare(b.Route) })
	type placed struct {
		e     httpEntry
		route routeRef
	}
	var entries []placed
	vs := &networking.VirtualService{Hosts: []string{fs[0].Host}, Gateways: []string{fs[0].Gateway}, ExportTo: slices.Clone(fs[0].ExportTo)}
	parents := make([]string, 0, len(fs))
	for _, f := range fs {
		for _, e := range f.HTTP {
			entries = append(entries, placed{e, f.Route})
		}
		for _, t := range f.TCP {
			vs.Tcp = append(vs.Tcp, proto.CloneOf(t))
		}
		for _, t := range f.TLS {
			vs.Tls = append(vs.Tls, proto.CloneOf(t))
		}
		parents = append(parents, f.Route.String())
	}
	slices.SortStableFunc(entries, func(a, b placed) int { return compareEntries(a.e, a.route, b.e, b.route) })
	for _, p := range entries {
		vs.Http = append(vs.Http, proto.CloneOf(p.e.Route))
	}
	if len(vs.Http)+len(vs.Tcp)+len(vs.Tls) == 0 {
		return nil
	}
	slices.Sort(parents)
	return &config.Config{
		Meta: config.Meta{
			GroupVersionKind: schema.VirtualService,
			Name:             virtualServiceName(namingGateway(fs[0]), fs[0].Host),
			Namespace:        fs[0].Route.Namespace,
			Domain:           domain,
			Annotations: map[string]string{
				RouteSemanticsAnnotation: "gateway",
				ParentsAnnotation:        strings.Join(slices.Compact(parents), ","),
			},
		},
		Spec: vs,
	}
}

// namingGateway is the "namespace/name" a fragment's VirtualService is
// named after: its listener's Istio Gateway, or "<namespace>/mesh" for
// mesh routes.
func namingGateway(f routeFragment) string {
	if f.Gateway == meshGateway {
		return f.Route.Namespace + "/" + meshGateway
	}
	return f.Gateway
}

// virtualServiceName names the VirtualService of a listener (by its Istio
// Gateway, "namespace/name") and host: "<namespace>.<gateway>.<host>",
// with "wildcard" for "*". Names longer than a DNS-1123 subdomain allows
// are cut and end in a hash of the full name.
func virtualServiceName(gateway, host string) string {
	ns, name, _ := strings.Cut(gateway, "/")
	if host == "*" || isWildcard(host) {
		host = "wildcard" + strings.TrimPrefix(host, "*")
	}
	full := ns + "." + name + "." + host
	if len(k8svalidation.IsDNS1123Subdomain(full)) == 0 {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	hash := hex.EncodeToString(sum[:])[:10]
	prefix := full
	if max := k8svalidation.DNS1123SubdomainMaxLength - len(hash) - 1; len(prefix) > max {
		prefix = prefix[:max]
	}
	return strings.TrimRight(prefix, ".-") + "-" + hash
}
