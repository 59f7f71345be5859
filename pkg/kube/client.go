package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	istioclient "istio.io/client-go/pkg/clientset/versioned"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// Clientsets are the API clients a Client reads through. A nil clientset
// makes collections of the kinds it serves fail with an error, so a Client
// can be built for a subset of the APIs (a test that needs only Pods, say).
type Clientsets struct {
	// Kube serves the built-in kinds: Pods, Services, EndpointSlices...
	Kube kubernetes.Interface
	// Istio serves networking.istio.io and security.istio.io.
	Istio istioclient.Interface
	// GatewayAPI serves gateway.networking.k8s.io.
	GatewayAPI gatewayclient.Interface
	// Extensions serves CustomResourceDefinitions, which the Client watches
	// to know when the Istio and Gateway API kinds are installed.
	Extensions apiextensionsclient.Interface
	// Metadata serves metadata-only collections (NewMetadataCollection).
	Metadata metadata.Interface
}

// Client is meshcp's connection to one Kubernetes cluster: the clientsets it
// reads through and the informers it runs for its collections.
//
// Informers are shared: collections of the same kind and Filter read one
// informer, started by the first of them and stopped when the last one is
// stopped, or when the Client is shut down. A Client is safe for
// concurrent use.
type Client struct {
	kube       kubernetes.Interface
	istio      istioclient.Interface
	gatewayAPI gatewayclient.Interface
	extensions apiextensionsclient.Interface
	metadata   metadata.Interface

	logger     *slog.Logger
	transforms transforms
	kinds      registry

	// ctx is the lifetime of every informer of the client; Shutdown cancels
	// it and waits for the informer goroutines, counted by running.
	ctx     context.Context
	cancel  context.CancelFunc
	running sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	informers map[informerKey]*sharedInformer
	crds      *crdWatcher // started by the first collection of a CRD kind
}

// ClientOption configures a Client at construction.
type ClientOption func(*clientOptions)

type clientOptions struct {
	logger     *slog.Logger
	transforms transforms
}

// WithLogger sets the logger of the Client and, unless a collection is
// given its own with krt.WithLogger, of its collections. The default is
// slog.Default().
func WithLogger(l *slog.Logger) ClientOption {
	return func(o *clientOptions) { o.logger = l }
}

// NewClient connects to the cluster that cfg describes. It only builds
// clientsets; nothing is sent to the API server until a collection starts
// an informer, so an unreachable cluster shows as collections that do not
// sync (and warnings in the log), not as an error here.
//
// Built-in kinds are read as protobuf, which the API server encodes and
// client-go decodes much faster than JSON; custom resources do not support
// protobuf and are read as JSON.
func NewClient(cfg *rest.Config, opts ...ClientOption) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("creating a Kubernetes client: no rest.Config")
	}
	protoCfg := rest.CopyConfig(cfg)
	protoCfg.ContentType = runtime.ContentTypeProtobuf
	protoCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	kube, err := kubernetes.NewForConfig(protoCfg)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes clientset for %s: %w", cfg.Host, err)
	}
	istio, err := istioclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the Istio clientset for %s: %w", cfg.Host, err)
	}
	gateway, err := gatewayclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the Gateway API clientset for %s: %w", cfg.Host, err)
	}
	extensions, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the apiextensions clientset for %s: %w", cfg.Host, err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the metadata client for %s: %w", cfg.Host, err)
	}
	return NewClientFromClientsets(Clientsets{
		Kube:       kube,
		Istio:      istio,
		GatewayAPI: gateway,
		Extensions: extensions,
		Metadata:   meta,
	}, opts...), nil
}

// NewClientFromClientsets returns a Client reading through the given
// clientsets: fakes in unit tests (see package kubefake), or clientsets
// built with settings NewClient does not offer.
func NewClientFromClientsets(cs Clientsets, opts ...ClientOption) *Client {
	o := clientOptions{logger: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{
		kube:       cs.Kube,
		istio:      cs.Istio,
		gatewayAPI: cs.GatewayAPI,
		extensions: cs.Extensions,
		metadata:   cs.Metadata,
		logger:     o.logger,
		transforms: o.transforms,
		kinds:      supportedKinds,
		ctx:        ctx,
		cancel:     cancel,
		informers:  map[informerKey]*sharedInformer{},
	}
}

// Kube returns the Kubernetes clientset, for writes and one-off reads.
func (c *Client) Kube() kubernetes.Interface { return c.kube }

// Istio returns the Istio clientset.
func (c *Client) Istio() istioclient.Interface { return c.istio }

// GatewayAPI returns the Gateway API clientset.
func (c *Client) GatewayAPI() gatewayclient.Interface { return c.gatewayAPI }

// Extensions returns the apiextensions clientset, which serves
// CustomResourceDefinitions.
func (c *Client) Extensions() apiextensionsclient.Interface { return c.extensions }

// Metadata returns the metadata-only client.
func (c *Client) Metadata() metadata.Interface { return c.metadata }

// Shutdown stops every informer of the client and waits for their
// goroutines to end. Collections built on them keep their last state but
// receive nothing more; new collections fail. Close the stop channels of
// the collections first: a collection stopped after Shutdown is fine, but
// one still running sees its source go quiet without being told.
// Shutdown is idempotent.
func (c *Client) Shutdown() {
	c.mu.Lock()
	c.closed = true
	c.informers = map[informerKey]*sharedInformer{}
	c.mu.Unlock()
	c.cancel()
	c.running.Wait()
}

// errShutDown is returned for collections asked of a Client after
// Shutdown.
var errShutDown = errors.New("the kube client is shut down")
