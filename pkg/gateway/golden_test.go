package gateway_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/config/sources"
	"github.com/meshcp/meshcp/pkg/gateway"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestGolden from the current output")

// golden is what a case produces, as its golden file holds it.
type golden struct {
	// Rejected lists the inputs validation rejected, with the reasons.
	Rejected []string `json:"rejected,omitempty"`
	// Gateways and VirtualServices are the derived Istio configs.
	Gateways        []json.RawMessage `json:"gateways"`
	VirtualServices []json.RawMessage `json:"virtualServices"`
	// Status holds the computed status of each object, by
	// "Kind/namespace/name".
	Status map[string]any `json:"status"`
}

// TestGolden translates each testdata/*.yaml (the Gateway API objects,
// Services, Namespaces, Secrets and ReferenceGrants of one case) read as
// the daemon reads a folder, and compares the derived Istio configs and
// the computed statuses with testdata/*.golden.yaml. Every derived config
// must pass meshcp's own validation. Run with -update to rewrite the
// golden files, then read the diff: a golden file is a claim about
// behaviour.
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases = slices.DeleteFunc(cases, func(p string) bool { return strings.HasSuffix(p, ".golden.yaml") })
	if len(cases) == 0 {
		t.Fatal("no cases in testdata")
	}
	for _, input := range cases {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := translate(t, input)
			path := strings.TrimSuffix(input, ".yaml") + ".golden.yaml"
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the output (run with -update and review the diff):\n%s", path, lineDiff(string(want), string(got)))
			}
		})
	}
}

// translate runs one case and renders what it produces.
func translate(t *testing.T, input string) []byte {
	t.Helper()
	data, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	stop := krttest.Stop(t)
	src, err := sources.FromFolder(dir, stop, sources.Options{Domain: "cluster.local", Logger: krttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !src.WaitUntilSynced(stop) {
		t.Fatal("the sources never synced")
	}
	c, err := gateway.New(gateway.InputsFrom(src), stop, gateway.Options{Domain: "cluster.local", Logger: krttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	waitSynced(t, stop, c)

	var out golden
	for _, k := range src.Configz().Kinds {
		for _, r := range k.Rejected {
			var reasons []string
			for _, e := range r.Errors {
				reasons = append(reasons, e.Path+": "+e.Message)
			}
			out.Rejected = append(out.Rejected, k.Kind+" "+r.Key+": "+strings.Join(reasons, "; "))
		}
	}
	for _, u := range src.Configz().Unreadable {
		out.Rejected = append(out.Rejected, "unreadable: "+u.Error)
	}
	registry := schema.Builtin()
	out.Gateways = renderConfigs(t, registry, c.Gateways)
	out.VirtualServices = renderConfigs(t, registry, c.VirtualServices)
	out.Status = map[string]any{}
	for gvk, statuses := range c.Statuses.ByKind() {
		for _, s := range statuses.List() {
			out.Status[gvk.Kind+"/"+s.Object.ResourceName()] = compactStatus(s.Status)
		}
	}
	js, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// waitSynced waits for every output of the translation.
func waitSynced(t *testing.T, stop <-chan struct{}, c *gateway.Controller) {
	t.Helper()
	syncers := []krt.Syncer{c.Gateways, c.VirtualServices}
	for _, s := range c.Statuses.ByKind() {
		syncers = append(syncers, s)
	}
	for _, s := range syncers {
		if !s.WaitUntilSynced(stop) {
			t.Fatal("the translation never synced")
		}
	}
}

// renderConfigs renders a collection's configs sorted by key, after
// checking each passes validation.
func renderConfigs(t *testing.T, registry *schema.Registry, c krt.Collection[config.Config]) []json.RawMessage {
	t.Helper()
	configs := c.List()
	slices.SortFunc(configs, func(a, b config.Config) int { return strings.Compare(a.Key(), b.Key()) })
	out := make([]json.RawMessage, 0, len(configs))
	for _, cfg := range configs {
		if res := registry.Validate(cfg); !res.OK() {
			t.Errorf("derived %s is invalid: %v", cfg.Key(), res.Err())
		}
		js, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, js)
	}
	return out
}

// compactStatus renders a computed status for review by eye: each
// condition on one line, "Type=Status Reason: message (generation N)",
// listeners and parents by name.
func compactStatus(status any) any {
	switch s := status.(type) {
	case *gatewayv1.GatewayClassStatus:
		features := make([]string, len(s.SupportedFeatures))
		for i, f := range s.SupportedFeatures {
			features[i] = string(f.Name)
		}
		return map[string]any{"conditions": compactConditions(s.Conditions), "supportedFeatures": strings.Join(features, ",")}
	case *gatewayv1.GatewayStatus:
		addrs := []string{}
		for _, a := range s.Addresses {
			addrs = append(addrs, string(*a.Type)+" "+a.Value)
		}
		listeners := map[string]any{}
		for _, l := range s.Listeners {
			var kinds []string
			for _, k := range l.SupportedKinds {
				kinds = append(kinds, string(k.Kind))
			}
			listeners[string(l.Name)] = map[string]any{
				"attachedRoutes": l.AttachedRoutes,
				"supportedKinds": strings.Join(kinds, ","),
				"conditions":     compactConditions(l.Conditions),
			}
		}
		return map[string]any{"addresses": addrs, "conditions": compactConditions(s.Conditions), "listeners": listeners}
	case *gatewayv1.RouteStatus:
		parents := []any{}
		for _, p := range s.Parents {
			ref := string(p.ParentRef.Name)
			if p.ParentRef.Namespace != nil {
				ref = string(*p.ParentRef.Namespace) + "/" + ref
			}
			if p.ParentRef.SectionName != nil {
				ref += " section " + string(*p.ParentRef.SectionName)
			}
			if p.ParentRef.Port != nil {
				ref += fmt.Sprintf(" port %d", *p.ParentRef.Port)
			}
			parents = append(parents, map[string]any{"parentRef": ref, "controllerName": p.ControllerName, "conditions": compactConditions(p.Conditions)})
		}
		return map[string]any{"parents": parents}
	}
	return status
}

func compactConditions(conds []metav1.Condition) []string {
	out := make([]string, len(conds))
	for i, c := range conds {
		out[i] = fmt.Sprintf("%s=%s %s: %s (generation %d)", c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
		if !c.LastTransitionTime.IsZero() {
			out[i] += " lastTransitionTime set"
		}
	}
	return out
}

// lineDiff shows the lines that differ between two texts, for failures.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want: %s\n  got:  %s\n", i+1, wl, gl)
			if b.Len() > 4000 {
				b.WriteString("...\n")
				break
			}
		}
	}
	return b.String()
}
