package mesh

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/durationpb"
	meshconfig "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshcp/meshcp/pkg/config/validation"
)

// Validate checks a complete mesh config (defaults and file merged) with
// the rules of istiod's ValidateMeshConfig (istio/istio
// pkg/config/validation/agent) and a few more that catch values Envoy
// would reject. Findings carry the JSON path of the field, such as
// "defaultConfig.proxyStatsMatcher.inclusionRegexps[0]".
//
// Errors make the config unusable. Warnings do not; they cover deprecated
// fields, settings that are ignored, and extension providers: istiod only
// logs a broken extension provider ("can be ignored if the given extension
// provider is not used"), and so do we, so that a provider nobody uses
// cannot take the whole mesh config down with it.
func Validate(m *meshconfig.MeshConfig) validation.Result {
	var r validation.Result
	if m == nil {
		r.Errorf("", "no mesh config")
		return r
	}
	checkSchema(&r, "", m.ProtoReflect())
	checkMesh(&r, m)
	if m.DefaultConfig == nil {
		r.Errorf("defaultConfig", "must be set")
	} else {
		checkProxyConfig(&r, "defaultConfig", m.DefaultConfig)
	}
	checkExtensionProviders(&r, m)
	return r
}

// checkSchema walks every field that is set: enum values must be declared
// ones (protojson accepts any number), durations must be valid, and
// deprecated fields get a warning.
func checkSchema(r *validation.Result, path string, m protoreflect.Message) {
	if d, ok := m.Interface().(*durationpb.Duration); ok {
		if err := d.CheckValid(); err != nil {
			r.Errorf(path, "invalid duration: %v", err)
		}
		return
	}
	md := m.Descriptor()
	if isWellKnown(md) {
		return
	}
	fields := md.Fields()
	for i := range fields.Len() { // in schema order, for stable findings
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		p := fieldPath(path, fd.JSONName())
		if opts, ok := fd.Options().(*descriptorpb.FieldOptions); ok && opts.GetDeprecated() {
			r.Warnf(p, "is deprecated; see the MeshConfig reference for what replaces it")
		}
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			for j := range l.Len() {
				checkSchemaValue(r, p+"["+strconv.Itoa(j)+"]", fd, l.Get(j))
			}
		case fd.IsMap():
			entries := map[string]protoreflect.Value{}
			v.Map().Range(func(k protoreflect.MapKey, ev protoreflect.Value) bool {
				entries[k.String()] = ev
				return true
			})
			for _, k := range slices.Sorted(maps.Keys(entries)) {
				checkSchemaValue(r, keyPath(p, k), fd.MapValue(), entries[k])
			}
		default:
			checkSchemaValue(r, p, fd, v)
		}
	}
}

func checkSchemaValue(r *validation.Result, path string, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			r.Errorf(path, "unknown value %d: want one of %s", v.Enum(), enumNames(fd.Enum()))
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		checkSchema(r, path, v.Message())
	}
}

