package xds

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/meshcp/meshcp/test/testcert"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// issue is a certificate of ca for name, for usage, valid for 127.0.0.1.
func issue(t *testing.T, ca *testcert.CA, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	p := ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}})
	return p.Cert, p.Key
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
	ca := testcert.NewCA(t, "meshcp test CA")
	dir := t.TempDir()
	serverCert, serverKey := issue(t, ca, "meshcp", x509.ExtKeyUsageServerAuth)
	srv := startServer(t, bookinfo(), func(o *Options) {
		o.TLSAddr = "127.0.0.1:0"
		o.TLSCertFile = writeTemp(t, dir, "cert.pem", serverCert)
		o.TLSKeyFile = writeTemp(t, dir, "key.pem", serverKey)
		o.ClientCAFile = writeTemp(t, dir, "ca.pem", ca.PEM)
	})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)

	clientCert, clientKey := issue(t, ca, "proxy", x509.ExtKeyUsageClientAuth)
	good, err := tls.X509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	other := testcert.NewCA(t, "another CA")
	strangerCert, strangerKey := issue(t, other, "stranger", x509.ExtKeyUsageClientAuth)
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
