// Package xdstest drives ADS streams from tests: a client connection to a
// server under test, and a stream whose responses are received in the
// background and buffered, so that a test waits for the next one with a
// deadline instead of blocking forever in Recv.
package xdstest

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Dial connects a plaintext gRPC client to addr, closed when the test
// ends.
func Dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// Stream is one bidirectional stream of either ADS protocol.
type Stream[Req, Resp any] struct {
	t      testing.TB
	s      grpc.BidiStreamingClient[Req, Resp]
	cancel context.CancelFunc
	got    chan *Resp
	err    chan error
}

// Open starts a stream with open (a generated client's method) and
// receives its responses until the stream ends or the test does.
func Open[Req, Resp any](t testing.TB, open func(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[Req, Resp], error)) *Stream[Req, Resp] {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := open(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	st := &Stream[Req, Resp]{t: t, s: s, cancel: cancel, got: make(chan *Resp, 100), err: make(chan error, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := s.Recv()
			if err != nil {
				st.err <- err
				return
			}
			st.got <- m
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return st
}

// Send sends a request, failing the test if it cannot.
func (s *Stream[Req, Resp]) Send(req *Req) {
	s.t.Helper()
	if err := s.s.Send(req); err != nil {
		s.t.Fatalf("send: %v", err)
	}
}

// Next returns the next response, or the error the stream ended with;
// it fails the test when neither comes within timeout.
func (s *Stream[Req, Resp]) Next(timeout time.Duration) (*Resp, error) {
	s.t.Helper()
	select {
	case m := <-s.got:
		return m, nil
	case err := <-s.err:
		return nil, err
	case <-time.After(timeout):
		s.t.Fatalf("no response in %s", timeout)
	}
	return nil, nil
}

// Recv returns the next response, failing the test if the stream ends or
// none comes within timeout.
func (s *Stream[Req, Resp]) Recv(timeout time.Duration) *Resp {
	s.t.Helper()
	m, err := s.Next(timeout)
	if err != nil {
		s.t.Fatalf("stream ended: %v", err)
	}
	return m
}

// Poll returns what has arrived, without waiting: a response, or the
// error the stream ended with; ok is false when nothing has.
func (s *Stream[Req, Resp]) Poll() (resp *Resp, err error, ok bool) {
	select {
	case m := <-s.got:
		return m, nil, true
	case err := <-s.err:
		return nil, err, true
	default:
		return nil, nil, false
	}
}

// Cancel ends the stream from the client's side, as a client that goes
// away does.
func (s *Stream[Req, Resp]) Cancel() { s.cancel() }