// checkMesh checks the top-level MeshConfig fields.
func checkMesh(r *validation.Result, m *meshconfig.MeshConfig) {
	checkPort(r, "proxyListenPort", m.ProxyListenPort)
	checkOptionalPort(r, "proxyInboundListenPort", m.ProxyInboundListenPort)
	checkOptionalPort(r, "proxyHttpPort", m.ProxyHttpPort)

	// istiod's ValidateConnectTimeout: 1ms to 1h, in whole milliseconds.
	if m.ConnectTimeout == nil {
		r.Errorf("connectTimeout", "must be set")
	} else if checkMillis(r, "connectTimeout", m.ConnectTimeout, time.Millisecond) {
		if d := m.ConnectTimeout.AsDuration(); d > time.Hour {
			r.Errorf("connectTimeout", "%v is longer than the maximum of 1h", d)
		}
	}
	// ValidateProtocolDetectionTimeout: 0s turns it off, else whole ms.
	if d := m.ProtocolDetectionTimeout; d != nil && d.AsDuration() != 0 {
		checkMillis(r, "protocolDetectionTimeout", d, time.Millisecond)
	}
	// Envoy requires dns_refresh_rate > 1ms.
	if d := m.DnsRefreshRate; d != nil && d.AsDuration() <= time.Millisecond {
		r.Errorf("dnsRefreshRate", "%v must be longer than 1ms", d.AsDuration())
	}
	if d := m.HboneIdleTimeout; d != nil {
		checkMillis(r, "hboneIdleTimeout", d, time.Millisecond)
	}
	if ka := m.TcpKeepalive; ka != nil {
		checkKeepalive(r, "tcpKeepalive", ka)
	}

	if otp := m.OutboundTrafficPolicy; otp.GetTls() != nil {
		if otp.Mode != meshconfig.MeshConfig_OutboundTrafficPolicy_ALLOW_ANY_DYNAMIC_DNS {
			r.Warnf("outboundTrafficPolicy.tls", "is ignored unless mode is ALLOW_ANY_DYNAMIC_DNS")
		}
		checkClientTLS(r, "outboundTrafficPolicy.tls", otp.Tls)
	}

	if err := checkTrustDomain(m.TrustDomain); err != nil {
		r.Errorf("trustDomain", "%v", err)
	}
	for i, td := range m.TrustDomainAliases {
		if err := checkTrustDomain(td); err != nil {
			r.Errorf(fmt.Sprintf("trustDomainAliases[%d]", i), "%v", err)
		}
	}
	if m.RootNamespace != "" {
		if err := checkNamespace(m.RootNamespace); err != nil {
			r.Errorf("rootNamespace", "%v", err)
		}
	}
	checkExportTo(r, "defaultServiceExportTo", m.DefaultServiceExportTo)
	checkExportTo(r, "defaultVirtualServiceExportTo", m.DefaultVirtualServiceExportTo)
	checkExportTo(r, "defaultDestinationRuleExportTo", m.DefaultDestinationRuleExportTo)

	checkLocalityLB(r, "localityLbSetting", m.LocalityLbSetting)
	for i, s := range m.ServiceSettings {
		for j, h := range s.GetHosts() {
			if err := checkWildcardDomain(h); err != nil {
				r.Errorf(fmt.Sprintf("serviceSettings[%d].hosts[%d]", i, j), "%v", err)
			}
		}
	}
	for i, s := range m.ServiceScopeConfigs {
		p := fmt.Sprintf("serviceScopeConfigs[%d]", i)
		checkSelector(r, p+".namespaceSelector", s.GetNamespaceSelector())
		checkSelector(r, p+".servicesSelector", s.GetServicesSelector())
	}
	for i, s := range m.DiscoverySelectors {
		checkSelector(r, fmt.Sprintf("discoverySelectors[%d]", i), s)
	}

	if ca := m.Ca; ca != nil {
		if err := checkHostPort(ca.Address); err != nil {
			r.Errorf("ca.address", "%v", err)
		}
		if d := ca.RequestTimeout; d != nil {
			checkMillis(r, "ca.requestTimeout", d, time.Millisecond)
		}
		checkClientTLS(r, "ca.tlsSettings", ca.TlsSettings)
	}
	for i, c := range m.CaCertificates {
		p := fmt.Sprintf("caCertificates[%d]", i)
		if c.GetPem() == "" && c.GetSpiffeBundleUrl() == "" {
			r.Errorf(p, "one of pem or spiffeBundleUrl must be set")
		}
		for j, td := range c.GetTrustDomains() {
			if err := checkTrustDomain(td); err != nil {
				r.Errorf(fmt.Sprintf("%s.trustDomains[%d]", p, j), "%v", err)
			}
		}
	}
	// istiod's ValidateMeshTLSConfig and ValidateMeshTLSDefaults.
	if len(m.GetMeshMTLS().GetEcdhCurves()) > 0 {
		r.Errorf("meshMTLS.ecdhCurves", "mesh mTLS does not support setting ECDH curves")
	}
	checkCurves(r, "tlsDefaults.ecdhCurves", m.GetTlsDefaults().GetEcdhCurves())

	checkRetry(r, "defaultHttpRetryPolicy", m.DefaultHttpRetryPolicy)
	checkRetry(r, "defaultInboundHttpRetryPolicy", m.DefaultInboundHttpRetryPolicy)
}

