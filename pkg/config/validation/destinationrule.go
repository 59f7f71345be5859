package validation

import (
	"math"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	typev1beta1 "istio.io/api/type/v1beta1"

	"github.com/meshcp/meshcp/pkg/config"
)

// DestinationRule validates an Istio DestinationRule: the host, subsets
// (unique valid names, valid labels), every traffic policy (load
// balancing, connection pool, outlier detection, client TLS, port-level
// settings, tunnel, proxy protocol, retry budget), exportTo and the
// workload selector.
func DestinationRule(c config.Config) Result {
	return validateSpec(c, "DestinationRule", namespacedMeta, checkDestinationRule)
}

// checkDestinationRule checks the spec of a DestinationRule (see DestinationRule).
func checkDestinationRule(c config.Config, dr *networking.DestinationRule, r *Result) {
	if msg := hostError(dr.Host); msg != "" {
		r.Errorf("spec.host", "%s", msg)
	}
	checkTrafficPolicy(r, "spec.trafficPolicy", dr.TrafficPolicy)
	seen := map[string]int{}
	for i, s := range dr.Subsets {
		sp := idx("spec.subsets", i)
		if s == nil {
			r.Errorf(sp, "subset must not be null")
			continue
		}
		checkSubsetName(r, fld(sp, "name"), s.Name)
		if j, dup := seen[s.Name]; dup && s.Name != "" {
			r.Errorf(fld(sp, "name"), "subset name %q is already used by subsets[%d]; subset names must be unique", s.Name, j)
		} else {
			seen[s.Name] = i
		}
		checkLabels(r, fld(sp, "labels"), s.Labels)
		checkTrafficPolicy(r, fld(sp, "trafficPolicy"), s.TrafficPolicy)
	}
	checkExportTo(r, "spec.exportTo", c.Namespace, dr.ExportTo, false)
	if dr.WorkloadSelector != nil {
		checkExportToForSelector(r, c.Namespace, dr.ExportTo)
	}
	checkPolicySelector(r, "spec.workloadSelector", dr.WorkloadSelector)
}

// checkExportToForSelector checks a DestinationRule with a workload
// selector is only visible in its own namespace.
func checkExportToForSelector(r *Result, namespace string, exportTo []string) {
	for i, e := range exportTo {
		if e != "." && e != namespace {
			r.Errorf(idx("spec.exportTo", i), "a DestinationRule with a workloadSelector can only be exported to its own namespace (\".\"), not %q", e)
		}
	}
}

// checkPolicySelector checks a type.v1beta1 workload selector (matchLabels).
func checkPolicySelector(r *Result, p string, s *typev1beta1.WorkloadSelector) {
	if s == nil {
		return
	}
	if len(s.MatchLabels) == 0 {
		r.Warnf(fld(p, "matchLabels"), "the workload selector has no labels, so it selects every workload in the namespace")
	}
	checkSelectorLabels(r, fld(p, "matchLabels"), s.MatchLabels)
}

// Traffic policies.

// checkTrafficPolicy checks a traffic policy of a DestinationRule or of
// one of its subsets.
func checkTrafficPolicy(r *Result, p string, tp *networking.TrafficPolicy) {
	if tp == nil {
		return
	}
	if tp.LoadBalancer == nil && tp.ConnectionPool == nil && tp.OutlierDetection == nil && tp.Tls == nil &&
		len(tp.PortLevelSettings) == 0 && tp.Tunnel == nil && tp.ProxyProtocol == nil && tp.RetryBudget == nil {
		r.Errorf(p, "traffic policy is empty; set at least one field or remove it")
		return
	}
	if tp.Tunnel != nil && tp.ProxyProtocol != nil {
		r.Errorf(fld(p, "proxyProtocol"), "tunnel and proxyProtocol are mutually exclusive")
	}
	checkLoadBalancer(r, fld(p, "loadBalancer"), tp.LoadBalancer, tp.OutlierDetection != nil)
	checkConnectionPool(r, fld(p, "connectionPool"), tp.ConnectionPool)
	checkOutlierDetection(r, fld(p, "outlierDetection"), tp.OutlierDetection)
	checkClientTLS(r, fld(p, "tls"), tp.Tls)
	checkPortLevelSettings(r, fld(p, "portLevelSettings"), tp.PortLevelSettings)
	checkTunnel(r, fld(p, "tunnel"), tp.Tunnel)
	if pp := tp.ProxyProtocol; pp != nil {
		checkEnum(r, fld(p, "proxyProtocol.version"), pp.Version, networking.TrafficPolicy_ProxyProtocol_VERSION_name)
	}
	checkRetryBudget(r, fld(p, "retryBudget"), tp.RetryBudget)
}

