package envoy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// A gateway server's TLS settings reach its filter chain's TLS context:
// every certificate source Istio offers (one credential, an RSA and an
// ECDSA credential, files, two file pairs), client verification for the
// mutual modes, and protocol versions and cipher suites.
func TestGatewayServerTLSContext(t *testing.T) {
	for _, c := range []struct {
		name  string
		tls   string
		check func(*tlsv3.DownstreamTlsContext) error
	}{
		{
			name: "one credential",
			tls:  "{mode: SIMPLE, credentialName: shop-cert}",
			check: func(ctx *tlsv3.DownstreamTlsContext) error {
				return wantSecrets(ctx, "kubernetes://shop-cert")
			},
		},
		{
			name: "RSA and ECDSA credentials",
			tls:  "{mode: SIMPLE, credentialNames: [shop-rsa, shop-ecdsa]}",
			check: func(ctx *tlsv3.DownstreamTlsContext) error {
				return wantSecrets(ctx, "kubernetes://shop-rsa", "kubernetes://shop-ecdsa")
			},
		},
		{
			name: "two certificate files",
			tls: "{mode: SIMPLE, tlsCertificates: [{serverCertificate: /etc/rsa.crt, privateKey: /etc/rsa.key}, " +
				"{serverCertificate: /etc/ec.crt, privateKey: /etc/ec.key}]}",
			check: func(ctx *tlsv3.DownstreamTlsContext) error {
				var got []string
				for _, c := range ctx.GetCommonTlsContext().GetTlsCertificates() {
					got = append(got, c.GetCertificateChain().GetFilename()+" "+c.GetPrivateKey().GetFilename())
				}
				if want := []string{"/etc/rsa.crt /etc/rsa.key", "/etc/ec.crt /etc/ec.key"}; !slices.Equal(got, want) {
					return fmt.Errorf("certificates %q, want %q", got, want)
				}
				return nil
			},
		},
		{
			name: "mutual with files, CRL, SANs and pins",
			tls: "{mode: MUTUAL, serverCertificate: /etc/s.crt, privateKey: /etc/s.key, caCertificates: /etc/ca.crt, caCrl: /etc/ca.crl, " +
				"subjectAltNames: [spiffe://shop/client], verifyCertificateSpki: [Y2xpZW50LXNwa2ktcGluLWNsaWVudC1zcGtpLXBpbjE=]}",
			check: func(ctx *tlsv3.DownstreamTlsContext) error {
				v := ctx.GetCommonTlsContext().GetValidationContext()
				switch {
				case !ctx.GetRequireClientCertificate().GetValue():
					return fmt.Errorf("client certificate not required")
				case v.GetTrustedCa().GetFilename() != "/etc/ca.crt" || v.GetCrl().GetFilename() != "/etc/ca.crl":
					return fmt.Errorf("roots %q, CRL %q", v.GetTrustedCa().GetFilename(), v.GetCrl().GetFilename())
				case len(v.GetMatchTypedSubjectAltNames()) != 1 || v.GetMatchTypedSubjectAltNames()[0].GetMatcher().GetExact() != "spiffe://shop/client":
					return fmt.Errorf("SAN matchers %v", v.GetMatchTypedSubjectAltNames())
				case len(v.GetVerifyCertificateSpki()) != 1:
					return fmt.Errorf("SPKI pins %v", v.GetVerifyCertificateSpki())
				}
				return nil
			},
		},
		{
			name: "optional mutual with credentials: the first one's CA",
			tls:  "{mode: OPTIONAL_MUTUAL, credentialNames: [shop-rsa, shop-ecdsa]}",
			check: func(ctx *tlsv3.DownstreamTlsContext) error {
				roots := ctx.GetCommonTlsContext().GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName()
				if ctx.GetRequireClientCertificate().GetValue() || roots != "kubernetes://shop-rsa-cacert" {
					return fmt.Errorf("required %v, roots %q", ctx.GetRequireClientCertificate().GetValue(), roots)
				}
				return wantSecrets(ctx, "kubernetes://shop-rsa", "kubernetes://shop-ecdsa")
			},
		},
		{
			name: "versions and ciphers",
			tls:  "{mode: SIMPLE, credentialName: shop-cert, minProtocolVersion: TLSV1_2, maxProtocolVersion: TLSV1_3, cipherSuites: [ECDHE-ECDSA-AES128-GCM-SHA256]}",
			check: func(ctx *tlsv3.DownstreamTlsContext) error {
				p := ctx.GetCommonTlsContext().GetTlsParams()
				if p.GetTlsMinimumProtocolVersion() != tlsv3.TlsParameters_TLSv1_2 || p.GetTlsMaximumProtocolVersion() != tlsv3.TlsParameters_TLSv1_3 ||
					!slices.Equal(p.GetCipherSuites(), []string{"ECDHE-ECDSA-AES128-GCM-SHA256"}) {
					return fmt.Errorf("TLS parameters %s", asJSON(p))
				}
				return nil
			},
		},
		{
			name: "defaults: no TLS parameters",
			tls:  "{mode: SIMPLE, credentialName: shop-cert}",
			check: func(ctx *tlsv3.DownstreamTlsContext) error {
				if p := ctx.GetCommonTlsContext().GetTlsParams(); p != nil {
					return fmt.Errorf("TLS parameters %s, want none", asJSON(p))
				}
				return nil
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := loadWorld(t, "", map[string]string{"edge.yaml": `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: edge}
spec:
  selector: {app: edge}
  servers:
  - port: {number: 443, name: https, protocol: HTTPS}
    hosts: [shop.example.com]
    tls: ` + c.tls + `
`})
			res := envoy.BuildListeners(edgeGateway, w.model(), nil)
			if len(res.Warnings) > 0 {
				t.Fatalf("warnings: %v", res.Warnings)
			}
			for _, r := range res.Resources {
				if err := envoy.Validate(r.Message); err != nil {
					t.Fatalf("%s: %v", r.Name, err)
				}
			}
			l := listener(t, res, "0.0.0.0_443")
			ctx := downstreamTLSOf(t, l.FilterChains[0])
			if err := c.check(ctx); err != nil {
				t.Errorf("%v\n%s", err, asJSON(ctx))
			}
		})
	}
}

