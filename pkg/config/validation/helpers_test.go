package validation

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/meshcp/meshcp/pkg/config"
)

// fromYAML decodes a spec written in YAML, as users write it: with
// protojson for protobuf specs, encoding/json for Go structs.
func fromYAML[S any](t testing.TB, y string) *S {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	spec := new(S)
	if m, ok := any(spec).(proto.Message); ok {
		err = protojson.Unmarshal(js, m)
	} else {
		err = json.Unmarshal(js, spec)
	}
	if err != nil {
		t.Fatalf("bad test spec: %v\n%s", err, js)
	}
	return spec
}

// cfg wraps a spec in a Config named test/default.
func cfg(spec any) config.Config {
	return config.Config{Meta: config.Meta{Name: "test", Namespace: "default"}, Spec: spec}
}

// hasFinding reports whether findings has one at path whose message
// contains msg.
func hasFinding(findings []Finding, path, msg string) bool {
	for _, f := range findings {
		if f.Path == path && strings.Contains(f.Message, msg) {
			return true
		}
	}
	return false
}

// requireClean fails unless res has neither errors nor warnings.
func requireClean(t *testing.T, res Result) {
	t.Helper()
	if len(res.Errors) > 0 || len(res.Warnings) > 0 {
		t.Fatalf("want no findings, got errors %v, warnings %v", res.Errors, res.Warnings)
	}
}

// requireError fails unless res has an error at path mentioning msg.
func requireError(t *testing.T, res Result, path, msg string) {
	t.Helper()
	if !hasFinding(res.Errors, path, msg) {
		t.Fatalf("want error at %q containing %q, got errors %v, warnings %v", path, msg, res.Errors, res.Warnings)
	}
}

// requireWarning fails unless res has a warning at path mentioning msg and
// no error.
func requireWarning(t *testing.T, res Result, path, msg string) {
	t.Helper()
	if !hasFinding(res.Warnings, path, msg) {
		t.Fatalf("want warning at %q containing %q, got errors %v, warnings %v", path, msg, res.Errors, res.Warnings)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("want only warnings, got errors %v", res.Errors)
	}
}

// specCase is one invalid (or warned-about) variant of a valid spec.
type specCase[S any] struct {
	name   string
	mutate func(s *S)
	path   string
	msg    string
	// warn: the finding is a warning and the object is accepted.
	warn bool
}

// runSpecCases checks that valid passes cleanly and that each case yields
// its finding at its path.
func runSpecCases[S any](t *testing.T, validate Func, valid func(t testing.TB) *S, cases []specCase[S]) {
	t.Helper()
	t.Run("valid", func(t *testing.T) {
		requireClean(t, validate(cfg(valid(t))))
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := valid(t)
			tc.mutate(spec)
			res := validate(cfg(spec))
			if tc.warn {
				requireWarning(t, res, tc.path, tc.msg)
			} else {
				requireError(t, res, tc.path, tc.msg)
			}
		})
	}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