// checkPortLevelSettings checks the per-port policies: each names a port
// (1..65535, once) and sets something.
func checkPortLevelSettings(r *Result, p string, settings []*networking.TrafficPolicy_PortTrafficPolicy) {
	seen := map[uint32]int{}
	for i, s := range settings {
		sp := idx(p, i)
		if s == nil {
			r.Errorf(sp, "port traffic policy must not be null")
			continue
		}
		if s.Port == nil {
			r.Errorf(fld(sp, "port"), "a port traffic policy needs a port")
		} else {
			checkPort(r, fld(sp, "port.number"), s.Port.Number)
			if j, dup := seen[s.Port.Number]; dup {
				r.Errorf(fld(sp, "port.number"), "port %d already has settings in portLevelSettings[%d]; each port may appear once", s.Port.Number, j)
			} else {
				seen[s.Port.Number] = i
			}
		}
		if s.LoadBalancer == nil && s.ConnectionPool == nil && s.OutlierDetection == nil && s.Tls == nil {
			r.Errorf(sp, "port traffic policy sets nothing; set loadBalancer, connectionPool, outlierDetection or tls")
			continue
		}
		checkLoadBalancer(r, fld(sp, "loadBalancer"), s.LoadBalancer, s.OutlierDetection != nil)
		checkConnectionPool(r, fld(sp, "connectionPool"), s.ConnectionPool)
		checkOutlierDetection(r, fld(sp, "outlierDetection"), s.OutlierDetection)
		checkClientTLS(r, fld(sp, "tls"), s.Tls)
	}
}

// Load balancing.

// Envoy's limits on hash-based load balancing tables.
const (
	maxRingSize        = 8 * 1024 * 1024
	maxMaglevTableSize = 5000011
)

// checkLoadBalancer checks load balancer settings.
func checkLoadBalancer(r *Result, p string, lb *networking.LoadBalancerSettings, hasOutlierDetection bool) {
	if lb == nil {
		return
	}
	switch policy := lb.LbPolicy.(type) {
	case *networking.LoadBalancerSettings_Simple:
		checkEnum(r, fld(p, "simple"), policy.Simple, networking.LoadBalancerSettings_SimpleLB_name)
	case *networking.LoadBalancerSettings_ConsistentHash:
		checkConsistentHash(r, fld(p, "consistentHash"), policy.ConsistentHash)
	case *networking.LoadBalancerSettings_BackendUtilization:
		checkBackendUtilization(r, fld(p, "backendUtilization"), policy.BackendUtilization)
	}
	checkLocalityLB(r, fld(p, "localityLbSetting"), lb.LocalityLbSetting, hasOutlierDetection)
	if lb.WarmupDurationSecs != nil && lb.Warmup != nil {
		r.Errorf(fld(p, "warmup"), "warmupDurationSecs and warmup are mutually exclusive; use warmup")
	}
	checkPositiveDuration(r, fld(p, "warmupDurationSecs"), lb.WarmupDurationSecs)
	if w := lb.Warmup; w != nil {
		wp := fld(p, "warmup")
		if w.Duration == nil {
			r.Errorf(fld(wp, "duration"), "warmup needs a duration")
		}
		checkPositiveDuration(r, fld(wp, "duration"), w.Duration)
		if w.MinimumPercent != nil {
			if v := w.MinimumPercent.Value; math.IsNaN(v) || v < 0 || v > 100 {
				r.Errorf(fld(wp, "minimumPercent"), "minimumPercent %v is out of range; it must be 0..100", v)
			}
		}
		if w.Aggression != nil {
			if v := w.Aggression.Value; math.IsNaN(v) || v < 1 {
				r.Errorf(fld(wp, "aggression"), "aggression %v must be at least 1", v)
			}
		}
	}
}

