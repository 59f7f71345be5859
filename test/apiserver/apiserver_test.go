package apiserver_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	istionetworking "istio.io/api/networking/v1alpha3"
	istionetworkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	istioclient "istio.io/client-go/pkg/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshcp/meshcp/test/apiserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestStart checks the control plane comes up at the pinned version with
// every Gateway API and Istio CRD Established (Start waits for it; this
// checks the set is complete).
func TestStart(t *testing.T) {
	s := apiserver.Start(t)
	kube, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	v, err := kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if v.GitVersion != apiserver.KubeVersion {
		t.Errorf("kube-apiserver is %s, want %s (is %s pointing at other binaries?)", v.GitVersion, apiserver.KubeVersion, apiserver.EnvAssets)
	}
	if !strings.HasPrefix(s.Config.Host, "https://127.0.0.1:") {
		t.Errorf("API server at %s, want loopback", s.Config.Host)
	}

	want := map[string]bool{
		"gateways.gateway.networking.k8s.io":        false,
		"httproutes.gateway.networking.k8s.io":      false,
		"grpcroutes.gateway.networking.k8s.io":      false,
		"referencegrants.gateway.networking.k8s.io": false,
		"virtualservices.networking.istio.io":       false,
		"destinationrules.networking.istio.io":      false,
		"authorizationpolicies.security.istio.io":   false,
	}
	for _, crd := range s.CRDs {
		if _, ok := want[crd.Name]; ok {
			want[crd.Name] = true
		}
		if strings.HasSuffix(crd.Spec.Group, ".x-k8s.io") {
			t.Errorf("experimental-channel CRD %s installed", crd.Name)
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("CRD %s not installed", name)
		}
	}
	t.Logf("%d CRDs installed", len(s.CRDs))
}

// TestObjectsSurviveAPIServerRestart creates a core, a Gateway API and an
// Istio object, stops kube-apiserver (gracefully, or with SIGKILL) and
// starts it again on the same etcd, and reads them back through the
// clients built before the restart.
func TestObjectsSurviveAPIServerRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(*apiserver.Server) error
	}{
		{"graceful", (*apiserver.Server).StopAPIServer},
		{"killed", (*apiserver.Server).KillAPIServer},
	} {
		t.Run(tc.name, func(t *testing.T) { testRestart(t, tc.stop) })
	}
}

func testRestart(t *testing.T, stop func(*apiserver.Server) error) {
	s := apiserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	kube, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gatewayclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	istio, err := istioclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}

	const ns = "restart"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{
				ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}},
			},
			Hostnames: []gatewayv1.Hostname{"web.example.com"},
		},
	}
	if _, err := gw.GatewayV1().HTTPRoutes(ns).Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating HTTPRoute: %v", err)
	}
	vs := &istionetworkingv1.VirtualService{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: istionetworking.VirtualService{
			Hosts: []string{"web.restart.svc.cluster.local"},
			Http: []*istionetworking.HTTPRoute{{
				Route: []*istionetworking.HTTPRouteDestination{{
					Destination: &istionetworking.Destination{Host: "web"},
				}},
			}},
		},
	}
	if _, err := istio.NetworkingV1().VirtualServices(ns).Create(ctx, vs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating VirtualService: %v", err)
	}

	if err := stop(s); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
		t.Error("API server still answers after StopAPIServer")
	}
	if err := s.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	// StartAPIServer refuses a second process on the same etcd and port.
	if err := s.StartAPIServer(ctx); err == nil {
		t.Error("StartAPIServer on a running server succeeded")
	}

	if _, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace after restart: %v", err)
	}
	gotRoute, err := gw.GatewayV1().HTTPRoutes(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Errorf("HTTPRoute after restart: %v", err)
	} else if h := gotRoute.Spec.Hostnames; len(h) != 1 || h[0] != "web.example.com" {
		t.Errorf("HTTPRoute hostnames after restart = %v", h)
	}
	gotVS, err := istio.NetworkingV1().VirtualServices(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Errorf("VirtualService after restart: %v", err)
	} else if h := gotVS.Spec.GetHosts(); len(h) != 1 || h[0] != "web.restart.svc.cluster.local" {
		t.Errorf("VirtualService hosts after restart = %v", h)
	}

	if fi, err := os.Stat(s.EtcdDataDir); err != nil || !fi.IsDir() {
		t.Errorf("etcd data dir %s: %v", s.EtcdDataDir, err)
	}
}
