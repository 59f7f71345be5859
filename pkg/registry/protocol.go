package registry

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Protocol is what a service port speaks, as Istio names it. It decides
// what a proxy does with the port: HTTP-like protocols get routes, the rest
// a TCP proxy.
type Protocol string

// The protocols Istio knows. Unsupported is a port whose protocol could not
// be told from its declaration; Istio sniffs such ports, and builders treat
// them as TCP.
const (
	HTTP        Protocol = "HTTP"
	HTTP2       Protocol = "HTTP2"
	GRPC        Protocol = "GRPC"
	GRPCWeb     Protocol = "GRPC-Web"
	HTTPS       Protocol = "HTTPS"
	TLS         Protocol = "TLS"
	TCP         Protocol = "TCP"
	UDP         Protocol = "UDP"
	Mongo       Protocol = "Mongo"
	Redis       Protocol = "Redis"
	MySQL       Protocol = "MySQL"
	Unsupported Protocol = "UnsupportedProtocol"
)

// IsHTTP reports whether the protocol carries HTTP requests that routes
// apply to.
func (p Protocol) IsHTTP() bool {
	switch p {
	case HTTP, HTTP2, GRPC, GRPCWeb:
		return true
	}
	return false
}

// IsHTTP2 reports whether the protocol needs HTTP/2 upstream.
func (p Protocol) IsHTTP2() bool { return p == HTTP2 || p == GRPC }

// ParseProtocol reads a protocol name as Istio does, ignoring case: "http",
// "HTTP2", "grpc-web", "tls"... An unknown name is Unsupported.
func ParseProtocol(name string) Protocol {
	switch strings.ToLower(name) {
	case "http", "http_proxy":
		return HTTP
	case "http2":
		return HTTP2
	case "grpc":
		return GRPC
	case "grpc-web":
		return GRPCWeb
	case "https":
		return HTTPS
	case "tls":
		return TLS
	case "tcp":
		return TCP
	case "udp":
		return UDP
	case "mongo":
		return Mongo
	case "redis":
		return Redis
	case "mysql":
		return MySQL
	}
	return Unsupported
}

// appProtocols are the Kubernetes-defined appProtocol values that are not
// plain protocol names.
var appProtocols = map[string]Protocol{
	"kubernetes.io/h2c": HTTP2,
	"kubernetes.io/ws":  HTTP,
	"kubernetes.io/wss": HTTPS,
}

// KubernetesPortProtocol tells the protocol of a Kubernetes Service (or
// EndpointSlice) port the way Istio does: a UDP or SCTP port is UDP or
// unsupported; otherwise appProtocol decides if it names a protocol, then
// the port name (its part before the first "-": "http-api" is HTTP,
// "grpc-web" is gRPC-Web), and a port that says neither is Unsupported.
func KubernetesPortProtocol(kubeProtocol corev1.Protocol, appProtocol *string, name string) Protocol {
	switch kubeProtocol {
	case corev1.ProtocolUDP:
		return UDP
	case corev1.ProtocolSCTP:
		return Unsupported
	}
	if appProtocol != nil && *appProtocol != "" {
		if p, ok := appProtocols[strings.ToLower(*appProtocol)]; ok {
			return p
		}
		if p := ParseProtocol(*appProtocol); p != Unsupported {
			return p
		}
	}
	return protocolFromPortName(name)
}

// protocolFromPortName reads Istio's port naming convention:
// "<protocol>[-<suffix>]".
func protocolFromPortName(name string) Protocol {
	lower := strings.ToLower(name)
	if lower == "grpc-web" || strings.HasPrefix(lower, "grpc-web-") {
		return GRPCWeb
	}
	prefix, _, _ := strings.Cut(lower, "-")
	return ParseProtocol(prefix)
}
