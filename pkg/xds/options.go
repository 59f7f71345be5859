package xds

import (
	"errors"
	"flag"
	"fmt"
	"time"
)

// Options configure the xDS server.
type Options struct {
	// Addr is the plaintext gRPC listener (istiod's 15010), for local use
	// and tests; empty disables it.
	Addr string
	// TLSAddr is the TLS listener (istiod's 15012). It serves only when
	// TLSCertFile and TLSKeyFile are set.
	TLSAddr     string
	TLSCertFile string
	TLSKeyFile  string
	// ClientCAFile, when set, makes the TLS listener require a client
	// certificate signed by one of its CAs; a client without one is
	// refused during the handshake.
	ClientCAFile string

	// Debounce shapes the push pipeline.
	Debounce DebounceOptions
	// PushConcurrency bounds how many connections are pushed at once.
	PushConcurrency int
	// MaxNewStreamsPerSecond caps how fast new streams are admitted, with
	// a burst of as many; streams beyond it wait (up to StreamAdmitTimeout)
	// rather than being refused. Zero admits every stream at once.
	MaxNewStreamsPerSecond float64
	StreamAdmitTimeout     time.Duration
	// MaxRecvMessageSize bounds a request; MaxSendMessageSize a response.
	MaxRecvMessageSize int
	MaxSendMessageSize int
	// MaxResponseSize bounds the resources of one response, which is what
	// grpc-go clients accept by default (4 MiB). Larger answers are split
	// where the protocol allows (delta responses, and state-of-the-world
	// EDS and RDS, whose responses need not carry every resource); a
	// state-of-the-world response that must carry them all is not sent,
	// and the error is logged and shown on /debug/syncz.
	MaxResponseSize int
	// KeepaliveTime is how long a connection may be idle before the
	// server pings it; KeepaliveTimeout how long the ping may go
	// unanswered before the connection is closed.
	KeepaliveTime    time.Duration
	KeepaliveTimeout time.Duration
	// MaxConnectionAge closes a connection this long after it opened
	// (gracefully: a GOAWAY, then MaxConnectionAgeGrace for the stream to
	// end), so clients reconnect through the Service and spread over the
	// replicas, including ones added since they connected. Zero keeps
	// connections for ever.
	MaxConnectionAge      time.Duration
	MaxConnectionAgeGrace time.Duration
}

// DefaultOptions are istiod-like: ports 15010 and 15012, a 100ms quiet
// period bounded by 10s, 100 connections pushed at once, 4 MiB requests.
// New streams are capped at 10000 per second: enough that thousands of
// clients arriving at once all connect within a second (istiod's default
// of 25 per second refuses most of them), while a reconnect storm still
// queues instead of starving pushes.
func DefaultOptions() Options {
	return Options{
		Addr:                   ":15010",
		TLSAddr:                ":15012",
		Debounce:               DebounceOptions{Quiet: 100 * time.Millisecond, Max: 10 * time.Second},
		PushConcurrency:        100,
		MaxNewStreamsPerSecond: 10000,
		StreamAdmitTimeout:     30 * time.Second,
		MaxRecvMessageSize:     4 << 20,
		MaxSendMessageSize:     64 << 20,
		MaxResponseSize:        4 << 20,
		KeepaliveTime:          30 * time.Second,
		KeepaliveTimeout:       10 * time.Second,
		// istiod's default: long enough that reconnects are rare, short
		// enough that a scale-up takes load within the hour.
		MaxConnectionAge:      30 * time.Minute,
		MaxConnectionAgeGrace: 10 * time.Second,
	}
}

// minResponseSize is the smallest MaxResponseSize: room for the response's
// own fields beside the resources.
const minResponseSize = 64 << 10

