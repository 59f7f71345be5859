package kube_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
)

func TestNewClientNeedsAConfig(t *testing.T) {
	if _, err := kube.NewClient(nil); err == nil {
		t.Fatal("NewClient(nil) succeeded")
	}
}

// An API server that refuses every request: the collection does not sync,
// nothing panics, the log says which informer fails and why, and
// everything stops cleanly.
func TestClientAgainstARefusingAPIServer(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"configmaps is forbidden"}`))
	}))
	t.Cleanup(server.Close)
	logs, logger := newLogBuffer(t)
	c, err := kube.NewClient(&rest.Config{Host: server.URL}, kube.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	if c.Kube() == nil || c.Istio() == nil || c.GatewayAPI() == nil || c.Extensions() == nil || c.Metadata() == nil {
		t.Fatal("a clientset is missing")
	}
	stop := krttest.Stop(t)
	cms, err := kube.NewCollection[*corev1.ConfigMap](c, kube.Filter{Namespace: "ns"}, stop, krt.WithLogger(krttest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return logs.count("list or watch failed") > 0 })
	if n := logs.count(`informer="v1 ConfigMap (ns=ns)"`); n == 0 {
		t.Error("the warning does not name the informer")
	}
	if n := logs.count(`listing v1 ConfigMap in \"ns\"`); n == 0 {
		t.Error("the error does not name the kind and namespace")
	}
	time.Sleep(10 * time.Millisecond)
	if cms.HasSynced() {
		t.Error("synced although nothing could be listed")
	}
}