// checkConsistentHash checks consistent-hash load balancing: a hash key,
// and ring or table sizes Envoy accepts.
func checkConsistentHash(r *Result, p string, ch *networking.LoadBalancerSettings_ConsistentHashLB) {
	if ch == nil {
		return
	}
	switch key := ch.HashKey.(type) {
	case nil:
		r.Warnf(p, "consistentHash has no hash key (httpHeaderName, httpCookie, useSourceIp or httpQueryParameterName), so requests are spread at random")
	case *networking.LoadBalancerSettings_ConsistentHashLB_HttpHeaderName:
		checkHeaderName(r, fld(p, "httpHeaderName"), key.HttpHeaderName)
	case *networking.LoadBalancerSettings_ConsistentHashLB_HttpQueryParameterName:
		if key.HttpQueryParameterName == "" {
			r.Errorf(fld(p, "httpQueryParameterName"), "query parameter name must not be empty")
		}
	case *networking.LoadBalancerSettings_ConsistentHashLB_HttpCookie:
		checkHashCookie(r, fld(p, "httpCookie"), key.HttpCookie)
	}
	if ch.MinimumRingSize != 0 {
		r.Warnf(fld(p, "minimumRingSize"), "minimumRingSize is deprecated; use ringHash.minimumRingSize")
		if ch.HashAlgorithm != nil {
			r.Errorf(fld(p, "minimumRingSize"), "minimumRingSize and ringHash/maglev are mutually exclusive")
		}
		checkRingSize(r, fld(p, "minimumRingSize"), ch.MinimumRingSize)
	}
	switch alg := ch.HashAlgorithm.(type) {
	case *networking.LoadBalancerSettings_ConsistentHashLB_RingHash_:
		if alg.RingHash != nil {
			checkRingSize(r, fld(p, "ringHash.minimumRingSize"), alg.RingHash.MinimumRingSize)
		}
	case *networking.LoadBalancerSettings_ConsistentHashLB_Maglev:
		if alg.Maglev != nil {
			checkMaglevTableSize(r, fld(p, "maglev.tableSize"), alg.Maglev.TableSize)
		}
	}
}

// checkHashCookie checks the cookie of cookie-based consistent hashing.
func checkHashCookie(r *Result, p string, c *networking.LoadBalancerSettings_ConsistentHashLB_HTTPCookie) {
	if c == nil {
		r.Errorf(p, "httpCookie must not be null")
		return
	}
	if c.Name == "" {
		r.Errorf(fld(p, "name"), "the hash cookie needs a name")
	}
	checkNonNegativeDuration(r, fld(p, "ttl"), c.Ttl)
	for i, a := range c.Attributes {
		if a == nil || a.Name == "" {
			r.Errorf(idx(fld(p, "attributes"), i), "cookie attribute needs a name")
		}
	}
}

// checkRingSize checks a ring hash minimum ring size (0 is Envoy's default).
func checkRingSize(r *Result, p string, size uint64) {
	if size > maxRingSize {
		r.Errorf(p, "ring size %d is too large; Envoy allows at most %d", size, maxRingSize)
	}
}

// checkMaglevTableSize checks a Maglev table size: a prime below 5000011.
func checkMaglevTableSize(r *Result, p string, size uint64) {
	switch {
	case size == 0:
		r.Errorf(p, "maglev needs a tableSize (a prime number such as 65537)")
	case size >= maxMaglevTableSize:
		r.Errorf(p, "tableSize %d is too large; it must be below %d", size, maxMaglevTableSize)
	case !isPrime(size):
		r.Errorf(p, "tableSize %d is not a prime number; Maglev needs a prime such as 65537", size)
	}
}

// isPrime reports whether n is prime (n is small: below 5000011).
func isPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	for f := uint64(2); f*f <= n; f++ {
		if n%f == 0 {
			return false
		}
	}
	return true
}

