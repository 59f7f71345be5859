package envoy

import (
	"fmt"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshcp/meshcp/pkg/registry"
)

// adsSource is "over the same ADS stream", for SDS, EDS and RDS.
func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}
}

// credentialSecret is the SDS secret name of a credentialName: a bare
// Secret name is "kubernetes://<name>", as istio-agent serves it; a name
// that already says where it comes from ("kubernetes-gateway://ns/name",
// which Gateway API Gateways become, or "kubernetes://name") is used as
// it is, never prefixed twice.
func credentialSecret(credentialName string) string {
	if strings.Contains(credentialName, "://") {
		return credentialName
	}
	return credentialNamePrefix + credentialName
}

func sdsSecret(name string) *tlsv3.SdsSecretConfig {
	return &tlsv3.SdsSecretConfig{Name: name, SdsConfig: adsSource()}
}

// upstreamTLS builds the TLS context of a cluster from a DestinationRule's
// TLS settings, or nil for plaintext. sans are the identities the
// service's endpoints may present, for ISTIO_MUTUAL when the rule names
// none. sni is used when the rule sets none.
//
// Envoy gets SDS secrets over ADS ("default" and "ROOTCA" for
// ISTIO_MUTUAL, "kubernetes://<credentialName>" for a credential) or
// files. Proxyless gRPC takes certificates only from certificate provider
// instances of its bootstrap (A29): ISTIO_MUTUAL uses instance "default"
// (as istiod does; a bootstrap without it makes grpc-go refuse the
// cluster), and SIMPLE or MUTUAL, which would need files or
// secrets gRPC cannot read, are refused with an error: no cluster is
// better than a plaintext one the rule asked to encrypt.
func upstreamTLS(tls *networking.ClientTLSSettings, f Flavour, sans []string, sni string) (*tlsv3.UpstreamTlsContext, error) {
	if tls == nil || tls.Mode == networking.ClientTLSSettings_DISABLE {
		return nil, nil
	}
	if len(tls.SubjectAltNames) > 0 {
		sans = tls.SubjectAltNames
	}
	if tls.Sni != "" {
		sni = tls.Sni
	}
	if f == ProxylessGRPC {
		if tls.Mode != networking.ClientTLSSettings_ISTIO_MUTUAL {
			return nil, fmt.Errorf("TLS mode %s needs certificates from files or secrets, which gRPC clients cannot be sent; only ISTIO_MUTUAL (certificate provider %q) is generated for them", tls.Mode, certificateProviderInstance)
		}
		return &tlsv3.UpstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
			TlsCertificateProviderInstance: &tlsv3.CertificateProviderPluginInstance{InstanceName: certificateProviderInstance, CertificateName: identitySecret},
			ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
				CaCertificateProviderInstance: &tlsv3.CertificateProviderPluginInstance{InstanceName: certificateProviderInstance, CertificateName: rootSecret},
				MatchSubjectAltNames:          exactMatchers(sans),
			}},
		}}, nil
	}
	ctx := &tlsv3.UpstreamTlsContext{Sni: sni, CommonTlsContext: &tlsv3.CommonTlsContext{}}
	common := ctx.CommonTlsContext
	switch tls.Mode {
	case networking.ClientTLSSettings_ISTIO_MUTUAL:
		common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{sdsSecret(identitySecret)}
		common.ValidationContextType = &tlsv3.CommonTlsContext_CombinedValidationContext{CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
			DefaultValidationContext:         &tlsv3.CertificateValidationContext{MatchTypedSubjectAltNames: sanMatchers(sans)},
			ValidationContextSdsSecretConfig: sdsSecret(rootSecret),
		}}
		common.AlpnProtocols = []string{"istio-peer-exchange", "istio"}
	case networking.ClientTLSSettings_SIMPLE, networking.ClientTLSSettings_MUTUAL:
		switch {
		case tls.CredentialName != "" || tls.CaCertificates != "":
			setPeerValidation(common, tls.CredentialName, tls.CaCertificates, sans)
		case tls.GetInsecureSkipVerify().GetValue():
		default:
			// No roots named: the system's, as Istio does for SIMPLE.
			setPeerValidation(common, "", systemRoots, sans)
		}
		if tls.Mode == networking.ClientTLSSettings_MUTUAL {
			switch {
			case tls.CredentialName != "":
				common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{sdsSecret(credentialSecret(tls.CredentialName))}
			case tls.ClientCertificate != "" && tls.PrivateKey != "":
				common.TlsCertificates = []*tlsv3.TlsCertificate{fileCertificate(tls.ClientCertificate, tls.PrivateKey)}
			default:
				return nil, fmt.Errorf("TLS mode MUTUAL needs credentialName, or clientCertificate and privateKey")
			}
		}
	}
	return ctx, nil
}

