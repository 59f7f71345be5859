package schema_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/test/testcert"
)

// A Secret is read as a summary: its type, the names of its entries and
// whether tls.crt and tls.key form a key pair. Its data is nowhere in the
// Config, not even in its JSON.
func TestSecretIsReadAsASummary(t *testing.T) {
	pair, other := testcert.SelfSigned(t, "example.com"), testcert.SelfSigned(t, "example.com")
	cert, key, otherCert := string(pair.Cert), string(pair.Key), string(other.Cert)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, data string
		keys       []string
		valid      bool
		problem    string
	}{
		{"a key pair", "data: {tls.crt: " + b64(cert) + ", tls.key: " + b64(key) + "}", []string{"tls.crt", "tls.key"}, true, ""},
		{"stringData counts", "stringData: {tls.crt: " + jsonString(cert) + ", tls.key: " + jsonString(key) + "}", []string{"tls.crt", "tls.key"}, true, ""},
		{"a key of another certificate", "data: {tls.crt: " + b64(otherCert) + ", tls.key: " + b64(key) + "}", []string{"tls.crt", "tls.key"}, false, "not a usable key pair"},
		{"no key", "data: {tls.crt: " + b64(cert) + "}", []string{"tls.crt"}, false, "has no tls.key"},
		{"not PEM", "data: {tls.crt: " + b64("secret-bytes-0123") + ", tls.key: " + b64("secret-bytes-4567") + "}", []string{"tls.crt", "tls.key"}, false, "not a usable key pair"},
		{"no TLS at all", "data: {password: " + b64("hunter2-secret") + "}", []string{"password"}, false, "neither tls.crt nor tls.key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: v1\nkind: Secret\nmetadata: {name: cert, namespace: ns}\ntype: kubernetes.io/tls\n" + tc.data + "\n"
			got := schema.Builtin().DecodeDocuments("secret.yaml", []byte(doc), "")
			if len(got) != 1 || got[0].Err != nil {
				t.Fatalf("decoded %+v", got)
			}
			spec, ok := got[0].Config.Spec.(*schema.SecretSpec)
			if !ok {
				t.Fatalf("spec is a %T", got[0].Config.Spec)
			}
			if spec.Type != "kubernetes.io/tls" || strings.Join(spec.Keys, ",") != strings.Join(tc.keys, ",") ||
				spec.TLS.Valid != tc.valid || !strings.Contains(spec.TLS.Problem, tc.problem) || (tc.problem == "") != (spec.TLS.Problem == "") {
				t.Errorf("summary = %+v", spec)
			}
			js, err := json.Marshal(got[0].Config)
			if err != nil {
				t.Fatal(err)
			}
			for _, leak := range []string{"PRIVATE KEY", "BEGIN CERTIFICATE", b64(key)[:16], "secret-bytes", "hunter2"} {
				if strings.Contains(string(js), leak) || strings.Contains(spec.TLS.Problem, leak) {
					t.Errorf("the Config shows %q:\n%s", leak, js)
				}
			}
			if res := schema.Builtin().Validate(got[0].Config); !res.OK() {
				t.Errorf("rejected: %v", res.Errors)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A Secret of an unknown, unqualified type is rejected, as the API server
// would.
func TestSecretType(t *testing.T) {
	doc := "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\ntype: \"not a type\"\n"
	got := schema.Builtin().DecodeDocuments("secret.yaml", []byte(doc), "")
	if len(got) != 1 || got[0].Err != nil {
		t.Fatalf("decoded %+v", got)
	}
	if res := schema.Builtin().Validate(got[0].Config); res.OK() || res.Errors[0].Path != "type" {
		t.Errorf("validation = %+v", res)
	}
}
