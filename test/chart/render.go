// Package chart tests the Helm chart in manifests/charts/controlplane as a
// user meets it: helm lint and helm template with real helm (built by
// hack/install-tools.sh), the rendered manifests checked by a real
// kube-apiserver (strict server-side dry run, a real apply of the RBAC,
// SubjectAccessReviews), and the daemon run with the chart's
// ServiceAccount token.
package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/meshcp/meshcp/test/tools"
)

// Dir is the chart, relative to this package.
const Dir = "../../manifests/charts/controlplane"

// Helm runs helm with args in a scratch home, so it neither reads nor
// writes the user's helm configuration and never reaches a network.
func Helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	bin := tools.Helm(t)
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// Release names what is rendered.
type Release struct {
	Name, Namespace string
	// ValuesFiles are passed with -f, Set with --set, in order.
	ValuesFiles []string
	Set         []string
}

// Render runs helm template on the chart and decodes every object.
func Render(t testing.TB, r Release) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", r.Name, Dir, "--namespace", r.Namespace}
	for _, f := range r.ValuesFiles {
		args = append(args, "-f", f)
	}
	for _, s := range r.Set {
		args = append(args, "--set", s)
	}
	out, err := Helm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(out)
	if err != nil {
		t.Fatalf("decoding helm template output: %v", err)
	}
	return objs
}

// Decode splits a multi-document YAML stream into objects, skipping empty
// documents.
func Decode(stream string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stream), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		// Through JSON again, so numbers are int64 as the API machinery
		// has them, not float64.
		js, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
}

// Find returns the rendered object of kind and name, or nil.
func Find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// Kinds counts the rendered objects by kind.
func Kinds(objs []*unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	for _, o := range objs {
		out[o.GetKind()]++
	}
	return out
}
