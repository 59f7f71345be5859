package xds

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"
)

// Every response stays under the size limit: delta responses and
// state-of-the-world EDS are split, a state-of-the-world CDS that would
// need two responses is not sent and /debug/syncz says why, and a
// resource too big for any response is left out, named.
func TestResponsesStayUnderTheSizeLimit(t *testing.T) {
	const limit = minResponseSize
	big := strings.Repeat("x", 20<<10)
	bodies := map[string]string{}
	var names []string
	for i := range 8 {
		name := fmt.Sprintf("r%d", i)
		bodies[name] = name + "=" + big
		names = append(names, name)
	}
	eds, cds, delta := newMapGenerator(bodies), newMapGenerator(bodies), newMapGenerator(bodies)
	delta.set("huge", "huge="+strings.Repeat("y", limit))
	srv := startServer(t, nil, func(o *Options) { o.MaxResponseSize = limit }, func(s *Server) {
		s.Generators().Register(EndpointType, eds)
		s.Generators().Register(ClusterType, cds)
		s.Generators().Register(RouteType, delta)
	})

	s := openSotW(t, dial(t, srv.Addr()))
	s.send(&discoveryv3.DiscoveryRequest{Node: node("sotw"), TypeUrl: EndpointType, ResourceNames: names})
	got := map[string]string{}
	for len(got) < len(names) {
		resp := s.recv()
		if size := proto.Size(resp); size > limit {
			t.Errorf("a response of %d bytes, over %d", size, limit)
		}
		for n, b := range bodiesOfResponse(t, resp) {
			got[n] = b
		}
		s.send(ack(resp, names...))
	}
	s.send(&discoveryv3.DiscoveryRequest{TypeUrl: ClusterType})
	sentinel(t, s, "example.com/Unknown")
	var dump syncz
	getJSON(t, srv, "/debug/syncz", &dump)
	for _, ts := range dump.Connections[0].Types {
		if ts.TypeURL == ClusterType && (ts.Sent != nil || ts.LastError == nil || !strings.Contains(ts.LastError.Error, "must carry them all")) {
			t.Errorf("CDS over the limit: sent %+v, error %+v", ts.Sent, ts.LastError)
		}
	}
	if n := srv.logs.Count("response not sent as generated", "must carry them all"); n != 1 {
		t.Errorf("the refusal was logged %d times", n)
	}

	d := openDelta(t, dial(t, srv.Addr()))
	d.send(&discoveryv3.DeltaDiscoveryRequest{Node: node("delta"), TypeUrl: RouteType})
	held := 0
	for held < len(names) {
		resp := d.recv()
		if size := proto.Size(resp); size > limit {
			t.Errorf("a delta response of %d bytes, over %d", size, limit)
		}
		for _, r := range resp.Resources {
			if r.Name == "huge" {
				t.Error("a resource bigger than any response was sent")
			}
		}
		held += len(resp.Resources)
		d.send(deltaAck(resp))
	}
	deltaSentinel(t, d, "example.com/Unknown")
	var one syncz
	getJSON(t, srv, "/debug/syncz?node=delta", &one)
	if e := one.Connections[0].Types[0].LastError; e == nil || !strings.Contains(e.Error, "huge (") {
		t.Errorf("the resource left out is not named on syncz: %+v", e)
	}
	if code := getStatus(srv, "/debug/syncz"); code != http.StatusOK {
		t.Errorf("syncz answered %d", code)
	}
}

func TestChunkKeepsOrderAndSharesWhatFits(t *testing.T) {
	mk := func(name string, size int) *Resource { return &Resource{name: name, size: size} }
	room := 10000 + responseOverhead
	fits := []*Resource{mk("a", 3000), mk("b", 3000)}
	if parts, tooBig := chunk(fits, room); len(parts) != 1 || &parts[0][0] != &fits[0] || tooBig != nil {
		t.Errorf("what fits should come back as it is: %v %v", parts, tooBig)
	}
	parts, tooBig := chunk([]*Resource{mk("a", 6000), mk("b", 6000), mk("c", 20000), mk("d", 3000)}, room)
	var got []string
	for _, p := range parts {
		got = append(got, fmt.Sprint(resourceNames(p)))
	}
	if strings.Join(got, " ") != "[a] [b d]" || len(tooBig) != 1 || tooBig[0].name != "c" {
		t.Errorf("parts %v, too big %v", got, resourceNames(tooBig))
	}
}
