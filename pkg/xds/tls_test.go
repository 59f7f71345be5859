package xds

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// testCA issues certificates for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "meshcp test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a PEM certificate and key signed by the CA.
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func writeTemp(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTLSRequiresAValidClientCertificate(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	serverCert, serverKey := ca.issue(t, "meshcp", x509.ExtKeyUsageServerAuth)
	srv := startServer(t, bookinfo(), func(o *Options) {
		o.TLSAddr = "127.0.0.1:0"
		o.TLSCertFile = writeTemp(t, dir, "cert.pem", serverCert)
		o.TLSKeyFile = writeTemp(t, dir, "key.pem", serverKey)
		o.ClientCAFile = writeTemp(t, dir, "ca.pem", ca.pem)
	})
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)

	clientCert, clientKey := ca.issue(t, "proxy", x509.ExtKeyUsageClientAuth)
	good, err := tls.X509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	other := newTestCA(t)
	strangerCert, strangerKey := other.issue(t, "stranger", x509.ExtKeyUsageClientAuth)
	stranger, _ := tls.X509KeyPair(strangerCert, strangerKey)

	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{"signed client certificate", []tls.Certificate{good}, true},
		{"no client certificate", nil, false},
		{"certificate of another CA", []tls.Certificate{stranger}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creds := credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: tc.certs, MinVersion: tls.VersionTLS12})
			cc, err := grpc.NewClient(srv.TLSAddr(), grpc.WithTransportCredentials(creds))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			s := openSotWOrError(t, cc)
			if s == nil {
				if tc.ok {
					t.Fatal("a valid client was refused")
				}
				return
			}
			s.send(&discoveryv3.DiscoveryRequest{Node: node("tls"), TypeUrl: vsType})
			if tc.ok {
				if len(s.recv().Resources) != 3 {
					t.Fatal("no config over TLS")
				}
				return
			}
			if err := s.closed(); err == nil {
				t.Fatal("a client without a valid certificate was served")
			}
		})
	}
	// The plaintext port still serves.
	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("plain"), TypeUrl: vsType})
	s.recv()
}

// openSotWOrError opens a stream, returning nil if that fails (the TLS
// handshake can fail before or after the stream is opened).
func openSotWOrError(t *testing.T, cc *grpc.ClientConn) *sotwStream {
	if _, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(t.Context()); err != nil {
		return nil
	}
	return openSotW(t, cc)
}

func TestNewStreamCapQueuesInsteadOfRefusing(t *testing.T) {
	srv := startServer(t, bookinfo(), func(o *Options) { o.MaxNewStreamsPerSecond = 20 })
	cc := dial(t, srv.Addr())
	const clients = 40
	start := time.Now()
	streams := make([]*sotwStream, clients)
	for i := range streams {
		streams[i] = openSotW(t, cc)
		streams[i].send(&discoveryv3.DiscoveryRequest{Node: node("c"), TypeUrl: vsType})
	}
	for _, s := range streams {
		if len(s.recv().Resources) != 3 {
			t.Fatal("a client got no config")
		}
	}
	// 20 are admitted at once (the burst), the other 20 over a second.
	if elapsed := time.Since(start); elapsed < 500*time.Millisecond {
		t.Errorf("40 streams at 20/s were all admitted in %s", elapsed)
	}
}
