package envoy_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/meshcp/meshcp/pkg/xds/envoy"
)

// What a client was sent reads as Envoy's config dump: the four dumps in
// Envoy's order, each resource with its version, rendered by protojson.
func TestConfigDump(t *testing.T) {
	m := loadWorld(t, "mesh", nil).model()
	var sent []envoy.Sent
	for _, typ := range []string{envoy.RouteType, envoy.ListenerType, envoy.ClusterType} { // not in push order, and no EDS
		r := envoy.Builders{}.Generate(envoy.Request{Proxy: grpcApp, TypeURL: typ, Names: []string{"reviews:9080", reviewsV1}}, m)
		sent = append(sent, envoy.Sent{TypeURL: typ, Version: "7", At: time.Unix(1700000000, 0), Resources: r.Resources})
	}
	dump := envoy.ConfigDump(sent)
	if err := envoy.Validate(dump); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, c := range dump.Configs {
		types = append(types, c.TypeUrl[strings.LastIndex(c.TypeUrl, ".")+1:])
	}
	if got := strings.Join(types, " "); got != "ClustersConfigDump ListenersConfigDump RoutesConfigDump" {
		t.Errorf("dumps = %s", got)
	}
	js, err := protojson.Marshal(dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"reviews:9080"`, `"versionInfo":"7"`, `"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster"`, `outbound|9080|v1|` + reviews} {
		if !strings.Contains(string(js), want) {
			t.Errorf("config dump lacks %s:\n%s", want, js)
		}
	}
}