// checkProxyConfig checks defaultConfig, with istiod's
// ValidateMeshConfigProxyConfig rules and checks of what Envoy rejects.
func checkProxyConfig(r *validation.Result, p string, pc *meshconfig.ProxyConfig) {
	if pc.ConfigPath == "" {
		r.Errorf(p+".configPath", "must be set")
	}
	if pc.BinaryPath == "" {
		r.Errorf(p+".binaryPath", "must be set")
	}
	switch c := pc.ClusterName.(type) {
	case *meshconfig.ProxyConfig_ServiceCluster:
		if c.ServiceCluster == "" {
			r.Errorf(p+".serviceCluster", "must not be empty")
		}
	case *meshconfig.ProxyConfig_TracingServiceName_:
	default:
		r.Errorf(p+".serviceCluster", "one of serviceCluster or tracingServiceName must be set")
	}
	// ValidateDrainDuration: at least 1ms, in whole seconds.
	if pc.DrainDuration == nil {
		r.Errorf(p+".drainDuration", "must be set")
	} else if checkMillis(r, p+".drainDuration", pc.DrainDuration, time.Millisecond) &&
		pc.DrainDuration.AsDuration()%time.Second != 0 {
		r.Errorf(p+".drainDuration", "%v is not a whole number of seconds", pc.DrainDuration.AsDuration())
	}
	if d := pc.TerminationDrainDuration; d != nil && d.AsDuration() < 0 {
		r.Errorf(p+".terminationDrainDuration", "%v must not be negative", d.AsDuration())
	}
	if pc.DiscoveryAddress == "" {
		r.Errorf(p+".discoveryAddress", "must be set to the address of the discovery service (host:port)")
	} else if err := checkHostPort(pc.DiscoveryAddress); err != nil {
		r.Errorf(p+".discoveryAddress", "%v", err)
	}
	checkTracing(r, p+".tracing", pc.Tracing)
	if pc.StatsdUdpAddress != "" {
		if err := checkHostPort(pc.StatsdUdpAddress); err != nil {
			r.Errorf(p+".statsdUdpAddress", "%v", err)
		}
	}
	//nolint:staticcheck // deprecated, still honoured by istiod
	if addr := pc.EnvoyMetricsServiceAddress; addr != "" {
		if err := checkHostPort(addr); err != nil {
			r.Errorf(p+".envoyMetricsServiceAddress", "%v", err)
		}
	}
	if addr := pc.GetEnvoyMetricsService().GetAddress(); addr != "" {
		if err := checkHostPort(addr); err != nil {
			r.Errorf(p+".envoyMetricsService.address", "%v", err)
		}
	}
	if addr := pc.GetEnvoyAccessLogService().GetAddress(); addr != "" {
		if err := checkHostPort(addr); err != nil {
			r.Errorf(p+".envoyAccessLogService.address", "%v", err)
		}
	}
	checkPort(r, p+".proxyAdminPort", pc.ProxyAdminPort)
	checkPort(r, p+".statusPort", pc.StatusPort)
	switch pc.ControlPlaneAuthPolicy {
	case meshconfig.AuthenticationPolicy_NONE, meshconfig.AuthenticationPolicy_MUTUAL_TLS:
	default:
		r.Errorf(p+".controlPlaneAuthPolicy", "%v is not allowed here: want NONE or MUTUAL_TLS", pc.ControlPlaneAuthPolicy)
	}
	if c := pc.Concurrency; c != nil && c.Value < 0 {
		r.Errorf(p+".concurrency", "%d must not be negative", c.Value)
	}
	if pc.StatNameLength < 0 {
		r.Errorf(p+".statNameLength", "%d must not be negative", pc.StatNameLength)
	}
	for i, re := range pc.GetProxyStatsMatcher().GetInclusionRegexps() {
		if _, err := regexp.Compile(re); err != nil {
			r.Errorf(fmt.Sprintf("%s.proxyStatsMatcher.inclusionRegexps[%d]", p, i), "invalid regular expression: %v", err)
		}
	}
	checkPrivateKeyProvider(r, p+".privateKeyProvider", pc.PrivateKeyProvider)
}

// checkTracing checks the tracer of defaultConfig.
func checkTracing(r *validation.Result, p string, t *meshconfig.Tracing) {
	if t == nil {
		return
	}
	// istiod replaces $(HOST_IP), which the agent fills in, before checking.
	hostIP := func(addr string) string { return strings.Replace(addr, "$(HOST_IP)", "127.0.0.1", 1) }
	switch tr := t.Tracer.(type) {
	case *meshconfig.Tracing_Zipkin_:
		if err := checkHostPort(hostIP(tr.Zipkin.GetAddress())); err != nil {
			r.Errorf(p+".zipkin.address", "%v", err)
		}
	case *meshconfig.Tracing_Datadog_:
		if err := checkHostPort(hostIP(tr.Datadog.GetAddress())); err != nil {
			r.Errorf(p+".datadog.address", "%v", err)
		}
	case *meshconfig.Tracing_Lightstep_:
		if err := checkHostPort(tr.Lightstep.GetAddress()); err != nil {
			r.Errorf(p+".lightstep.address", "%v", err)
		}
		if tr.Lightstep.GetAccessToken() == "" {
			r.Errorf(p+".lightstep.accessToken", "must be set")
		}
	}
	// Envoy takes the sampling rate as a percentage.
	if t.Sampling < 0 || t.Sampling > 100 {
		r.Errorf(p+".sampling", "%v is not a percentage in 0..100", t.Sampling)
	}
	for _, name := range slices.Sorted(maps.Keys(t.CustomTags)) {
		if t.CustomTags[name] == nil {
			r.Errorf(keyPath(p+".customTags", name), "must not be empty")
		}
	}
	checkClientTLS(r, p+".tlsSettings", t.TlsSettings)
}

