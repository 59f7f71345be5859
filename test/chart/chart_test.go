package chart

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshcp/meshcp/pkg/mesh"
	"github.com/meshcp/meshcp/test/apiserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite the chart's CRD files from the modules go.mod pins")

const (
	release    = "meshcp"
	namespace  = "meshcp-system"
	fullname   = "meshcp-controlplane"
	fullValues = "testdata/values-full.yaml"
)

func defaults() Release { return Release{Name: release, Namespace: namespace} }

func full() Release {
	return Release{Name: release, Namespace: namespace, ValuesFiles: []string{fullValues}}
}

// helm lint --strict passes with the default values and with every value
// changed.
func TestLint(t *testing.T) {
	for _, args := range [][]string{
		{"lint", "--strict", Dir},
		{"lint", "--strict", Dir, "-f", fullValues},
	} {
		out, err := Helm(t, args...)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if strings.Contains(out, "[WARNING]") || strings.Contains(out, "[ERROR]") || strings.Contains(out, "[INFO]") {
			t.Errorf("helm %s:\n%s", strings.Join(args, " "), out)
		}
	}
}

// With the default values the chart renders exactly the objects a release
// needs, and no CRDs.
func TestTemplateDefaults(t *testing.T) {
	objs := Render(t, defaults())
	want := map[string]int{
		"Deployment": 1, "Service": 1, "ServiceAccount": 1, "ConfigMap": 1,
		"ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1,
		"PodDisruptionBudget": 1,
	}
	if got := Kinds(objs); !maps.Equal(got, want) {
		t.Errorf("rendered kinds %v, want %v", got, want)
	}
	for _, o := range objs {
		if o.GetNamespace() != "" && o.GetNamespace() != namespace {
			t.Errorf("%s %s in namespace %s", o.GetKind(), o.GetName(), o.GetNamespace())
		}
		if o.GetLabels()["app.kubernetes.io/instance"] != release {
			t.Errorf("%s %s lacks the release label", o.GetKind(), o.GetName())
		}
	}

	dep := Find(objs, "Deployment", fullname)
	if dep == nil {
		t.Fatal("no Deployment")
	}
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas = %d, want 2", r)
	}
	pod := nested[map[string]any](t, dep, "spec", "template", "spec")
	if pod["serviceAccountName"] != fullname {
		t.Errorf("serviceAccountName = %v", pod["serviceAccountName"])
	}
	psc := pod["securityContext"].(map[string]any)
	if psc["runAsNonRoot"] != true || psc["seccompProfile"].(map[string]any)["type"] != "RuntimeDefault" {
		t.Errorf("pod securityContext = %v, want non-root with seccomp RuntimeDefault", psc)
	}
	c := pod["containers"].([]any)[0].(map[string]any)
	sc := c["securityContext"].(map[string]any)
	if sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false ||
		!slices.Equal(sc["capabilities"].(map[string]any)["drop"].([]any), []any{"ALL"}) {
		t.Errorf("container securityContext = %v", sc)
	}
	res := c["resources"].(map[string]any)
	if res["requests"] == nil || res["limits"] == nil {
		t.Errorf("resources = %v, want requests and limits", res)
	}
	if p := c["readinessProbe"].(map[string]any)["httpGet"].(map[string]any); p["path"] != "/ready" {
		t.Errorf("readiness probe %v, want /ready", p)
	}
	if p := c["livenessProbe"].(map[string]any)["httpGet"].(map[string]any); p["path"] != "/healthz" {
		t.Errorf("liveness probe %v, want /healthz", p)
	}
	args := toStrings(c["args"].([]any))
	for _, want := range []string{"--in-cluster", "--mesh-config=/etc/meshcp/mesh/mesh.yaml", "--debug-addr=:8080", "--metrics-addr=:15014", "--xds-addr=:15010", "--xds-tls-addr=:15012", "--lease-name=" + fullname + "-leader"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}

	svc := Find(objs, "Service", fullname)
	if svc == nil {
		t.Fatal("no Service")
	}
	if typ, _, _ := unstructured.NestedString(svc.Object, "spec", "type"); typ != "ClusterIP" {
		t.Errorf("Service type %s: the debug port must stay in the cluster", typ)
	}
	ports := map[string]int64{}
	for _, p := range nested[[]any](t, svc, "spec", "ports") {
		pm := p.(map[string]any)
		ports[pm["name"].(string)] = pm["port"].(int64)
	}
	if want := map[string]int64{"grpc-xds": 15010, "https-xds": 15012, "http-metrics": 15014, "http-debug": 8080}; !maps.Equal(ports, want) {
		t.Errorf("Service ports %v, want %v", ports, want)
	}

	// The mesh config the chart mounts is one the daemon accepts.
	cm := Find(objs, "ConfigMap", fullname+"-mesh")
	if cm == nil {
		t.Fatal("no mesh ConfigMap")
	}
	meshYAML, _, _ := unstructured.NestedString(cm.Object, "data", "mesh.yaml")
	m, res2, err := mesh.Apply(mesh.Default(), []byte(meshYAML))
	if err != nil || !res2.OK() {
		t.Fatalf("the chart's mesh config is rejected: %v %v\n%s", err, res2.Errors, meshYAML)
	}
	if m.GetRootNamespace() != "istio-system" {
		t.Errorf("root namespace %q", m.GetRootNamespace())
	}
}

