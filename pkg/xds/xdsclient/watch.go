package xdsclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	// The Envoy resource types, so their JSON can be printed.
	_ "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	mcp "istio.io/api/mcp/v1alpha1"

	// The Istio and other config kinds, so their specs can be printed.
	_ "github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/xds"
)

// Options say what to watch and where.
type Options struct {
	// Addr is the server, host:port.
	Addr string
	// TypeURL is the type watched, such as
	// "networking.istio.io/v1/VirtualService".
	TypeURL string
	// Names are the resources watched; none means every resource.
	Names []string
	// NodeID identifies the client to the server.
	NodeID string
	// Delta uses the incremental protocol instead of state of the world.
	Delta bool
	// ProxylessGRPC announces a proxyless gRPC client (GENERATOR=grpc in
	// the node metadata), for servers that generate per client kind.
	ProxylessGRPC bool
	// Count stops after this many responses; 0 watches until the context
	// ends.
	Count int
	// CAFile switches to TLS, trusting these CAs; CertFile and KeyFile are
	// the client certificate, ServerName overrides the name checked.
	CAFile, CertFile, KeyFile, ServerName string
}

// Update is one response as printed.
type Update struct {
	Type      string            `json:"type"`
	Version   string            `json:"version,omitempty"`
	Nonce     string            `json:"nonce"`
	Resources []json.RawMessage `json:"resources"`
	Removed   []string          `json:"removed,omitempty"`
	Received  time.Time         `json:"received"`
}

// Watch subscribes and writes each response to out as a JSON line, until
// ctx ends (nil error) or Count responses were printed.
func Watch(ctx context.Context, o Options, out io.Writer) error {
	if o.TypeURL == "" {
		return errors.New("xds watch: --type is required")
	}
	creds, err := o.credentials()
	if err != nil {
		return err
	}
	cc, err := grpc.NewClient(o.Addr, grpc.WithTransportCredentials(creds), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return fmt.Errorf("xds watch: %s: %w", o.Addr, err)
	}
	defer cc.Close()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(cc)
	node, err := o.node()
	if err != nil {
		return err
	}
	// The stream ends when ctx does, but does not carry its deadline to
	// the server, so that it is always ctx that ended first and a timeout
	// reads as one, not as a stream error.
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	var w watcher
	if o.Delta {
		w, err = startDelta(streamCtx, ads, node, o)
	} else {
		w, err = startSotW(streamCtx, ads, node, o)
	}
	if err != nil {
		return fmt.Errorf("xds watch: opening the stream to %s: %w", o.Addr, err)
	}
	enc := json.NewEncoder(out)
	for n := 0; o.Count == 0 || n < o.Count; n++ {
		u, err := w.next()
		if err != nil {
			switch {
			case ctx.Err() != nil && o.Count > 0:
				return fmt.Errorf("xds watch: %d of %d responses before %w", n, o.Count, context.Cause(ctx))
			case ctx.Err() != nil:
				return nil
			}
			return fmt.Errorf("xds watch: %w", err)
		}
		if err := enc.Encode(u); err != nil {
			return err
		}
	}
	return nil
}

// watcher is one protocol's stream: next receives, ACKs and decodes.
type watcher interface{ next() (*Update, error) }

func (o Options) node() (*corev3.Node, error) {
	id := o.NodeID
	if id == "" {
		host, _ := os.Hostname()
		id = "xds-watch~" + host
	}
	n := &corev3.Node{Id: id, UserAgentName: "meshcp-xds-watch"}
	if o.ProxylessGRPC {
		md, err := structpb.NewStruct(map[string]any{xds.GeneratorMetadataKey: "grpc"})
		if err != nil {
			return nil, err
		}
		n.Metadata = md
	}
	return n, nil
}

