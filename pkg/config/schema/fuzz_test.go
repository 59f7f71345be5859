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

// FuzzDecodeDocuments feeds files the fuzzer makes to the YAML/JSON
// decoder and checks what a user relies on: it never panics; every
// document is either a Config or an error that names the file and line;
// every Config has a registered kind and a name; and writing a decoded
// Config back as YAML is a fixed point: what is written reads back as a
// Config that is written the same and equals the first one read back.
// (The Config read from the fuzzer's text itself may differ from those in
// ways that encode the same: an empty list there is no list once written.)
func FuzzDecodeDocuments(f *testing.F) {
	seeds := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
		"apiVersion: networking.istio.io/v1alpha3\nkind: VirtualService\nmetadata: {name: r}\nspec: {hosts: [r], http: [{route: [{destination: {host: r}}]}]}\n---\n# only a comment\n",
		"kind: List\napiVersion: v1\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: s, namespace: n}, spec: {ports: [{port: 80}]}}\n",
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"h","uid":"u","generation":3},"spec":{"hostnames":["a.example.com"]}}`,
		"kind: VirtualService\nmetadata: [unclosed\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d}\nspec: {host: d, unknownField: 1}\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	// Every file of the examples and the test data is a seed too.
	for _, root := range []string{"testdata", "../../../examples"} {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
				if data, err := os.ReadFile(path); err == nil {
					f.Add(data)
				}
			}
			return nil
		})
	}
	r := schema.Builtin()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range r.DecodeDocuments("fuzz.yaml", data, "cluster.local") {
			if d.Source.File != "fuzz.yaml" || d.Source.Line < 1 {
				t.Fatalf("document without a source line: %+v", d.Source)
			}
			if d.Err != nil {
				if !strings.Contains(d.Err.Error(), "fuzz.yaml:") {
					t.Fatalf("error does not name file and line: %v", d.Err)
				}
				continue
			}
			c := d.Config
			if _, ok := r.ByGVK(c.GroupVersionKind); !ok {
				t.Fatalf("decoded a Config of unregistered kind %v", c.GroupVersionKind)
			}
			if c.Name == "" {
				t.Fatalf("decoded %s without a name", c.GroupVersionKind)
			}
			first, out := roundTrip(t, r, c)
			second, out2 := roundTrip(t, r, first)
			if string(out) != string(out2) {
				t.Fatalf("%s is written differently once read back:\n%s\nthen\n%s", c.Key(), out, out2)
			}
			if !first.Equals(second) {
				t.Fatalf("%s changed through a YAML round trip:\n first %+v\nsecond %+v\n%s", c.Key(), first, second, out)
			}
		}
	})
}

// roundTrip writes c as YAML and reads it back.
func roundTrip(t *testing.T, r *schema.Registry, c config.Config) (config.Config, []byte) {
	t.Helper()
	out, err := c.MarshalYAML()
	if err != nil {
		t.Fatalf("%s decodes but does not encode: %v", c.Key(), err)
	}
	again := r.DecodeDocuments("again.yaml", out, "cluster.local")
	if len(again) != 1 || again[0].Err != nil {
		t.Fatalf("%s written back does not decode: %+v\n%s", c.Key(), again, out)
	}
	return again[0].Config, out
}