// RegisterFlags adds the options to a flag set, with o's values as
// defaults, so the daemon's command line needs one line for all of them.
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Addr, "xds-addr", o.Addr, "address of the plaintext xDS (ADS) gRPC server; empty disables it")
	fs.StringVar(&o.TLSAddr, "xds-tls-addr", o.TLSAddr, "address of the TLS xDS gRPC server (served when --xds-tls-cert and --xds-tls-key are set)")
	fs.StringVar(&o.TLSCertFile, "xds-tls-cert", o.TLSCertFile, "PEM certificate (chain) of the TLS xDS server")
	fs.StringVar(&o.TLSKeyFile, "xds-tls-key", o.TLSKeyFile, "PEM private key of the TLS xDS server")
	fs.StringVar(&o.ClientCAFile, "xds-client-ca", o.ClientCAFile, "PEM CA bundle: when set, TLS xDS clients must present a certificate it signed")
	fs.DurationVar(&o.Debounce.Quiet, "push-debounce", o.Debounce.Quiet, "quiet period: a push waits until no change arrived for this long")
	fs.DurationVar(&o.Debounce.Max, "push-debounce-max", o.Debounce.Max, "a push waits at most this long after the first change it carries")
	fs.IntVar(&o.PushConcurrency, "push-concurrency", o.PushConcurrency, "how many connections are pushed at once")
	fs.Float64Var(&o.MaxNewStreamsPerSecond, "xds-max-new-streams", o.MaxNewStreamsPerSecond, "new xDS streams admitted per second (beyond it they wait); 0 for no cap")
	fs.IntVar(&o.MaxRecvMessageSize, "xds-max-recv-message-size", o.MaxRecvMessageSize, "largest xDS request accepted, in bytes")
	fs.IntVar(&o.MaxSendMessageSize, "xds-max-send-message-size", o.MaxSendMessageSize, "largest xDS response sent, in bytes")
	fs.IntVar(&o.MaxResponseSize, "xds-max-response-size", o.MaxResponseSize, "largest set of resources in one xDS response, in bytes (grpc-go clients accept 4 MiB); larger answers are split where the protocol allows")
	fs.DurationVar(&o.KeepaliveTime, "xds-keepalive-time", o.KeepaliveTime, "idle time before the server pings an xDS connection")
	fs.DurationVar(&o.KeepaliveTimeout, "xds-keepalive-timeout", o.KeepaliveTimeout, "how long a keepalive ping may go unanswered before the connection is closed")
	fs.DurationVar(&o.MaxConnectionAge, "xds-max-connection-age", o.MaxConnectionAge, "close an xDS connection this long after it opened, so clients rebalance over the replicas; 0 never closes")
	fs.DurationVar(&o.MaxConnectionAgeGrace, "xds-max-connection-age-grace", o.MaxConnectionAgeGrace, "how long a connection closed for its age may take to finish its stream")
}

// Validate rejects options that cannot work.
func (o Options) Validate() error {
	var errs []error
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--xds-tls-cert and --xds-tls-key go together"))
	}
	if o.ClientCAFile != "" && o.TLSCertFile == "" {
		errs = append(errs, errors.New("--xds-client-ca needs --xds-tls-cert and --xds-tls-key"))
	}
	if o.Debounce.Quiet < 0 || o.Debounce.Max < 0 {
		errs = append(errs, errors.New("--push-debounce and --push-debounce-max must not be negative"))
	}
	if o.Debounce.Max > 0 && o.Debounce.Quiet > o.Debounce.Max {
		errs = append(errs, fmt.Errorf("--push-debounce %s is longer than --push-debounce-max %s", o.Debounce.Quiet, o.Debounce.Max))
	}
	if o.PushConcurrency < 1 {
		errs = append(errs, errors.New("--push-concurrency must be at least 1"))
	}
	if o.MaxNewStreamsPerSecond < 0 {
		errs = append(errs, errors.New("--xds-max-new-streams must not be negative"))
	}
	if o.MaxConnectionAge < 0 || o.MaxConnectionAgeGrace < 0 {
		errs = append(errs, errors.New("--xds-max-connection-age and --xds-max-connection-age-grace must not be negative"))
	}
	if o.MaxRecvMessageSize < 1 || o.MaxSendMessageSize < 1 {
		errs = append(errs, errors.New("--xds-max-recv-message-size and --xds-max-send-message-size must be positive"))
	}
	if o.MaxResponseSize < minResponseSize || o.MaxResponseSize > o.MaxSendMessageSize {
		errs = append(errs, fmt.Errorf("--xds-max-response-size must be between %d and --xds-max-send-message-size (%d)", minResponseSize, o.MaxSendMessageSize))
	}
	return errors.Join(errs...)
}
