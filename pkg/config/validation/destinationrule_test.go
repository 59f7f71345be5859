package validation

import (
	"testing"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"
	typev1beta1 "istio.io/api/type/v1beta1"
)

const validDestinationRule = `
host: reviews.prod.svc.cluster.local
trafficPolicy:
  loadBalancer:
    consistentHash:
      httpCookie: {name: session, ttl: 0s}
      ringHash: {minimumRingSize: 1024}
    localityLbSetting:
      distribute:
      - from: us-west/zone1/*
        to: {"us-west/zone1/*": 80, "us-west/zone2/*": 20}
  connectionPool:
    tcp: {maxConnections: 100, connectTimeout: 0.030s, tcpKeepalive: {time: 7200s, interval: 75s}}
    http: {http1MaxPendingRequests: 10, maxRequestsPerConnection: 10, idleTimeout: 60s}
  outlierDetection:
    consecutive5xxErrors: 7
    interval: 300s
    baseEjectionTime: 900s
    maxEjectionPercent: 50
  tls: {mode: ISTIO_MUTUAL}
  portLevelSettings:
  - port: {number: 80}
    loadBalancer: {simple: LEAST_REQUEST}
  - port: {number: 9080}
    tls: {mode: MUTUAL, clientCertificate: /etc/certs/cert.pem, privateKey: /etc/certs/key.pem, caCertificates: /etc/certs/ca.pem}
subsets:
- name: v1
  labels: {version: v1}
- name: v2
  labels: {version: v2}
  trafficPolicy:
    loadBalancer:
      consistentHash:
        httpHeaderName: x-user
        maglev: {tableSize: 65537}
exportTo: ["."]
`

func validDR(t testing.TB) *networking.DestinationRule {
	return fromYAML[networking.DestinationRule](t, validDestinationRule)
}

