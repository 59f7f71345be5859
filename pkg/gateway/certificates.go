package gateway

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
)

// CredentialPrefix starts the credentialName of every certificate a
// derived Istio Gateway uses: "kubernetes-gateway://namespace/name" names
// a Secret that a Gateway API listener refers to, with the reference
// already checked (same namespace, or allowed by a ReferenceGrant). It is
// Istio's form, so the secret server may hand it to the gateway's proxies
// whatever namespace they run in.
const CredentialPrefix = "kubernetes-gateway://"

// maxCredentials is how many certificates an Istio server takes: one RSA
// and one ECDSA.
const maxCredentials = 2

// certificates is the outcome of resolving a listener's certificateRefs.
type certificates struct {
	// credentials are the credentialNames, when every reference resolved.
	credentials []string
	// reason and problem say why they did not (reason empty: they did).
	reason  gatewayv1.ListenerConditionReason
	problem string
}

// resolveCertificates checks each certificateRef of a listener that
// terminates TLS: a core Secret (the only kind supported), in the
// Gateway's namespace or allowed by a ReferenceGrant, that exists and
// holds a key pair. The first failure decides the reason; the message
// lists every failure.
func resolveCertificates(ctx krt.HandlerContext, gw config.Config, refs []gatewayv1.SecretObjectReference, in *gatewayInputs) certificates {
	var out certificates
	fail := func(reason gatewayv1.ListenerConditionReason, format string, args ...any) {
		if out.reason == "" {
			out.reason = reason
		} else {
			out.problem += "; "
		}
		out.problem += fmt.Sprintf(format, args...)
	}
	for i, ref := range refs {
		to := readRef(ref.Group, ref.Kind, ref.Namespace, ref.Name, "", "Secret", gw.Namespace)
		ns, name := to.namespace, to.name
		if to.group != "" || to.kind != "Secret" {
			fail(gatewayv1.ListenerReasonInvalidCertificateRef, "certificateRefs[%d]: %s is not supported; certificates must be core Secrets", i, groupKind(to.group, to.kind))
			continue
		}
		from := reference{group: gatewayv1.GroupName, kind: "Gateway", namespace: gw.Namespace}
		if !referenceAllowed(ctx, in.grants, from, to) {
			fail(gatewayv1.ListenerReasonRefNotPermitted, "certificateRefs[%d]: Secret %s/%s is in another namespace and no ReferenceGrant there allows Gateways of %s to use it", i, ns, name, gw.Namespace)
			continue
		}
		secret := krt.FetchOne(ctx, in.secrets, krt.FilterKey(to.key()))
		if secret == nil {
			fail(gatewayv1.ListenerReasonInvalidCertificateRef, "certificateRefs[%d]: Secret %s/%s does not exist", i, ns, name)
			continue
		}
		if spec, ok := secret.Spec.(*schema.SecretSpec); !ok || !spec.TLS.Valid {
			problem := "it is not a TLS Secret"
			if ok {
				problem = spec.TLS.Problem
			}
			fail(gatewayv1.ListenerReasonInvalidCertificateRef, "certificateRefs[%d]: Secret %s/%s: %s", i, ns, name, problem)
			continue
		}
		out.credentials = append(out.credentials, CredentialPrefix+ns+"/"+name)
	}
	if out.reason != "" {
		out.credentials = nil
	}
	return out
}

// groupKind names a kind with its group, "Kind" for the core group.
func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}