// checkPrivateKeyProvider is istiod's validatePrivateKeyProvider.
func checkPrivateKeyProvider(r *validation.Result, p string, pkp *meshconfig.PrivateKeyProvider) {
	if pkp == nil {
		return
	}
	var poll *durationpb.Duration
	switch pr := pkp.Provider.(type) {
	case *meshconfig.PrivateKeyProvider_Cryptomb:
		p += ".cryptomb"
		if pr.Cryptomb == nil {
			r.Errorf(p, "must be set")
			return
		}
		poll = pr.Cryptomb.PollDelay
	case *meshconfig.PrivateKeyProvider_Qat:
		p += ".qat"
		if pr.Qat == nil {
			r.Errorf(p, "must be set")
			return
		}
		poll = pr.Qat.PollDelay
	default:
		r.Errorf(p, "one of cryptomb or qat must be set")
		return
	}
	if poll == nil || poll.AsDuration() <= 0 {
		r.Errorf(p+".pollDelay", "must be set to a positive duration")
	}
}

// checkClientTLS is istiod's ValidateTLS for client TLS settings.
func checkClientTLS(r *validation.Result, p string, s *networking.ClientTLSSettings) {
	if s == nil {
		return
	}
	simple := s.Mode == networking.ClientTLSSettings_SIMPLE
	mutual := s.Mode == networking.ClientTLSSettings_MUTUAL
	if s.GetInsecureSkipVerify().GetValue() {
		if simple && (s.CaCertificates != "" || s.CredentialName != "" || len(s.SubjectAltNames) > 0) {
			r.Errorf(p, "caCertificates, credentialName and subjectAltNames cannot be set when insecureSkipVerify is true")
		}
		if mutual && (s.CaCertificates != "" || len(s.SubjectAltNames) > 0) {
			r.Errorf(p, "caCertificates and subjectAltNames cannot be set when insecureSkipVerify is true")
		}
	}
	if (simple || mutual) && s.CredentialName != "" {
		if s.ClientCertificate != "" || s.CaCertificates != "" || s.PrivateKey != "" || s.CaCrl != "" {
			r.Errorf(p, "clientCertificate, privateKey, caCertificates and caCrl cannot be set when credentialName is set")
		}
		return
	}
	if mutual {
		if s.ClientCertificate == "" {
			r.Errorf(p+".clientCertificate", "must be set for MUTUAL mode")
		}
		if s.PrivateKey == "" {
			r.Errorf(p+".privateKey", "must be set for MUTUAL mode")
		}
	}
}

// checkExportTo checks a default exportTo list: "*" (everywhere), "."
// (the resource's own namespace), "~" (nowhere) or namespace names, with
// the rules istiod applies to a resource's exportTo.
func checkExportTo(r *validation.Result, p string, list []string) {
	seen := map[string]bool{}
	for i, e := range list {
		ep := fmt.Sprintf("%s[%d]", p, i)
		switch {
		case seen[e]:
			r.Errorf(ep, "duplicate value %q", e)
		case e == "*" || e == "." || e == "~":
		default:
			if err := checkNamespace(e); err != nil {
				r.Errorf(ep, `want "*", ".", "~" or a namespace name: %v`, err)
			}
		}
		seen[e] = true
	}
	if len(seen) > 1 && seen["*"] {
		r.Errorf(p, `"*" (everywhere) cannot be combined with other values`)
	}
	if len(seen) > 1 && seen["~"] {
		r.Errorf(p, `"~" (nowhere) cannot be combined with other values`)
	}
}

