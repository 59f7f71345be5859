package xds

import (
	"errors"
	"fmt"
	"io"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
)

// nodeRequest is a request of either protocol.
type nodeRequest[Req any] interface {
	*Req
	GetNode() *corev3.Node
}

// serveStream runs a stream of either protocol: the first request opens
// the connection (it must name the node), then every request is handled
// in turn until the client goes or handle fails.
func serveStream[Req, Resp any, P nodeRequest[Req]](s *Server, stream grpc.BidiStreamingServer[Req, Resp], protocol string, bind func(*connection), handle func(*connection, P) error) error {
	first, err := stream.Recv()
	if err != nil {
		return recvError(err)
	}
	c, done, err := s.openConnection(stream.Context(), protocol, P(first).GetNode(), bind)
	if err != nil {
		return err
	}
	defer done()
	for req := first; ; {
		if err := handle(c, P(req)); err != nil {
			return err
		}
		if req, err = stream.Recv(); err != nil {
			return recvError(err)
		}
	}
}

// nackMessage is the error of a NACK, "" for an ACK. A NACK without a
// message is still a NACK.
func nackMessage(st *rpcstatus.Status) string {
	switch {
	case st == nil:
		return ""
	case st.GetMessage() == "":
		return fmt.Sprintf("rejected (code %d, no message)", st.GetCode())
	default:
		return st.GetMessage()
	}
}

// recvError is what a stream returns when reading fails: nothing for a
// client that closed its side.
func recvError(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
