package schema_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
)

// A file of mixed kinds decodes document by document: every good document
// becomes a Config, each bad one is an error naming file, line and object,
// and a bad document never keeps the others from being read.
func TestDecodeDocuments(t *testing.T) {
	data, err := os.ReadFile("testdata/mixed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	decoded := schema.Builtin().DecodeDocuments("testdata/mixed.yaml", data, "cluster.local")
	type want struct {
		key     string // or the error's start
		line    int
		warning string
		err     string
	}
	wants := []want{
		{key: "networking.istio.io/v1/VirtualService/bookinfo/reviews", line: 2},
		{key: "gateway.networking.k8s.io/v1/HTTPRoute/default/web", line: 15},
		{key: "core/v1/Service/bookinfo/reviews", line: 25},
		{key: "discovery.k8s.io/v1/EndpointSlice/bookinfo/reviews-1", line: 32},
		{key: "networking.istio.io/v1/DestinationRule/bookinfo/reviews", line: 42, warning: `unknown field "subsetz"`},
		{line: 50, err: "testdata/mixed.yaml:50: unsupported kind example.com/v1 Widget"},
		// The syntax error names the broken line of the file itself.
		{line: 54, err: "testdata/mixed.yaml:54: yaml: line 56: did not find expected ',' or '}'"},
		{key: "core/v1/Namespace/bookinfo", line: 58, warning: `metadata.namespace "ignored" ignored: Namespace is cluster-scoped`},
	}
	if len(decoded) != len(wants) {
		for _, d := range decoded {
			t.Logf("%v %v %v", d.Source, d.Config.Key(), d.Err)
		}
		t.Fatalf("%d documents, want %d", len(decoded), len(wants))
	}
	for i, w := range wants {
		d := decoded[i]
		if d.Source.Line != w.line {
			t.Errorf("document %d starts on line %d, want %d", i, d.Source.Line, w.line)
		}
		if w.err != "" {
			if d.Err == nil || !strings.HasPrefix(d.Err.Error(), w.err) {
				t.Errorf("document %d: error %v, want one starting %q", i, d.Err, w.err)
			}
			continue
		}
		if d.Err != nil {
			t.Errorf("document %d: %v", i, d.Err)
			continue
		}
		if got := d.Config.Key(); got != w.key {
			t.Errorf("document %d: key %s, want %s", i, got, w.key)
		}
		if d.Config.Domain != "cluster.local" {
			t.Errorf("document %d: domain %q", i, d.Config.Domain)
		}
		if w.warning != "" && (len(d.Warnings) == 0 || !strings.Contains(strings.Join(d.Warnings, "; "), w.warning)) {
			t.Errorf("document %d: warnings %v, want one with %q", i, d.Warnings, w.warning)
		}
	}
	es := decoded[3].Config.Spec.(*schema.EndpointSliceSpec)
	if len(es.Endpoints) != 1 || es.Endpoints[0].Addresses[0] != "127.0.0.1" {
		t.Errorf("endpoint slice spec = %+v", es)
	}
}

func TestDecodeList(t *testing.T) {
	list := `{"apiVersion":"v1","kind":"List","items":[
	  {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}},
	  {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"b"}}]}`
	decoded := schema.Builtin().DecodeDocuments("list.json", []byte(list), "")
	if len(decoded) != 2 || decoded[0].Config.Name != "a" || decoded[1].Config.Name != "b" {
		t.Fatalf("decoded %+v", decoded)
	}
}

func TestVersionAliases(t *testing.T) {
	r := schema.Builtin()
	for _, tc := range []struct {
		apiVersion, kind string
		want             config.GroupVersionKind
	}{
		{"networking.istio.io/v1alpha3", "VirtualService", schema.VirtualService},
		{"networking.istio.io/v1beta1", "Sidecar", schema.Sidecar},
		{"security.istio.io/v1beta1", "AuthorizationPolicy", schema.AuthorizationPolicy},
		{"gateway.networking.k8s.io/v1beta1", "HTTPRoute", schema.HTTPRoute},
		{"gateway.networking.k8s.io/v1alpha2", "TLSRoute", schema.TLSRoute},
		{"v1", "Service", schema.Service},
	} {
		s, ok := r.ByKind(tc.apiVersion, tc.kind)
		if !ok || s.GVK != tc.want {
			t.Errorf("ByKind(%s, %s) = %v, want %v", tc.apiVersion, tc.kind, s, tc.want)
		}
	}
	if _, ok := r.ByKind("networking.istio.io/v2", "VirtualService"); ok {
		t.Error("an unknown version resolved")
	}
}

// Every kind has the pieces the rest of meshcp relies on.
func TestEveryKindIsComplete(t *testing.T) {
	for _, s := range schema.Builtin().All() {
		if s.Plural == "" || s.ObjectType == nil || s.NewSpec() == nil {
			t.Errorf("%s: plural %q, object type %v", s, s.Plural, s.ObjectType)
		}
	}
}

// Durations are read as Istio users write them, Go style, without
// warnings; an unknown spec field is a warning.
func TestSpecFieldsAsUsersWriteThem(t *testing.T) {
	for _, tc := range []struct {
		field   string
		warning string
	}{
		{"timeout: 5s", ""},
		{"timeout: 30ms", ""},
		{"timeout: 1m", ""},
		{"timeout: 1h30m", ""},
		{"timeoutz: 5s", `unknown field "timeoutz"`},
	} {
		doc := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a, namespace: ns}\n" +
			"spec:\n  hosts: [a]\n  http:\n  - " + tc.field + "\n    route: [{destination: {host: a}}]\n"
		got := schema.Builtin().DecodeDocuments("x.yaml", []byte(doc), "")
		if len(got) != 1 || got[0].Err != nil {
			t.Fatalf("%s: %+v", tc.field, got)
		}
		warnings := strings.Join(got[0].Warnings, "; ")
		if (tc.warning == "") != (warnings == "") || !strings.Contains(warnings, tc.warning) {
			t.Errorf("%s: warnings %q, want %q", tc.field, warnings, tc.warning)
		}
	}
}

