package schema

import (
	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/validation"
)

// validators maps each kind to the rules it is checked with on ingest.
var validators = map[config.GroupVersionKind]validation.Func{
	VirtualService:        validation.VirtualService,
	DestinationRule:       validation.DestinationRule,
	Gateway:               validation.Gateway,
	ServiceEntry:          validation.ServiceEntry,
	WorkloadEntry:         validation.WorkloadEntry,
	WorkloadGroup:         validation.WorkloadGroup,
	Sidecar:               validation.Sidecar,
	AuthorizationPolicy:   validation.AuthorizationPolicy,
	PeerAuthentication:    validation.PeerAuthentication,
	RequestAuthentication: validation.RequestAuthentication,
	GatewayClass:          validation.GatewayClass,
	KubernetesGateway:     validation.KubernetesGateway,
	HTTPRoute:             validation.HTTPRoute,
	GRPCRoute:             validation.GRPCRoute,
	TCPRoute:              validation.TCPRoute,
	TLSRoute:              validation.TLSRoute,
	ReferenceGrant:        validation.ReferenceGrant,
	Namespace:             validation.Namespace,
	Service:               validation.Service,
	Pod:                   validation.Pod,
	Secret:                validation.Secret,
	EndpointSlice:         validation.EndpointSlice,
}

// withValidators attaches each kind's validator.
func withValidators(schemas []*Schema) []*Schema {
	for _, s := range schemas {
		s.Validate = validators[s.GVK]
	}
	return schemas
}