// Every value changed: autoscaling, TLS, CRDs, scheduling and the rest all
// show up where they belong.
func TestTemplateNonDefault(t *testing.T) {
	objs := Render(t, full())
	kinds := Kinds(objs)
	if kinds["HorizontalPodAutoscaler"] != 1 || kinds["CustomResourceDefinition"] < 20 {
		t.Errorf("rendered kinds %v, want an HPA and the CRDs", kinds)
	}
	if kinds["ServiceAccount"] != 0 {
		t.Error("serviceAccount.create=false still renders a ServiceAccount")
	}
	dep := Find(objs, "Deployment", fullname)
	if _, found, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); found {
		t.Error("replicas set although the HPA owns them")
	}
	pod := nested[map[string]any](t, dep, "spec", "template", "spec")
	for _, field := range []string{"nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "priorityClassName", "imagePullSecrets"} {
		if pod[field] == nil {
			t.Errorf("pod spec lacks %s", field)
		}
	}
	if pod["serviceAccountName"] != "custom-sa" {
		t.Errorf("serviceAccountName %v, want custom-sa", pod["serviceAccountName"])
	}
	c := pod["containers"].([]any)[0].(map[string]any)
	if c["image"] != "registry.example.com/meshcp@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" {
		t.Errorf("image %v, want the digest-pinned one", c["image"])
	}
	args := toStrings(c["args"].([]any))
	for _, want := range []string{"--log-level=info,krt=debug", "--log-format=text", "--domain=example.internal", "--krt-checks=mutation",
		"--xds-tls-cert=/etc/meshcp/tls/tls.crt", "--xds-tls-key=/etc/meshcp/tls/tls.key", "--xds-client-ca=/etc/meshcp/tls/ca.crt",
		"--push-debounce=50ms", "--push-debounce-max=2s", "--xds-max-connection-age=10m",
		"--lease-duration=20s", "--lease-renew-deadline=12s", "--lease-retry-period=3s"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	var tlsVolume bool
	for _, v := range pod["volumes"].([]any) {
		if s, ok := v.(map[string]any)["secret"].(map[string]any); ok && s["secretName"] == "meshcp-xds-tls" {
			tlsVolume = true
		}
	}
	if !tlsVolume {
		t.Error("tls.secretName mounts no Secret")
	}
	annotations := nested[map[string]any](t, dep, "spec", "template", "metadata", "annotations")
	if annotations["example.com/team"] != "mesh" {
		t.Errorf("pod annotations %v", annotations)
	}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" && o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s is not kept on uninstall", o.GetName())
		}
	}
}