// setPeerValidation checks the peer's certificate against roots: the
// credential's "-cacert" SDS secret when a credential is named, else the
// CA file; and its SANs against sans.
func setPeerValidation(common *tlsv3.CommonTlsContext, credentialName, caFile string, sans []string) {
	validation := &tlsv3.CertificateValidationContext{MatchTypedSubjectAltNames: sanMatchers(sans)}
	if credentialName != "" {
		common.ValidationContextType = &tlsv3.CommonTlsContext_CombinedValidationContext{CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
			DefaultValidationContext:         validation,
			ValidationContextSdsSecretConfig: sdsSecret(credentialSecret(credentialName) + "-cacert"),
		}}
		return
	}
	validation.TrustedCa = &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: caFile}}
	common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: validation}
}

// systemRoots is the CA bundle of Debian-like images, where Envoy finds
// the system's roots.
const systemRoots = "/etc/ssl/certs/ca-certificates.crt"

// spiffeIdentities are the SPIFFE identities of the service accounts
// behind a service's endpoints, sorted.
func spiffeIdentities(trustDomain string, eps []registry.Endpoint) []string {
	var out []string
	for _, e := range eps {
		if e.ServiceAccount == "" {
			continue
		}
		ns, _, _ := cutServiceKey(e.Service)
		out = append(out, "spiffe://"+trustDomain+"/ns/"+ns+"/sa/"+e.ServiceAccount)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// cutServiceKey splits "namespace/hostname".
func cutServiceKey(key string) (namespace, hostname string, ok bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:], true
		}
	}
	return "", key, false
}

func exactMatchers(values []string) []*matcherv3.StringMatcher {
	var out []*matcherv3.StringMatcher
	for _, v := range values {
		out = append(out, &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: v}})
	}
	return out
}

// sanMatchers match a certificate's URI SAN (SPIFFE identities) or DNS
// SAN against the given names.
func sanMatchers(values []string) []*tlsv3.SubjectAltNameMatcher {
	var out []*tlsv3.SubjectAltNameMatcher
	for _, v := range values {
		typ := tlsv3.SubjectAltNameMatcher_DNS
		if len(v) > 9 && v[:9] == "spiffe://" {
			typ = tlsv3.SubjectAltNameMatcher_URI
		}
		out = append(out, &tlsv3.SubjectAltNameMatcher{SanType: typ, Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: v}}})
	}
	return out
}