func TestDestinationRule(t *testing.T) {
	type dr = networking.DestinationRule
	lb := func(s *dr) *networking.LoadBalancerSettings { return s.TrafficPolicy.LoadBalancer }
	hash := func(s *dr) *networking.LoadBalancerSettings_ConsistentHashLB { return lb(s).GetConsistentHash() }
	runSpecCases(t, DestinationRule, validDR, []specCase[dr]{
		{"missing host", func(s *dr) { s.Host = "" }, "spec.host", "host must not be empty", false},
		{"invalid host", func(s *dr) { s.Host = "reviews..svc" }, "spec.host", "empty label", false},
		{"subset without name", func(s *dr) { s.Subsets[0].Name = "" }, "spec.subsets[0].name", "subset name is required", false},
		{"invalid subset name", func(s *dr) { s.Subsets[0].Name = "V1.x" }, "spec.subsets[0].name", "not a valid DNS-1123 label", false},
		{"duplicate subset", func(s *dr) { s.Subsets[1].Name = "v1" }, "spec.subsets[1].name", `subset name "v1" is already used by subsets[0]`, false},
		{"invalid subset label", func(s *dr) { s.Subsets[0].Labels["bad key!"] = "x" }, "spec.subsets[0].labels[bad key!]", "label key", false},
		{"null subset", func(s *dr) { s.Subsets[1] = nil }, "spec.subsets[1]", "must not be null", false},
		{"empty traffic policy", func(s *dr) { s.Subsets[1].TrafficPolicy = &networking.TrafficPolicy{} }, "spec.subsets[1].trafficPolicy", "traffic policy is empty", false},
		{"tunnel and proxy protocol", func(s *dr) {
			s.TrafficPolicy.Tunnel = &networking.TrafficPolicy_TunnelSettings{TargetHost: "proxy.example.com", TargetPort: 3128}
			s.TrafficPolicy.ProxyProtocol = &networking.TrafficPolicy_ProxyProtocol{}
		}, "spec.trafficPolicy.proxyProtocol", "mutually exclusive", false},
		{"tunnel protocol", func(s *dr) {
			s.TrafficPolicy.Tunnel = &networking.TrafficPolicy_TunnelSettings{Protocol: "GET", TargetHost: "proxy.example.com", TargetPort: 3128}
		}, "spec.trafficPolicy.tunnel.protocol", `must be "CONNECT" or "POST"`, false},
		{"tunnel port", func(s *dr) {
			s.TrafficPolicy.Tunnel = &networking.TrafficPolicy_TunnelSettings{TargetHost: "10.0.0.1"}
		}, "spec.trafficPolicy.tunnel.targetPort", "1..65535", false},
		{"unknown simple load balancer", func(s *dr) {
			s.TrafficPolicy.PortLevelSettings[0].LoadBalancer.LbPolicy = &networking.LoadBalancerSettings_Simple{Simple: 42}
		}, "spec.trafficPolicy.portLevelSettings[0].loadBalancer.simple", "unknown value 42", false},
		{"hash without key", func(s *dr) { hash(s).HashKey = nil }, "spec.trafficPolicy.loadBalancer.consistentHash", "no hash key", true},
		{"hash cookie without name", func(s *dr) { hash(s).GetHttpCookie().Name = "" }, "spec.trafficPolicy.loadBalancer.consistentHash.httpCookie.name", "needs a name", false},
		{"ring too large", func(s *dr) { hash(s).GetRingHash().MinimumRingSize = 1 << 30 }, "spec.trafficPolicy.loadBalancer.consistentHash.ringHash.minimumRingSize", "too large", false},
		{"deprecated minimumRingSize with ringHash", func(s *dr) { hash(s).MinimumRingSize = 1024 }, "spec.trafficPolicy.loadBalancer.consistentHash.minimumRingSize", "mutually exclusive", false},
		{"deprecated minimumRingSize", func(s *dr) { hash(s).HashAlgorithm = nil; hash(s).MinimumRingSize = 1024 }, "spec.trafficPolicy.loadBalancer.consistentHash.minimumRingSize", "deprecated", true},
		{"maglev table not prime", func(s *dr) {
			s.Subsets[1].TrafficPolicy.LoadBalancer.GetConsistentHash().GetMaglev().TableSize = 65536
		}, "spec.subsets[1].trafficPolicy.loadBalancer.consistentHash.maglev.tableSize", "not a prime", false},
		{"maglev without table size", func(s *dr) {
			s.Subsets[1].TrafficPolicy.LoadBalancer.GetConsistentHash().GetMaglev().TableSize = 0
		}, "spec.subsets[1].trafficPolicy.loadBalancer.consistentHash.maglev.tableSize", "needs a tableSize", false},
		{"invalid hash header", func(s *dr) {
			s.Subsets[1].TrafficPolicy.LoadBalancer.GetConsistentHash().HashKey = &networking.LoadBalancerSettings_ConsistentHashLB_HttpHeaderName{HttpHeaderName: "x user"}
		}, "spec.subsets[1].trafficPolicy.loadBalancer.consistentHash.httpHeaderName", "header name", false},
		{"warmup and warmupDurationSecs", func(s *dr) {
			lb(s).WarmupDurationSecs = durationpb.New(1e9)
			lb(s).Warmup = &networking.WarmupConfiguration{Duration: durationpb.New(1e9)}
		}, "spec.trafficPolicy.loadBalancer.warmup", "mutually exclusive", false},
		{"warmup aggression", func(s *dr) {
			lb(s).Warmup = &networking.WarmupConfiguration{Duration: durationpb.New(1e9), Aggression: wrapperspb.Double(0.5)}
		}, "spec.trafficPolicy.loadBalancer.warmup.aggression", "at least 1", false},
		{"locality weights", func(s *dr) {
			lb(s).LocalityLbSetting.Distribute[0].To["us-west/zone2/*"] = 30
		}, "spec.trafficPolicy.loadBalancer.localityLbSetting.distribute[0].to", "sum to 110", false},
		{"distribute and failover", func(s *dr) {
			lb(s).LocalityLbSetting.Failover = []*networking.LocalityLoadBalancerSetting_Failover{{From: "us-west", To: "us-east"}}
		}, "spec.trafficPolicy.loadBalancer.localityLbSetting", "distribute and failover are mutually exclusive", false},
		{"failover to same region", func(s *dr) {
			lb(s).LocalityLbSetting.Distribute = nil
			lb(s).LocalityLbSetting.Failover = []*networking.LocalityLoadBalancerSetting_Failover{{From: "us-west", To: "us-west"}}
		}, "spec.trafficPolicy.loadBalancer.localityLbSetting.failover[0]", "must be different regions", false},
		{"failover without outlier detection", func(s *dr) {
			s.TrafficPolicy.OutlierDetection = nil
			lb(s).LocalityLbSetting.Distribute = nil
			lb(s).LocalityLbSetting.Failover = []*networking.LocalityLoadBalancerSetting_Failover{{From: "us-west", To: "us-east"}}
		}, "spec.trafficPolicy.loadBalancer.localityLbSetting", "only works with outlier detection", true},
		{"locality wildcard in the middle", func(s *dr) { lb(s).LocalityLbSetting.Distribute[0].From = "us-west/*/a" }, "spec.trafficPolicy.loadBalancer.localityLbSetting.distribute[0].from", "at the end", false},
		{"empty connection pool", func(s *dr) { s.TrafficPolicy.ConnectionPool = &networking.ConnectionPoolSettings{} }, "spec.trafficPolicy.connectionPool", "connection pool is empty", false},
		{"negative max connections", func(s *dr) { s.TrafficPolicy.ConnectionPool.Tcp.MaxConnections = -1 }, "spec.trafficPolicy.connectionPool.tcp.maxConnections", "negative", false},
		{"negative pending requests", func(s *dr) { s.TrafficPolicy.ConnectionPool.Http.Http1MaxPendingRequests = -1 }, "spec.trafficPolicy.connectionPool.http.http1MaxPendingRequests", "negative", false},
		{"zero connect timeout", func(s *dr) { s.TrafficPolicy.ConnectionPool.Tcp.ConnectTimeout = durationpb.New(0) }, "spec.trafficPolicy.connectionPool.tcp.connectTimeout", "too short", false},
		{"upgrade with client protocol", func(s *dr) {
			h := s.TrafficPolicy.ConnectionPool.Http
			h.H2UpgradePolicy, h.UseClientProtocol = networking.ConnectionPoolSettings_HTTPSettings_UPGRADE, true
		}, "spec.trafficPolicy.connectionPool.http.useClientProtocol", "cannot be true when h2UpgradePolicy is UPGRADE", false},
		{"ejection percent over 100", func(s *dr) { s.TrafficPolicy.OutlierDetection.MaxEjectionPercent = 120 }, "spec.trafficPolicy.outlierDetection.maxEjectionPercent", "0..100", false},
		{"negative min health percent", func(s *dr) { s.TrafficPolicy.OutlierDetection.MinHealthPercent = -1 }, "spec.trafficPolicy.outlierDetection.minHealthPercent", "0..100", false},
		{"zero interval", func(s *dr) { s.TrafficPolicy.OutlierDetection.Interval = durationpb.New(0) }, "spec.trafficPolicy.outlierDetection.interval", "too short", false},
		{"local origin failures without split", func(s *dr) {
			s.TrafficPolicy.OutlierDetection.ConsecutiveLocalOriginFailures = wrapperspb.UInt32(3)
		}, "spec.trafficPolicy.outlierDetection.consecutiveLocalOriginFailures", "needs splitExternalLocalOriginErrors", false},
		{"deprecated consecutiveErrors", func(s *dr) { s.TrafficPolicy.OutlierDetection.ConsecutiveErrors = 5 }, "spec.trafficPolicy.outlierDetection.consecutiveErrors", "deprecated", true},
		{"outlier status code", func(s *dr) { s.TrafficPolicy.OutlierDetection.OutlierDetectionHttpErrorCodes = []uint32{600} }, "spec.trafficPolicy.outlierDetection.outlierDetectionHttpErrorCodes[0]", "100..599", false},
		{"unknown TLS mode", func(s *dr) { s.TrafficPolicy.Tls.Mode = 9 }, "spec.trafficPolicy.tls.mode", "DISABLE, SIMPLE, MUTUAL, ISTIO_MUTUAL", false},
		{"mutual TLS without key", func(s *dr) { s.TrafficPolicy.PortLevelSettings[1].Tls.PrivateKey = "" }, "spec.trafficPolicy.portLevelSettings[1].tls.privateKey", "mode MUTUAL needs clientCertificate and privateKey, or credentialName", false},
		{"mutual TLS without certificate", func(s *dr) { s.TrafficPolicy.PortLevelSettings[1].Tls.ClientCertificate = "" }, "spec.trafficPolicy.portLevelSettings[1].tls.clientCertificate", "mode MUTUAL needs", false},
		{"credentialName with files", func(s *dr) { s.TrafficPolicy.PortLevelSettings[1].Tls.CredentialName = "client-cert" }, "spec.trafficPolicy.portLevelSettings[1].tls.credentialName", "credentialName excludes clientCertificate", false},
		{"insecureSkipVerify with CA", func(s *dr) {
			s.TrafficPolicy.PortLevelSettings[1].Tls.InsecureSkipVerify = wrapperspb.Bool(true)
		}, "spec.trafficPolicy.portLevelSettings[1].tls.insecureSkipVerify", "must not be set", false},
		{"ISTIO_MUTUAL with certificates", func(s *dr) { s.TrafficPolicy.Tls.ClientCertificate = "/c.pem" }, "spec.trafficPolicy.tls.mode", "ignored", true},
		{"port-level port out of range", func(s *dr) { s.TrafficPolicy.PortLevelSettings[0].Port.Number = 0 }, "spec.trafficPolicy.portLevelSettings[0].port.number", "1..65535", false},
		{"port-level without port", func(s *dr) { s.TrafficPolicy.PortLevelSettings[0].Port = nil }, "spec.trafficPolicy.portLevelSettings[0].port", "needs a port", false},
		{"port-level duplicate port", func(s *dr) { s.TrafficPolicy.PortLevelSettings[1].Port.Number = 80 }, "spec.trafficPolicy.portLevelSettings[1].port.number", "port 80 already has settings in portLevelSettings[0]", false},
		{"port-level empty", func(s *dr) {
			s.TrafficPolicy.PortLevelSettings[0] = &networking.TrafficPolicy_PortTrafficPolicy{Port: &networking.PortSelector{Number: 80}}
		}, "spec.trafficPolicy.portLevelSettings[0]", "sets nothing", false},
		{"retry budget percent", func(s *dr) {
			s.TrafficPolicy.RetryBudget = &networking.TrafficPolicy_RetryBudget{Percent: wrapperspb.Double(101)}
		}, "spec.trafficPolicy.retryBudget.percent", "0..100", false},
		{"invalid exportTo", func(s *dr) { s.ExportTo = []string{"a/b"} }, "spec.exportTo[0]", "namespace name", false},
		{"selector exported elsewhere", func(s *dr) {
			s.WorkloadSelector = &typev1beta1.WorkloadSelector{MatchLabels: map[string]string{"app": "reviews"}}
			s.ExportTo = []string{"other"}
		}, "spec.exportTo[0]", "only be exported to its own namespace", false},
		{"selector with wildcard", func(s *dr) {
			s.WorkloadSelector = &typev1beta1.WorkloadSelector{MatchLabels: map[string]string{"app": "rev*"}}
		}, "spec.workloadSelector.matchLabels[app]", "wildcards are not supported", false},
		{"empty selector", func(s *dr) { s.WorkloadSelector = &typev1beta1.WorkloadSelector{} }, "spec.workloadSelector.matchLabels", "selects every workload", true},
	})
}
