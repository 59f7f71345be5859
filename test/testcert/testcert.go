// Package testcert makes the certificates tests need: self-signed key
// pairs for TLS Secrets, and a CA that issues server, client and workload
// certificates. Keys are ECDSA P-256; certificates are valid from an hour
// ago for a day, so clock skew between processes does not matter.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// Pair is a certificate and its private key, PEM encoded.
type Pair struct {
	Cert, Key []byte
}

// SelfSigned is a key pair whose certificate names host, signed by
// itself, as a TLS Secret holds one.
func SelfSigned(t testing.TB, host string) Pair {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: host}, DNSNames: []string{host}}
	fillIn(tmpl)
	return Pair{Cert: sign(t, tmpl, tmpl, key, key), Key: encodeKey(t, key)}
}

// CA issues certificates for a test.
type CA struct {
	// PEM is the CA's certificate, for the trust bundles of clients and
	// servers.
	PEM  []byte
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA is a fresh root CA called name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	fillIn(tmpl)
	der := sign(t, tmpl, tmpl, key, key)
	block, _ := pem.Decode(der)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{PEM: der, cert: cert, key: key}
}

// Issue signs a certificate for a new key: leaf says what it is for
// (names, addresses, URIs, key usages); a serial number and the validity
// are filled in when unset.
func (ca *CA) Issue(t testing.TB, leaf *x509.Certificate) Pair {
	t.Helper()
	key := newKey(t)
	fillIn(leaf)
	return Pair{Cert: sign(t, leaf, ca.cert, key, ca.key), Key: encodeKey(t, key)}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// fillIn sets a random serial number and the validity when unset.
func fillIn(c *x509.Certificate) {
	if c.SerialNumber == nil {
		serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
		if err != nil {
			serial = big.NewInt(time.Now().UnixNano())
		}
		c.SerialNumber = serial
	}
	if c.NotBefore.IsZero() {
		c.NotBefore = time.Now().Add(-time.Hour)
	}
	if c.NotAfter.IsZero() {
		c.NotAfter = time.Now().Add(24 * time.Hour)
	}
}

// sign makes the certificate tmpl for key's public half, signed by
// parent's key, PEM encoded.
func sign(t testing.TB, tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(t testing.TB, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}
