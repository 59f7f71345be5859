package xds

import (
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/meshcp/meshcp/pkg/config"
)

// A connection older than MaxConnectionAge is closed (a GOAWAY, then the
// grace period), and the client, reconnecting as it would through a
// Service to any replica, gets the full state on its new stream.
func TestMaxConnectionAgeClosesAndClientsReconnect(t *testing.T) {
	srv := startServer(t, []config.Config{virtualService("default", "reviews", "reviews")}, func(o *Options) {
		o.MaxConnectionAge, o.MaxConnectionAgeGrace = 300*time.Millisecond, 100*time.Millisecond
	})
	cc := dial(t, srv.Addr())
	s := openSotW(t, cc)
	s.send(&discoveryv3.DiscoveryRequest{Node: node("aged"), TypeUrl: vsType})
	first := s.recv()
	s.send(ack(first))
	opened := time.Now()
	if err := s.closed(); err == nil {
		t.Fatal("the stream ended without an error")
	}
	if age := time.Since(opened); age > 5*time.Second {
		t.Errorf("the connection lived %s, beyond its 300ms age and 100ms grace", age)
	}

	again := openSotW(t, cc)
	again.send(&discoveryv3.DiscoveryRequest{Node: node("aged"), TypeUrl: vsType})
	if got := decodeMCP(t, again.recv().Resources); len(got) != 1 {
		t.Errorf("after reconnecting the client got %v, want the one VirtualService", keys(got))
	}
}