// checkLocalityLB is istiod's ValidateLocalityLbSetting.
func checkLocalityLB(r *validation.Result, p string, lb *networking.LocalityLoadBalancerSetting) {
	if lb == nil {
		return
	}
	if len(lb.Distribute) > 0 && len(lb.Failover) > 0 {
		r.Errorf(p, "distribute and failover cannot both be set")
		return
	}
	if len(lb.Failover) > 0 {
		for i, label := range lb.FailoverPriority {
			switch label {
			case "topology.kubernetes.io/region", "topology.kubernetes.io/zone", "topology.istio.io/subzone":
				r.Errorf(fmt.Sprintf("%s.failoverPriority[%d]", p, i), "topology label %q cannot be used together with failover", label)
			}
		}
	}
	from := make([]string, 0, len(lb.Distribute))
	for i, d := range lb.Distribute {
		dp := fmt.Sprintf("%s.distribute[%d]", p, i)
		from = append(from, d.GetFrom())
		var total uint32
		for _, loc := range slices.Sorted(maps.Keys(d.GetTo())) {
			w := d.To[loc]
			if w == 0 || w > 100 {
				r.Errorf(keyPath(dp+".to", loc), "weight %d is not in 1..100", w)
			}
			total += w
		}
		if total != 100 {
			r.Errorf(dp+".to", "weights add up to %d, want 100", total)
		}
		if err := checkLocalities(slices.Sorted(maps.Keys(d.GetTo()))); err != nil {
			r.Errorf(dp+".to", "%v", err)
		}
	}
	if err := checkLocalities(from); err != nil {
		r.Errorf(p+".distribute", "%v", err)
	}
	for i, f := range lb.Failover {
		fp := fmt.Sprintf("%s.failover[%d]", p, i)
		switch {
		case f.From == f.To:
			r.Errorf(fp, "from and to must be different regions")
		case strings.Contains(f.From, "/") || strings.Contains(f.To, "/"):
			r.Errorf(fp, "from and to must be regions, without zone or subzone")
		case strings.Contains(f.From, "*") || strings.Contains(f.To, "*"):
			r.Errorf(fp, "from and to must not contain the '*' wildcard")
		}
	}
}

// checkLocalities is istiod's validateLocalities: each locality is
// region[/zone[/subzone]] with at most a final '*', and no locality
// overlaps another.
func checkLocalities(localities []string) error {
	type zoneSet = map[string]map[string]bool
	regions := map[string]zoneSet{}
	for _, loc := range localities {
		if n := strings.Count(loc, "*"); n > 1 || (n == 1 && !strings.HasSuffix(loc, "*")) {
			return fmt.Errorf("locality %q: at most one '*' wildcard, at the end", loc)
		}
		if _, all := regions["*"]; all {
			return fmt.Errorf("locality %q overlaps with a previous one", loc)
		}
		parts := strings.SplitN(loc, "/", 3)
		if slices.Contains(parts, "") {
			return fmt.Errorf("locality %q must not have an empty region, zone or subzone", loc)
		}
		region := parts[0]
		switch len(parts) {
		case 1:
			if _, exists := regions[region]; exists {
				return fmt.Errorf("locality %q overlaps with a previous one", loc)
			}
			regions[region] = zoneSet{"*": {"*": true}}
		case 2:
			zones, exists := regions[region]
			if !exists {
				regions[region] = zoneSet{parts[1]: {"*": true}}
				continue
			}
			if _, all := zones["*"]; all {
				return fmt.Errorf("locality %q overlaps with a previous one", loc)
			}
			if _, dup := zones[parts[1]]; dup {
				return fmt.Errorf("locality %q overlaps with a previous one", loc)
			}
			zones[parts[1]] = map[string]bool{"*": true}
		case 3:
			zones, exists := regions[region]
			if !exists {
				regions[region] = zoneSet{parts[1]: {parts[2]: true}}
				continue
			}
			if _, all := zones["*"]; all {
				return fmt.Errorf("locality %q overlaps with a previous one", loc)
			}
			subzones, exists := zones[parts[1]]
			if !exists {
				zones[parts[1]] = map[string]bool{parts[2]: true}
				continue
			}
			if subzones["*"] || subzones[parts[2]] {
				return fmt.Errorf("locality %q overlaps with a previous one", loc)
			}
			subzones[parts[2]] = true
		}
	}
	return nil
}