// checkBackendUtilization checks backend-utilization load balancing.
func checkBackendUtilization(r *Result, p string, bu *networking.LoadBalancerSettings_BackendUtilizationLB) {
	if bu == nil {
		return
	}
	checkNonNegativeDuration(r, fld(p, "weightStabilizationPeriod"), bu.WeightStabilizationPeriod)
	checkNonNegativeDuration(r, fld(p, "weightExpirationPeriod"), bu.WeightExpirationPeriod)
	checkNonNegativeDuration(r, fld(p, "weightUpdatePeriod"), bu.WeightUpdatePeriod)
	checkNonEmptyStrings(r, fld(p, "metricNamesForComputingUtilization"), bu.MetricNamesForComputingUtilization)
}

// Locality load balancing.

// Topology labels a failoverPriority may not use together with failover.
var topologyLabels = []string{"topology.kubernetes.io/region", "topology.kubernetes.io/zone", "topology.istio.io/subzone"}

// checkLocalityLB checks locality-aware load balancing: distribute and
// failover are exclusive, distribute weights total 100, failover names
// regions.
func checkLocalityLB(r *Result, p string, l *networking.LocalityLoadBalancerSetting, hasOutlierDetection bool) {
	if l == nil {
		return
	}
	if len(l.Distribute) > 0 && len(l.Failover) > 0 {
		r.Errorf(p, "distribute and failover are mutually exclusive")
	}
	if len(l.Failover) > 0 {
		for i, label := range l.FailoverPriority {
			if slices.Contains(topologyLabels, label) {
				r.Errorf(idx(fld(p, "failoverPriority"), i), "failoverPriority cannot use the topology label %q together with failover", label)
			}
		}
	}
	fromSeen := map[string]int{}
	for i, d := range l.Distribute {
		dp := idx(fld(p, "distribute"), i)
		if d == nil {
			r.Errorf(dp, "distribute entry must not be null")
			continue
		}
		checkLocality(r, fld(dp, "from"), d.From)
		if j, dup := fromSeen[d.From]; dup {
			r.Errorf(fld(dp, "from"), "locality %q is already distributed by distribute[%d]", d.From, j)
		} else {
			fromSeen[d.From] = i
		}
		var total uint64
		for _, to := range sortedKeys(d.To) {
			checkLocality(r, key(fld(dp, "to"), to), to)
			if w := d.To[to]; w < 1 || w > 100 {
				r.Errorf(key(fld(dp, "to"), to), "locality weight %d is out of range; it must be 1..100", w)
			}
			total += uint64(d.To[to])
		}
		if total != 100 {
			r.Errorf(fld(dp, "to"), "locality weights sum to %d; they must sum to 100", total)
		}
	}
	for i, f := range l.Failover {
		fp := idx(fld(p, "failover"), i)
		if f == nil {
			r.Errorf(fp, "failover entry must not be null")
			continue
		}
		switch {
		case f.From == "" || f.To == "":
			r.Errorf(fp, "failover needs both from and to regions")
		case f.From == f.To:
			r.Errorf(fp, "failover from and to are both %q; they must be different regions", f.From)
		}
		if strings.ContainsAny(f.From, "/*") || strings.ContainsAny(f.To, "/*") {
			r.Errorf(fp, "failover names whole regions: no zone (\"/\") and no wildcard (\"*\")")
		}
	}
	if (len(l.Failover) > 0 || len(l.FailoverPriority) > 0) && !hasOutlierDetection {
		r.Warnf(p, "failover only works with outlier detection; set outlierDetection in the same traffic policy")
	}
}

// checkLocality checks a region/zone/subzone locality, where "*" may end it.
func checkLocality(r *Result, p, locality string) {
	if locality == "" {
		r.Errorf(p, "locality must not be empty")
		return
	}
	if n := strings.Count(locality, "*"); n > 1 || (n == 1 && !strings.HasSuffix(locality, "*")) {
		r.Errorf(p, "locality %q may only have one wildcard \"*\", at the end", locality)
	}
	parts := strings.Split(locality, "/")
	if len(parts) > 3 || slices.Contains(parts, "") {
		r.Errorf(p, "locality %q must be region, region/zone or region/zone/subzone with no empty part", locality)
	}
}

// Connection pools and outlier detection.