// values.yaml is documented field by field: every key has a comment above it.
func TestValuesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(Dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var undocumented []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			p := strings.TrimPrefix(path+"."+key.Value, ".")
			// Keys of free-form maps (annotations, selectors) are data, not fields.
			if key.HeadComment == "" && !freeForm(path) {
				undocumented = append(undocumented, fmt.Sprintf("%s (line %d)", p, key.Line))
			}
			walk(val, p)
		}
	}
	walk(doc.Content[0], "")
	if len(undocumented) > 0 {
		t.Errorf("values.yaml fields without a comment above them:\n%s", strings.Join(undocumented, "\n"))
	}
}

// freeForm reports whether the keys under path are user data (annotation
// names, mesh config fields documented by Istio) rather than chart fields.
func freeForm(path string) bool {
	for _, p := range []string{"podAnnotations", "podLabels", "meshConfig", "nodeSelector", "affinity", "service.annotations", "serviceAccount.annotations"} {
		if path == p || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// The chart's CRD files are exactly the manifests of the module versions
// go.mod pins, each marked to be kept on uninstall. With -update they are
// rewritten.
func TestCRDFilesAreCurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	paths, err := apiserver.CRDPaths(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []struct{ name, path string }{
		{"gateway-api-standard.yaml", paths[0]},
		{"istio.yaml", paths[1]},
	} {
		want, err := crdFile(src.path)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(Dir, "files", "crds", src.name)
		if *update {
			if err := os.WriteFile(dst, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(dst)
		if err != nil {
			t.Fatalf("%v (go test ./test/chart -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not the manifests of %s: run go test ./test/chart -run TestCRDFilesAreCurrent -update", dst, src.path)
		}
	}
}

// crdFile gathers the YAML files at path (a file or a folder of them, in
// name order) into one stream, with helm.sh/resource-policy: keep added to
// every CustomResourceDefinition.
func crdFile(path string) ([]byte, error) {
	var files []string
	if info, err := os.Stat(path); err != nil {
		return nil, err
	} else if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".yaml") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		sort.Strings(files)
	} else {
		files = []string{path}
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# Written by go test ./test/chart -update from %s; do not edit.\n", moduleRelative(path))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				if err.Error() == "EOF" {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
				continue
			}
			root := doc.Content[0]
			if mapValue(root, "kind").Value == "CustomResourceDefinition" {
				meta := mapValue(root, "metadata")
				ann := mapValue(meta, "annotations")
				if ann.Kind == 0 {
					ann = &yaml.Node{Kind: yaml.MappingNode}
					meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "annotations"}, ann)
				}
				ann.Content = append(ann.Content,
					&yaml.Node{Kind: yaml.ScalarNode, Value: "helm.sh/resource-policy"},
					&yaml.Node{Kind: yaml.ScalarNode, Value: "keep"})
			}
			out.WriteString("---\n")
			enc := yaml.NewEncoder(&out)
			enc.SetIndent(2)
			if err := enc.Encode(&doc); err != nil {
				return nil, err
			}
			if err := enc.Close(); err != nil {
				return nil, err
			}
		}
	}
	return out.Bytes(), nil
}

// mapValue returns the value of key in a mapping node, or an empty node.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return &yaml.Node{}
}

// moduleRelative shortens a module cache path to module@version/path.
func moduleRelative(path string) string {
	if i := strings.Index(path, "/pkg/mod/"); i >= 0 {
		return path[i+len("/pkg/mod/"):]
	}
	return path
}

func nested[T any](t *testing.T, o *unstructured.Unstructured, fields ...string) T {
	t.Helper()
	v, found, err := unstructured.NestedFieldNoCopy(o.Object, fields...)
	if err != nil || !found {
		t.Fatalf("%s %s has no %s", o.GetKind(), o.GetName(), strings.Join(fields, "."))
	}
	out, ok := v.(T)
	if !ok {
		t.Fatalf("%s %s: %s is a %T", o.GetKind(), o.GetName(), strings.Join(fields, "."), v)
	}
	return out
}

func toStrings(in []any) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = fmt.Sprint(v)
	}
	return out
}