func (o Options) credentials() (credentials.TransportCredentials, error) {
	if o.CAFile == "" {
		if o.CertFile != "" {
			return nil, errors.New("xds watch: --cert needs --ca (TLS)")
		}
		return insecure.NewCredentials(), nil
	}
	pem, err := os.ReadFile(o.CAFile)
	if err != nil {
		return nil, fmt.Errorf("xds watch: reading --ca: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("xds watch: %s holds no PEM certificate", o.CAFile)
	}
	cfg := &tls.Config{RootCAs: roots, ServerName: o.ServerName, MinVersion: tls.VersionTLS12}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("xds watch: loading the client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}

type sotwWatcher struct {
	s grpc.BidiStreamingClient[discoveryv3.DiscoveryRequest, discoveryv3.DiscoveryResponse]
	o Options
}

func startSotW(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, node *corev3.Node, o Options) (watcher, error) {
	s, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	names := o.Names
	if len(names) == 0 {
		names = []string{"*"}
	}
	if err := s.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: o.TypeURL, ResourceNames: names}); err != nil {
		return nil, err
	}
	return &sotwWatcher{s: s, o: o}, nil
}

func (w *sotwWatcher) next() (*Update, error) {
	resp, err := w.s.Recv()
	if err != nil {
		return nil, err
	}
	names := w.o.Names
	if len(names) == 0 {
		names = []string{"*"}
	}
	if err := w.s.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: names}); err != nil {
		return nil, err
	}
	u := &Update{Type: resp.TypeUrl, Version: resp.VersionInfo, Nonce: resp.Nonce, Resources: []json.RawMessage{}, Received: time.Now()}
	for _, r := range resp.Resources {
		u.Resources = append(u.Resources, render("", "", r))
	}
	return u, nil
}

type deltaWatcher struct {
	s grpc.BidiStreamingClient[discoveryv3.DeltaDiscoveryRequest, discoveryv3.DeltaDiscoveryResponse]
}

func startDelta(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, node *corev3.Node, o Options) (watcher, error) {
	s, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	names := o.Names
	if len(names) == 0 {
		names = []string{"*"}
	}
	if err := s.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: o.TypeURL, ResourceNamesSubscribe: names}); err != nil {
		return nil, err
	}
	return &deltaWatcher{s: s}, nil
}

func (w *deltaWatcher) next() (*Update, error) {
	resp, err := w.s.Recv()
	if err != nil {
		return nil, err
	}
	if err := w.s.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}); err != nil {
		return nil, err
	}
	u := &Update{Type: resp.TypeUrl, Version: resp.SystemVersionInfo, Nonce: resp.Nonce, Resources: []json.RawMessage{}, Removed: resp.RemovedResources, Received: time.Now()}
	for _, r := range resp.Resources {
		u.Resources = append(u.Resources, render(r.Name, r.Version, r.Resource))
	}
	return u, nil
}

// render turns one resource into JSON: a config distribution Resource as
// {"name", "version", "labels", "annotations", "createTime", "spec"}, any
// other message in its proto3 JSON form. A body that cannot be decoded
// shows an error in its place instead of stopping the watch.
func render(name, version string, body *anypb.Any) json.RawMessage {
	var res mcp.Resource
	if body.MessageIs(&res) {
		if err := body.UnmarshalTo(&res); err != nil {
			return renderError(name, err)
		}
		m := res.GetMetadata()
		out := map[string]any{"name": m.GetName(), "version": m.GetVersion()}
		if version != "" {
			out["xdsVersion"] = version
		}
		if len(m.GetLabels()) > 0 {
			out["labels"] = m.GetLabels()
		}
		if len(m.GetAnnotations()) > 0 {
			out["annotations"] = m.GetAnnotations()
		}
		if m.GetCreateTime() != nil {
			out["createTime"] = m.GetCreateTime().AsTime()
		}
		if res.GetBody() != nil {
			spec, err := bodyJSON(res.GetBody())
			if err != nil {
				return renderError(m.GetName(), err)
			}
			out["spec"] = spec
		}
		b, _ := json.Marshal(out)
		return b
	}
	spec, err := bodyJSON(body)
	if err != nil {
		return renderError(name, err)
	}
	out := map[string]any{"resource": spec}
	if name != "" {
		out["name"], out["version"] = name, version
	}
	b, _ := json.Marshal(out)
	return b
}

// bodyJSON is the proto3 JSON of the message inside an Any (a Struct body
// is plain JSON already).
func bodyJSON(a *anypb.Any) (json.RawMessage, error) {
	m, err := a.UnmarshalNew()
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", a.GetTypeUrl(), err)
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func renderError(name string, err error) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"name": name, "error": err.Error()})
	return b
}