// checkSelector checks a Kubernetes-style label selector.
func checkSelector(r *validation.Result, p string, s *meshconfig.LabelSelector) {
	if s == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(s.MatchLabels)) {
		lp := keyPath(p+".matchLabels", k)
		if errs := k8svalidation.IsQualifiedName(k); len(errs) > 0 {
			r.Errorf(lp, "invalid label key: %s", strings.Join(errs, "; "))
		}
		if errs := k8svalidation.IsValidLabelValue(s.MatchLabels[k]); len(errs) > 0 {
			r.Errorf(lp, "invalid label value %q: %s", shorten(s.MatchLabels[k]), strings.Join(errs, "; "))
		}
	}
	for i, e := range s.MatchExpressions {
		ep := fmt.Sprintf("%s.matchExpressions[%d]", p, i)
		if errs := k8svalidation.IsQualifiedName(e.GetKey()); len(errs) > 0 {
			r.Errorf(ep+".key", "invalid label key: %s", strings.Join(errs, "; "))
		}
		switch e.GetOperator() {
		case "In", "NotIn":
			if len(e.GetValues()) == 0 {
				r.Errorf(ep+".values", "must not be empty for operator %s", e.GetOperator())
			}
		case "Exists", "DoesNotExist":
			if len(e.GetValues()) > 0 {
				r.Errorf(ep+".values", "must be empty for operator %s", e.GetOperator())
			}
		default:
			r.Errorf(ep+".operator", "%q is not one of In, NotIn, Exists, DoesNotExist", e.GetOperator())
		}
		for j, v := range e.GetValues() {
			if errs := k8svalidation.IsValidLabelValue(v); len(errs) > 0 {
				r.Errorf(fmt.Sprintf("%s.values[%d]", ep, j), "invalid label value %q: %s", shorten(v), strings.Join(errs, "; "))
			}
		}
	}
}

// checkRetry checks a default retry policy as istiod checks a route's.
func checkRetry(r *validation.Result, p string, retry *networking.HTTPRetry) {
	if retry == nil {
		return
	}
	if retry.Attempts < 0 {
		r.Errorf(p+".attempts", "%d must not be negative", retry.Attempts)
	}
	if d := retry.PerTryTimeout; d != nil {
		checkMillis(r, p+".perTryTimeout", d, time.Millisecond)
	}
	if d := retry.Backoff; d != nil {
		checkMillis(r, p+".backoff", d, time.Millisecond)
	}
}

func checkKeepalive(r *validation.Result, p string, ka *networking.ConnectionPoolSettings_TCPSettings_TcpKeepalive) {
	if ka.Time != nil {
		checkMillis(r, p+".time", ka.Time, time.Millisecond)
	}
	if ka.Interval != nil {
		checkMillis(r, p+".interval", ka.Interval, time.Millisecond)
	}
}

// validECDHCurves are the curves istiod knows (security.IsValidECDHCurve).
func validECDHCurve(c string) bool {
	switch c {
	case "P-256", "P-384", "P-521", "X25519", "X25519Kyber768Draft00", "X25519MLKEM768":
		return true
	}
	return false
}

// checkCurves warns about curves istiod does not know and duplicates, as
// istiod does.
func checkCurves(r *validation.Result, p string, curves []string) {
	seen := map[string]bool{}
	for i, c := range curves {
		cp := fmt.Sprintf("%s[%d]", p, i)
		switch {
		case !validECDHCurve(c):
			r.Warnf(cp, "unrecognized ECDH curve %q", c)
		case seen[c]:
			r.Warnf(cp, "duplicate ECDH curve %q", c)
		}
		seen[c] = true
	}
}

// checkMillis checks that d is at least minimum and a whole number of
// milliseconds, which is what Envoy takes. It reports whether d passed.
func checkMillis(r *validation.Result, p string, d *durationpb.Duration, minimum time.Duration) bool {
	v := d.AsDuration()
	switch {
	case v < minimum:
		r.Errorf(p, "%v must be at least %v", v, minimum)
	case v%time.Millisecond != 0:
		r.Errorf(p, "%v is not a whole number of milliseconds", v)
	default:
		return true
	}
	return false
}

// checkPort checks a port that must be set.
func checkPort(r *validation.Result, p string, port int32) {
	if err := checkPortNumber(int(port)); err != nil {
		r.Errorf(p, "%v", err)
	}
}

// checkOptionalPort checks a port where 0 means unset.
func checkOptionalPort(r *validation.Result, p string, port int32) {
	if port != 0 {
		checkPort(r, p, port)
	}
}