// wantSecrets checks the SDS secrets a context serves certificates from.
func wantSecrets(ctx *tlsv3.DownstreamTlsContext, want ...string) error {
	var got []string
	for _, s := range ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs() {
		got = append(got, s.GetName())
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("certificate secrets %q, want %q", got, want)
	}
	return nil
}

// A Gateway API listener with an RSA and an ECDSA certificate serves both:
// the derived server's credentialNames become two SDS secrets.
func TestGatewayAPIListenerWithTwoCertificates(t *testing.T) {
	objects := strings.Replace(gatewayAPIObjects, "certificateRefs: [{name: cert}]", "certificateRefs: [{name: cert}, {name: cert-ec}]", 1)
	src := gatewayAPIWorld(t, map[string]string{"objects.yaml": objects, "secret.yaml": tlsSecret(t, "web", "cert"), "secret-ec.yaml": tlsSecret(t, "web", "cert-ec")})
	gw := &envoy.Proxy{ID: "router~10.0.0.9~web-0.web~web.svc.cluster.local", Kind: envoy.Gateway, Namespace: "web",
		Labels: map[string]string{"gateway.networking.k8s.io/gateway-name": "web"}}
	res := envoy.BuildListeners(gw, envoy.NewModel(envoy.InputsFrom(src)), nil)
	if len(res.Warnings) > 0 {
		t.Fatalf("warnings: %v", res.Warnings)
	}
	ctx := downstreamTLSOf(t, listener(t, res, "0.0.0.0_8443").FilterChains[0])
	if err := wantSecrets(ctx, "kubernetes-gateway://web/cert", "kubernetes-gateway://web/cert-ec"); err != nil {
		t.Error(err)
	}
}

// downstreamTLSOf is the TLS context a filter chain terminates TLS with.
func downstreamTLSOf(t *testing.T, chain *listenerv3.FilterChain) *tlsv3.DownstreamTlsContext {
	t.Helper()
	ctx := &tlsv3.DownstreamTlsContext{}
	if err := chain.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
		t.Fatalf("filter chain %s: no TLS context: %v", chain.Name, err)
	}
	return ctx
}