// Every kind is validated on ingest.
func TestEveryKindHasAValidator(t *testing.T) {
	for _, s := range schema.Builtin().All() {
		if s.Validate == nil {
			t.Errorf("%s has no validator", s)
		}
	}
}

// The bundled examples are valid: no errors, no warnings.
func TestExamplesAreValid(t *testing.T) {
	r := schema.Builtin()
	err := filepath.WalkDir("../../../examples/config", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, doc := range r.DecodeDocuments(path, data, "cluster.local") {
			if doc.Err != nil {
				t.Errorf("%v", doc.Err)
				continue
			}
			res := r.Validate(doc.Config)
			if !res.OK() || len(res.Warnings) > 0 || len(doc.Warnings) > 0 {
				t.Errorf("%s (%s): %v %v %v", doc.Config.Key(), doc.Source, res.Errors, res.Warnings, doc.Warnings)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Field names are matched case-sensitively, as the API server matches
// them: a miscapitalised field is an unknown field, reported as a warning,
// never silently taken for the real one.
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	for _, tc := range []struct {
		name, in    string
		wantErr     string
		wantWarning string
	}{
		{"spec", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspeC: {selector: {a: b}}\n", "", `unknown field "speC"`},
		{"metadata field", "apiVersion: v1\nkind: Service\nmetadata: {name: a, Labels: {x: y}}\n", "", `unknown field "metadata.Labels"`},
		{"apiVersion", "ApiVersion: v1\nkind: Service\nmetadata: {name: a}\n", "apiVersion and kind are required", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := schema.Builtin().DecodeDocuments("case.yaml", []byte(tc.in), "cluster.local")
			if len(docs) != 1 {
				t.Fatalf("decoded %d documents", len(docs))
			}
			d := docs[0]
			if tc.wantErr != "" {
				if d.Err == nil || !strings.Contains(d.Err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one with %q", d.Err, tc.wantErr)
				}
				return
			}
			if d.Err != nil || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], tc.wantWarning) {
				t.Fatalf("decoded with error %v, warnings %q; want the warning %q", d.Err, d.Warnings, tc.wantWarning)
			}
			if len(d.Config.Labels) != 0 {
				t.Errorf("miscapitalised labels were read: %v", d.Config.Labels)
			}
		})
	}
}
