package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"
)

// clientKindEnv picks the synthetic clients' implementation: "wire" (the
// default) speaks gRPC over HTTP/2 frames itself, one goroutine and a few
// kilobytes per client, so that the clients, which share the 2 cores with
// the daemon, cost little next to it; "grpc" makes every client a full
// grpc-go ClientConn (resolver, balancer, transport: seven goroutines and
// about twice the daemon's CPU while connecting).
const clientKindEnv = "MESHCP_LOAD_CLIENT"

// clientKind is the synthetic clients' kind the environment asks for.
func clientKind() string {
	if os.Getenv(clientKindEnv) == "grpc" {
		return "grpc"
	}
	return "wire"
}

// adsMethod is the HTTP/2 path of an ADS method.
func adsMethod(delta bool) string {
	if delta {
		return "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources"
	}
	return "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
}

// wireWindow is the flow-control window the wire client gives the server,
// per stream and per connection, fixed as Envoy keeps it.
const wireWindow = 1 << 20

// wireStream is one gRPC bidirectional stream spoken directly in HTTP/2
// frames on its own connection, by one goroutine: it answers the server's
// SETTINGS and PINGs, returns flow-control credit, and frames and unframes
// gRPC messages. Send and Recv must be called from that one goroutine.
type wireStream[Req, Resp proto.Message] struct {
	conn    net.Conn
	out     *bufio.Writer
	fr      *http2.Framer
	newResp func() Resp

	pending  []byte // received bytes of messages not yet returned
	consumed uint32 // received DATA not yet credited back to the server
	creditAt uint32 // how much consumed DATA is credited back at once
	stop     func() bool
}

// dialWire opens a connection to addr and starts the stream of method on
// it; closing ctx closes the connection. The server gets flow-control
// credit back once creditAt bytes were received (0: half the window).
func dialWire[Req, Resp proto.Message](ctx context.Context, addr, method string, creditAt uint32, newResp func() Resp) (*wireStream[Req, Resp], error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	if creditAt == 0 {
		creditAt = wireWindow / 2
	}
	s := &wireStream[Req, Resp]{conn: conn, out: bufio.NewWriterSize(conn, 4<<10), newResp: newResp, creditAt: creditAt}
	s.fr = http2.NewFramer(s.out, bufio.NewReaderSize(conn, 8<<10))
	s.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	s.stop = context.AfterFunc(ctx, func() { conn.Close() })
	if err := s.start(addr, method); err != nil {
		s.close()
		return nil, fmt.Errorf("starting %s on %s: %w", method, addr, err)
	}
	return s, nil
}

func (s *wireStream[Req, Resp]) start(authority, method string) error {
	if _, err := s.out.WriteString(http2.ClientPreface); err != nil {
		return err
	}
	if err := s.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: wireWindow}); err != nil {
		return err
	}
	if err := s.fr.WriteWindowUpdate(0, wireWindow-65535); err != nil {
		return err
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", method}, {":authority", authority},
		{"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return err
		}
	}
	if err := s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		return err
	}
	return s.out.Flush()
}

// Send writes one request as a gRPC message.
func (s *wireStream[Req, Resp]) Send(req Req) error {
	body, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	msg := make([]byte, 5+len(body))
	binary.BigEndian.PutUint32(msg[1:5], uint32(len(body)))
	copy(msg[5:], body)
	if err := s.fr.WriteData(1, false, msg); err != nil {
		return err
	}
	return s.out.Flush()
}

// Recv returns the next response, reading and answering frames until one
// is whole. The end of the stream is an error naming the gRPC status.
func (s *wireStream[Req, Resp]) Recv() (Resp, error) {
	var zero Resp
	for {
		if len(s.pending) >= 5 {
			size := int(binary.BigEndian.Uint32(s.pending[1:5]))
			if len(s.pending) >= 5+size {
				resp := s.newResp()
				if err := proto.Unmarshal(s.pending[5:5+size], resp); err != nil {
					return zero, fmt.Errorf("decoding a response: %w", err)
				}
				s.pending = s.pending[5+size:]
				return resp, nil
			}
		}
		if err := s.readFrame(); err != nil {
			return zero, err
		}
	}
}

// readFrame reads one frame and does what it asks.
func (s *wireStream[Req, Resp]) readFrame() error {
	frame, err := s.fr.ReadFrame()
	if err != nil {
		return err
	}
	switch f := frame.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		if err := s.fr.WriteSettingsAck(); err != nil {
			return err
		}
		return s.out.Flush()
	case *http2.PingFrame:
		if f.IsAck() {
			return nil
		}
		if err := s.fr.WritePing(true, f.Data); err != nil {
			return err
		}
		return s.out.Flush()
	case *http2.DataFrame:
		s.pending = append(s.pending, f.Data()...)
		s.consumed += f.Length
		if s.consumed >= s.creditAt {
			if err := s.fr.WriteWindowUpdate(0, s.consumed); err != nil {
				return err
			}
			if err := s.fr.WriteWindowUpdate(1, s.consumed); err != nil {
				return err
			}
			s.consumed = 0
			return s.out.Flush()
		}
		return nil
	case *http2.MetaHeadersFrame:
		if status := f.PseudoValue("status"); status != "" && status != "200" {
			return fmt.Errorf("HTTP status %s", status)
		}
		if f.StreamEnded() || hasField(f, "grpc-status") {
			return fmt.Errorf("stream ended: grpc-status %s: %s", field(f, "grpc-status"), field(f, "grpc-message"))
		}
		return nil
	case *http2.RSTStreamFrame:
		return fmt.Errorf("stream reset: %v", f.ErrCode)
	case *http2.GoAwayFrame:
		return fmt.Errorf("connection going away: %v %s", f.ErrCode, f.DebugData())
	}
	return nil
}

func hasField(f *http2.MetaHeadersFrame, name string) bool {
	for _, h := range f.RegularFields() {
		if h.Name == name {
			return true
		}
	}
	return false
}

func field(f *http2.MetaHeadersFrame, name string) string {
	for _, h := range f.RegularFields() {
		if h.Name == name {
			return h.Value
		}
	}
	return ""
}

// close ends the connection.
func (s *wireStream[Req, Resp]) close() {
	s.stop()
	s.conn.Close() //nolint:errcheck // the connection is gone either way
}
