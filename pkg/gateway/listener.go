package gateway

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
)

// Gateway is one listener of a Gateway API Gateway of ours: the unit a
// route attaches to, and the Istio Gateway (with one server) it becomes.
// The collection "gateway/Gateways" holds one per listener of every
// Gateway whose class is ours, programmed or not, so that routes can tell
// a listener that does not exist from one that is broken.
type Gateway struct {
	// Config is the Istio Gateway of the listener; set when Valid.
	Config *config.Config
	// Valid says the listener is programmed: accepted, its references
	// resolved, conflicting with no other listener.
	Valid bool
	// Parent is the Gateway API Gateway the listener belongs to.
	Parent types.NamespacedName
	// ParentInfo is what routes are checked against when they attach.
	ParentInfo ParentInfo
}

// ParentInfo is a listener as routes see it.
type ParentInfo struct {
	// SectionName is the listener's name.
	SectionName gatewayv1.SectionName
	Port        gatewayv1.PortNumber
	Protocol    gatewayv1.ProtocolType
	// TLSMode is Terminate or Passthrough for listeners that handle TLS,
	// empty otherwise.
	TLSMode gatewayv1.TLSModeType
	// Hostname is the listener's hostname; empty matches every name.
	Hostname string
	// Kinds are the route kinds (of group gateway.networking.k8s.io) that
	// may attach: the allowed kinds the protocol can carry.
	Kinds []string
	// Namespaces are the namespaces routes may attach from.
	Namespaces AllowedNamespaces
	// IstioGateway names the Istio Gateway ("namespace/name") that
	// VirtualServices of routes on this listener bind to.
	IstioGateway string
}

// AllowedNamespaces is the set of namespaces a listener accepts routes
// from: every namespace, or the names listed (sorted).
type AllowedNamespaces struct {
	All   bool     `json:"all,omitempty"`
	Names []string `json:"names,omitempty"`
}

// Allows reports whether routes of namespace ns may attach.
func (a AllowedNamespaces) Allows(ns string) bool {
	if a.All {
		return true
	}
	_, found := slices.BinarySearch(a.Names, ns)
	return found
}

// ResourceName keys a listener by its Gateway and name:
// "namespace/gateway/listener".
func (g Gateway) ResourceName() string {
	return g.Parent.Namespace + "/" + g.Parent.Name + "/" + string(g.ParentInfo.SectionName)
}

// parentKey is the key of the Gateway API Gateway a listener belongs to,
// which routes look listeners up by.
func (g Gateway) parentKey() string { return g.Parent.String() }

// Equals compares listeners, the Istio Gateway by value. Every field
// counts: a route's attachment depends on all of them, so a change to
// any must reach the routes.
func (g Gateway) Equals(o Gateway) bool {
	if g.Valid != o.Valid || g.Parent != o.Parent || !g.ParentInfo.equals(o.ParentInfo) {
		return false
	}
	if (g.Config == nil) != (o.Config == nil) {
		return false
	}
	return g.Config == nil || g.Config.Equals(*o.Config)
}

func (p ParentInfo) equals(o ParentInfo) bool {
	return p.SectionName == o.SectionName && p.Port == o.Port && p.Protocol == o.Protocol && p.TLSMode == o.TLSMode &&
		p.Hostname == o.Hostname && slices.Equal(p.Kinds, o.Kinds) && p.IstioGateway == o.IstioGateway &&
		p.Namespaces.All == o.Namespaces.All && slices.Equal(p.Namespaces.Names, o.Namespaces.Names)
}
