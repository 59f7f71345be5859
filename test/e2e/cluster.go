package e2e

import (
	"os"
	"path/filepath"
	"testing"

	istioclient "istio.io/client-go/pkg/clientset/versioned"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/kubernetes"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshcp/meshcp/test/apiserver"
)

// Cluster is a real kube-apiserver for a test, with typed clients for
// every API group meshcp reads and a kubeconfig file for the daemon.
type Cluster struct {
	*apiserver.Server
	// KubeconfigPath is a file holding Server.KubeConfig, for --kubeconfig.
	KubeconfigPath string
	Kube           kubernetes.Interface
	Istio          istioclient.Interface
	Gateway        gatewayclient.Interface
	CRDs           apiextensionsclient.Interface
}

// StartCluster starts a kube-apiserver and etcd for t (see apiserver.Start)
// and builds clients for it.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	s := apiserver.Start(t)
	c := &Cluster{Server: s, KubeconfigPath: filepath.Join(t.TempDir(), "kubeconfig")}
	if err := os.WriteFile(c.KubeconfigPath, s.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if c.Kube, err = kubernetes.NewForConfig(s.Config); err != nil {
		t.Fatal(err)
	}
	if c.Istio, err = istioclient.NewForConfig(s.Config); err != nil {
		t.Fatal(err)
	}
	if c.Gateway, err = gatewayclient.NewForConfig(s.Config); err != nil {
		t.Fatal(err)
	}
	if c.CRDs, err = apiextensionsclient.NewForConfig(s.Config); err != nil {
		t.Fatal(err)
	}
	return c
}