// downstreamTLS is the TLS context of a gateway server that terminates
// TLS. The certificate comes from one credential's SDS secret, or two
// (credentialNames: an RSA and an ECDSA certificate for the same hosts,
// Envoy picks per handshake), or one or two certificate and key files;
// for MUTUAL and OPTIONAL_MUTUAL the client certificate is checked against
// the first credential's "-cacert" secret or caCertificates, the CRL,
// subjectAltNames, and the pinned hashes. ISTIO_MUTUAL uses the workload
// identity. Protocol versions and cipher suites are kept.
func downstreamTLS(tls *networking.ServerTLSSettings) (*tlsv3.DownstreamTlsContext, error) {
	common := &tlsv3.CommonTlsContext{AlpnProtocols: []string{"h2", "http/1.1"}, TlsParams: tlsParams(tls)}
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: common}
	switch tls.Mode {
	case networking.ServerTLSSettings_ISTIO_MUTUAL:
		common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{sdsSecret(identitySecret)}
		common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContextSdsSecretConfig{ValidationContextSdsSecretConfig: sdsSecret(rootSecret)}
		ctx.RequireClientCertificate = wrapperspb.Bool(true)
		return ctx, nil
	case networking.ServerTLSSettings_SIMPLE, networking.ServerTLSSettings_MUTUAL, networking.ServerTLSSettings_OPTIONAL_MUTUAL:
	default:
		return nil, fmt.Errorf("TLS mode %s does not terminate TLS", tls.Mode)
	}
	credentials := tls.CredentialNames
	if tls.CredentialName != "" {
		credentials = []string{tls.CredentialName}
	}
	switch {
	case len(credentials) > 0:
		for _, name := range credentials {
			common.TlsCertificateSdsSecretConfigs = append(common.TlsCertificateSdsSecretConfigs, sdsSecret(credentialSecret(name)))
		}
	case len(tls.TlsCertificates) > 0:
		for _, c := range tls.TlsCertificates {
			common.TlsCertificates = append(common.TlsCertificates, fileCertificate(c.GetServerCertificate(), c.GetPrivateKey()))
		}
	case tls.ServerCertificate != "" && tls.PrivateKey != "":
		common.TlsCertificates = []*tlsv3.TlsCertificate{fileCertificate(tls.ServerCertificate, tls.PrivateKey)}
	default:
		return nil, fmt.Errorf("TLS mode %s needs credentialName(s), serverCertificate and privateKey, or tlsCertificates", tls.Mode)
	}
	if tls.Mode == networking.ServerTLSSettings_SIMPLE {
		return ctx, nil
	}
	credential := ""
	if len(credentials) > 0 {
		credential = credentials[0]
	}
	if credential == "" && tls.CaCertificates == "" {
		return nil, fmt.Errorf("TLS mode %s needs client roots: credentialName(s) or caCertificates", tls.Mode)
	}
	setPeerValidation(common, credential, tls.CaCertificates, tls.SubjectAltNames)
	if v := common.GetValidationContext(); v != nil {
		if tls.CaCrl != "" {
			v.Crl = &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: tls.CaCrl}}
		}
		v.VerifyCertificateHash = tls.VerifyCertificateHash
		v.VerifyCertificateSpki = tls.VerifyCertificateSpki
	} else if v := common.GetCombinedValidationContext().GetDefaultValidationContext(); v != nil {
		v.VerifyCertificateHash = tls.VerifyCertificateHash
		v.VerifyCertificateSpki = tls.VerifyCertificateSpki
	}
	ctx.RequireClientCertificate = wrapperspb.Bool(tls.Mode == networking.ServerTLSSettings_MUTUAL)
	return ctx, nil
}

// fileCertificate is a certificate chain and key read from files.
func fileCertificate(chain, key string) *tlsv3.TlsCertificate {
	return &tlsv3.TlsCertificate{
		CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: chain}},
		PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: key}},
	}
}

// tlsParams are a server's protocol versions and cipher suites, nil when
// it leaves all to Envoy's defaults.
func tlsParams(tls *networking.ServerTLSSettings) *tlsv3.TlsParameters {
	versions := map[networking.ServerTLSSettings_TLSProtocol]tlsv3.TlsParameters_TlsProtocol{
		networking.ServerTLSSettings_TLS_AUTO: tlsv3.TlsParameters_TLS_AUTO,
		networking.ServerTLSSettings_TLSV1_0:  tlsv3.TlsParameters_TLSv1_0,
		networking.ServerTLSSettings_TLSV1_1:  tlsv3.TlsParameters_TLSv1_1,
		networking.ServerTLSSettings_TLSV1_2:  tlsv3.TlsParameters_TLSv1_2,
		networking.ServerTLSSettings_TLSV1_3:  tlsv3.TlsParameters_TLSv1_3,
	}
	p := &tlsv3.TlsParameters{
		TlsMinimumProtocolVersion: versions[tls.MinProtocolVersion],
		TlsMaximumProtocolVersion: versions[tls.MaxProtocolVersion],
		CipherSuites:              slices.Clone(tls.CipherSuites),
	}
	if p.TlsMinimumProtocolVersion == tlsv3.TlsParameters_TLS_AUTO && p.TlsMaximumProtocolVersion == tlsv3.TlsParameters_TLS_AUTO && len(p.CipherSuites) == 0 {
		return nil
	}
	return p
}
