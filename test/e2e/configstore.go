package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// ConfigStore is where a test keeps the daemon's configuration, written
// as a user writes it: YAML files in the folder of a file-mode daemon
// (FolderStore), or objects in the API server of a Kubernetes-mode one
// (ClusterStore). The same YAML goes to either.
type ConfigStore interface {
	// Apply creates or replaces every object of a multi-document YAML.
	Apply(t testing.TB, docs string)
	// Delete removes every object the documents name; missing ones are
	// no error.
	Delete(t testing.TB, docs string)
}

// object is the identity of one YAML document.
type object struct {
	u   *unstructured.Unstructured
	gvk schema.GroupVersionKind
}

// parseDocs splits a multi-document YAML into objects.
func parseDocs(t testing.TB, docs string) []object {
	t.Helper()
	var out []object
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("test YAML: %v\n%s", err, doc)
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		out = append(out, object{u: u, gvk: u.GroupVersionKind()})
	}
	return out
}

// FolderStore keeps each object in a file of its own in a watched folder.
type FolderStore struct{ Dir string }

func (f FolderStore) path(o object) string {
	return filepath.Join(f.Dir, strings.ToLower(o.gvk.Kind)+"."+o.u.GetNamespace()+"."+o.u.GetName()+".yaml")
}

// Apply writes each object's file, replacing it at once.
func (f FolderStore) Apply(t testing.TB, docs string) {
	t.Helper()
	for _, o := range parseDocs(t, docs) {
		data, err := yaml.Marshal(o.u.Object)
		if err != nil {
			t.Fatal(err)
		}
		tmp := f.path(o) + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f.path(o)); err != nil {
			t.Fatal(err)
		}
	}
}

// Delete removes each object's file.
func (f FolderStore) Delete(t testing.TB, docs string) {
	t.Helper()
	for _, o := range parseDocs(t, docs) {
		if err := os.Remove(f.path(o)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// ClusterStore writes objects to an API server.
type ClusterStore struct{ Client dynamic.Interface }

// NewClusterStore is a store over a test cluster.
func NewClusterStore(t testing.TB, c *Cluster) ClusterStore {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.Server.Config)
	if err != nil {
		t.Fatal(err)
	}
	return ClusterStore{Client: dyn}
}

// resources are the plurals of the kinds traffic tests write.
var resources = map[string]string{
	"Service": "services", "Pod": "pods", "Namespace": "namespaces", "EndpointSlice": "endpointslices",
	"VirtualService": "virtualservices", "DestinationRule": "destinationrules",
	"HTTPRoute": "httproutes", "GRPCRoute": "grpcroutes",
}

func (c ClusterStore) resource(t testing.TB, o object) dynamic.ResourceInterface {
	t.Helper()
	plural, ok := resources[o.gvk.Kind]
	if !ok {
		t.Fatalf("ClusterStore does not know kind %s", o.gvk.Kind)
	}
	r := c.Client.Resource(o.gvk.GroupVersion().WithResource(plural))
	if o.gvk.Kind == "Namespace" {
		return r
	}
	return r.Namespace(o.u.GetNamespace())
}

// Apply creates each object, or updates it (retrying on conflicts).
func (c ClusterStore) Apply(t testing.TB, docs string) {
	t.Helper()
	for _, o := range parseDocs(t, docs) {
		r := c.resource(t, o)
		err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, WaitTimeout, true, func(ctx context.Context) (bool, error) {
			cur, err := r.Get(ctx, o.u.GetName(), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				_, err = r.Create(ctx, o.u, metav1.CreateOptions{})
			case err == nil:
				next := o.u.DeepCopy()
				next.SetResourceVersion(cur.GetResourceVersion())
				_, err = r.Update(ctx, next, metav1.UpdateOptions{})
			}
			if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			t.Fatalf("applying %s %s/%s: %v", o.gvk.Kind, o.u.GetNamespace(), o.u.GetName(), err)
		}
	}
}

// Delete deletes each object.
func (c ClusterStore) Delete(t testing.TB, docs string) {
	t.Helper()
	for _, o := range parseDocs(t, docs) {
		err := c.resource(t, o).Delete(context.Background(), o.u.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("deleting %s %s/%s: %v", o.gvk.Kind, o.u.GetNamespace(), o.u.GetName(), err)
		}
	}
}
