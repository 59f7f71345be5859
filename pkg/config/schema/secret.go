package schema

import (
	"crypto/tls"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// SecretSpec is the spec of a Secret Config: what meshcp needs to know
// about a Secret, and never its data. Gateway listeners refer to Secrets
// for their certificates; whether a Secret holds a usable key pair is
// decided here, when the Secret is read, so that no collection, log line
// or debug page ever holds or shows the keys themselves.
type SecretSpec struct {
	// Type is the Secret's type, such as kubernetes.io/tls.
	Type corev1.SecretType `json:"type,omitempty"`
	// Keys are the names of the data entries (data and stringData), sorted.
	Keys []string `json:"keys,omitempty"`
	// TLS says whether tls.crt and tls.key hold a certificate chain and the
	// private key that matches it.
	TLS SecretTLS `json:"tls"`
}

// SecretTLS is the verdict on the key pair of a Secret.
type SecretTLS struct {
	// Valid is true when tls.crt and tls.key form a key pair.
	Valid bool `json:"valid"`
	// Problem says why not, without quoting any of the data.
	Problem string `json:"problem,omitempty"`
}

// DeepCopy returns a copy that shares no memory with s.
func (s *SecretSpec) DeepCopy() *SecretSpec {
	if s == nil {
		return nil
	}
	out := *s
	out.Keys = slices.Clone(s.Keys)
	return &out
}

// secretSpec summarises a Secret. stringData, which the API server folds
// into data on write, counts too: files are read as written.
func secretSpec(o *corev1.Secret) *SecretSpec {
	data := make(map[string][]byte, len(o.Data)+len(o.StringData))
	maps.Copy(data, o.Data)
	for k, v := range o.StringData {
		data[k] = []byte(v)
	}
	return &SecretSpec{
		Type: o.Type,
		Keys: slices.Sorted(maps.Keys(data)),
		TLS:  keyPairVerdict(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey]),
	}
}

// keyPairVerdict checks a certificate chain and a private key. The
// messages name the entries and what is wrong with them, never their
// content.
func keyPairVerdict(cert, key []byte) SecretTLS {
	switch {
	case len(cert) == 0 && len(key) == 0:
		return SecretTLS{Problem: fmt.Sprintf("the Secret has neither %s nor %s", corev1.TLSCertKey, corev1.TLSPrivateKeyKey)}
	case len(cert) == 0:
		return SecretTLS{Problem: fmt.Sprintf("the Secret has no %s", corev1.TLSCertKey)}
	case len(key) == 0:
		return SecretTLS{Problem: fmt.Sprintf("the Secret has no %s", corev1.TLSPrivateKeyKey)}
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		// crypto/tls describes the problem (no PEM block, a key that does
		// not match the certificate...) without echoing the bytes.
		return SecretTLS{Problem: fmt.Sprintf("%s and %s are not a usable key pair: %v", corev1.TLSCertKey, corev1.TLSPrivateKeyKey, err)}
	}
	return SecretTLS{Valid: true}
}
