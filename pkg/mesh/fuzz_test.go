package mesh_test

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/meshcp/meshcp/pkg/mesh"
)

// FuzzApply feeds arbitrary files to Apply. It must never panic; every
// error must either say the file is not a YAML or JSON object or name the
// field at fault; an accepted config must validate; and writing an accepted
// config out in full and applying that to the defaults must give it back,
// which checks that the merge loses nothing it reads.
func FuzzApply(f *testing.F) {
	for _, seed := range []string{
		"",
		"{}",
		"null",
		"[]",
		"a: [",
		goodA,
		bad,
		"enableTracing: false\naccessLogFile: /dev/stdout\nconnectTimeout: 1s\n",
		"defaultConfig:\n  proxyMetadata: {A: b}\n  proxyHeaders: {server: {disabled: true}}\n  tracing: {sampling: 1.5}\n",
		"defaultConfig:\n  tracing: {zipkin: {address: a:1}, datadog: {address: b:2}}\n",
		"extensionProviders:\n- name: envoy\n  envoyFileAccessLog: {path: /dev/stderr}\n- name: x\n  zipkin: {service: z.ns.svc.cluster.local, port: 9411}\n",
		"extensionProviders: [null, 1, {name: 2}]\n",
		"outboundTrafficPolicy: {mode: 7}\n",
		"outboundTrafficPolicy: {mode: REGISTRY_ONLY, tls: {mode: SIMPLE}}\n",
		"localityLbSetting: {distribute: [{from: a/b/*, to: {a/c/*: 100}}]}\n",
		"trust_domain: x\ntrustDomain: y\n",
		"defaultConfig: {proxyAdminPort: 1e3}\n",
		"connectTimeout: 315576000001s\n",
		"discoverySelectors: [{matchExpressions: [{key: a, operator: In}]}]\n",
		"defaultConfig: {proxyStatsMatcher: {inclusionRegexps: ['(']}}\n",
		`{"meshMTLS": {"ecdhCurves": ["P-256"]}, "tlsDefaults": {"ecdhCurves": ["nope"]}}`,
		"extensionProviders: [{name: p, prometheus: {}, opentelemetry: {}}]\n",
		"a: &a [*a, *a]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, res, err := mesh.Apply(mesh.Default(), data)
		if err != nil {
			if m != nil {
				t.Fatalf("Apply returned a config with error %v", err)
			}
			if errors.Is(err, mesh.ErrNotYAML) {
				return
			}
			if len(res.Errors) == 0 {
				t.Fatalf("error %v without findings", err)
			}
			for _, e := range res.Errors {
				if e.Path == "" {
					t.Fatalf("error finding without a path: %v (file %q)", e, data)
				}
			}
			return
		}
		if !res.OK() || m == nil {
			t.Fatalf("no error, but result %v and config %v", res, m)
		}
		for _, w := range res.Warnings {
			if w.Path == "" {
				t.Fatalf("warning without a path: %v", w)
			}
		}
		if v := mesh.Validate(m); !v.OK() {
			t.Fatalf("accepted config does not validate: %v", v.Errors)
		}
		full, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
		if err != nil {
			t.Fatalf("marshaling the accepted config: %v", err)
		}
		again, _, err := mesh.Apply(mesh.Default(), full)
		if err != nil {
			t.Fatalf("applying the accepted config in full: %v\n%s", err, full)
		}
		if !proto.Equal(again, m) {
			t.Fatalf("round trip changed the config:\n got %v\nwant %v", again, m)
		}
	})
}