// checkConnectionPool checks connection pool settings: counts not
// negative, durations valid.
func checkConnectionPool(r *Result, p string, cp *networking.ConnectionPoolSettings) {
	if cp == nil {
		return
	}
	if cp.Tcp == nil && cp.Http == nil {
		r.Errorf(p, "connection pool is empty; set tcp, http or both")
		return
	}
	if t := cp.Tcp; t != nil {
		tp := fld(p, "tcp")
		checkNotNegative(r, fld(tp, "maxConnections"), t.MaxConnections)
		checkPositiveDuration(r, fld(tp, "connectTimeout"), t.ConnectTimeout)
		checkNonNegativeDuration(r, fld(tp, "maxConnectionDuration"), t.MaxConnectionDuration)
		checkNonNegativeDuration(r, fld(tp, "idleTimeout"), t.IdleTimeout)
		if ka := t.TcpKeepalive; ka != nil {
			checkPositiveDuration(r, fld(tp, "tcpKeepalive.time"), ka.Time)
			checkPositiveDuration(r, fld(tp, "tcpKeepalive.interval"), ka.Interval)
		}
	}
	if h := cp.Http; h != nil {
		hp := fld(p, "http")
		checkNotNegative(r, fld(hp, "http1MaxPendingRequests"), h.Http1MaxPendingRequests)
		checkNotNegative(r, fld(hp, "http2MaxRequests"), h.Http2MaxRequests)
		checkNotNegative(r, fld(hp, "maxRequestsPerConnection"), h.MaxRequestsPerConnection)
		checkNotNegative(r, fld(hp, "maxRetries"), h.MaxRetries)
		checkNotNegative(r, fld(hp, "maxConcurrentStreams"), h.MaxConcurrentStreams)
		checkNonNegativeDuration(r, fld(hp, "idleTimeout"), h.IdleTimeout)
		checkEnum(r, fld(hp, "h2UpgradePolicy"), h.H2UpgradePolicy, networking.ConnectionPoolSettings_HTTPSettings_H2UpgradePolicy_name)
		if h.H2UpgradePolicy == networking.ConnectionPoolSettings_HTTPSettings_UPGRADE && h.UseClientProtocol {
			r.Errorf(fld(hp, "useClientProtocol"), "useClientProtocol cannot be true when h2UpgradePolicy is UPGRADE")
		}
		if ka := h.Http2KeepAlive; ka != nil {
			checkPositiveDuration(r, fld(hp, "http2KeepAlive.interval"), ka.Interval)
			checkPositiveDuration(r, fld(hp, "http2KeepAlive.timeout"), ka.Timeout)
		}
	}
}

// checkNotNegative checks a count is 0 or more.
func checkNotNegative(r *Result, p string, v int32) {
	if v < 0 {
		r.Errorf(p, "value %d is negative; it must be 0 or more", v)
	}
}

// checkPercent checks an integer percentage is 0..100.
func checkPercent(r *Result, p string, v int64) {
	if v < 0 || v > 100 {
		r.Errorf(p, "percentage %d is out of range; it must be 0..100", v)
	}
}

// checkOutlierDetection checks outlier detection: percentages in 0..100,
// positive intervals, known status codes.
func checkOutlierDetection(r *Result, p string, od *networking.OutlierDetection) {
	if od == nil {
		return
	}
	if od.ConsecutiveErrors != 0 {
		r.Warnf(fld(p, "consecutiveErrors"), "consecutiveErrors is deprecated; use consecutive5xxErrors or consecutiveGatewayErrors")
		checkNotNegative(r, fld(p, "consecutiveErrors"), od.ConsecutiveErrors)
	}
	if od.ConsecutiveLocalOriginFailures.GetValue() > 0 && !od.SplitExternalLocalOriginErrors {
		r.Errorf(fld(p, "consecutiveLocalOriginFailures"), "consecutiveLocalOriginFailures needs splitExternalLocalOriginErrors: true")
	}
	checkPositiveDuration(r, fld(p, "interval"), od.Interval)
	checkPositiveDuration(r, fld(p, "baseEjectionTime"), od.BaseEjectionTime)
	checkPercent(r, fld(p, "maxEjectionPercent"), int64(od.MaxEjectionPercent))
	checkPercent(r, fld(p, "minHealthPercent"), int64(od.MinHealthPercent))
	if od.FailurePercentageThreshold != nil {
		checkPercent(r, fld(p, "failurePercentageThreshold"), int64(od.FailurePercentageThreshold.Value))
	}
	for i, code := range od.OutlierDetectionHttpErrorCodes {
		if code < 100 || code > 599 {
			r.Errorf(idx(fld(p, "outlierDetectionHttpErrorCodes"), i), "HTTP status %d is out of range; it must be 100..599", code)
		}
	}
}

// Client TLS, tunnels, retry budgets.

// checkClientTLS checks the TLS settings of connections to a service:
// MUTUAL needs a client certificate and key (or a credentialName, which
// then excludes the file fields).
func checkClientTLS(r *Result, p string, t *networking.ClientTLSSettings) {
	if t == nil {
		return
	}
	checkEnum(r, fld(p, "mode"), t.Mode, networking.ClientTLSSettings_TLSmode_name)
	files := t.ClientCertificate != "" || t.PrivateKey != "" || t.CaCertificates != "" || t.CaCrl != ""
	switch t.Mode {
	case networking.ClientTLSSettings_DISABLE:
		if files || t.CredentialName != "" {
			r.Warnf(fld(p, "mode"), "mode DISABLE sends plain text; the certificate settings are ignored")
		}
	case networking.ClientTLSSettings_ISTIO_MUTUAL:
		if files || t.CredentialName != "" {
			r.Warnf(fld(p, "mode"), "mode ISTIO_MUTUAL uses the workload's Istio certificate; clientCertificate, privateKey, caCertificates and credentialName are ignored")
		}
	case networking.ClientTLSSettings_SIMPLE, networking.ClientTLSSettings_MUTUAL:
		if t.CredentialName != "" {
			if files {
				r.Errorf(fld(p, "credentialName"), "credentialName excludes clientCertificate, privateKey, caCertificates and caCrl: the secret holds them")
			}
		} else if t.Mode == networking.ClientTLSSettings_MUTUAL {
			if t.ClientCertificate == "" {
				r.Errorf(fld(p, "clientCertificate"), "mode MUTUAL needs clientCertificate and privateKey, or credentialName")
			}
			if t.PrivateKey == "" {
				r.Errorf(fld(p, "privateKey"), "mode MUTUAL needs clientCertificate and privateKey, or credentialName")
			}
		}
		if t.InsecureSkipVerify.GetValue() && (t.CaCertificates != "" || len(t.SubjectAltNames) > 0 ||
			(t.Mode == networking.ClientTLSSettings_SIMPLE && t.CredentialName != "")) {
			r.Errorf(fld(p, "insecureSkipVerify"), "insecureSkipVerify disables server verification, so caCertificates, subjectAltNames (and for SIMPLE, credentialName) must not be set")
		}
	}
	checkNonEmptyStrings(r, fld(p, "subjectAltNames"), t.SubjectAltNames)
}

// checkTunnel checks tunnel settings: CONNECT or POST to a host and port.
func checkTunnel(r *Result, p string, t *networking.TrafficPolicy_TunnelSettings) {
	if t == nil {
		return
	}
	if t.Protocol != "" && t.Protocol != "CONNECT" && t.Protocol != "POST" {
		r.Errorf(fld(p, "protocol"), `tunnel protocol %q must be "CONNECT" or "POST"`, t.Protocol)
	}
	if !isIP(t.TargetHost) {
		if msg := fqdnError(t.TargetHost); msg != "" {
			r.Errorf(fld(p, "targetHost"), "targetHost must be a host name or an IP address: %s", msg)
		}
	}
	checkPort(r, fld(p, "targetPort"), t.TargetPort)
}

// checkRetryBudget checks a retry budget.
func checkRetryBudget(r *Result, p string, b *networking.TrafficPolicy_RetryBudget) {
	if b == nil {
		return
	}
	if b.Percent != nil {
		if v := b.Percent.Value; math.IsNaN(v) || v < 0 || v > 100 {
			r.Errorf(fld(p, "percent"), "percent %v is out of range; it must be 0..100", v)
		}
	}
	checkPositiveDuration(r, fld(p, "budgetInterval"), b.BudgetInterval)
}
