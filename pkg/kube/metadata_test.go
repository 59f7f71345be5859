package kube_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/kube"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func deploymentMetadata(key string, labels map[string]string) *metav1.PartialObjectMetadata {
	meta := objectMeta(key, labels)
	meta.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	meta.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "App", Name: "owner", UID: "u1"}}
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta,
	}
}

func TestMetadataCollection(t *testing.T) {
	c := newFakeClient(t,
		deploymentMetadata("ns/web", map[string]string{"app": "web"}),
		deploymentMetadata("ns/db", map[string]string{"app": "db"}),
	)
	stop := krttest.Stop(t)
	all, err := kube.NewMetadataCollection(c.Client, deployments, kube.Filter{}, stop)
	if err != nil {
		t.Fatal(err)
	}
	web, err := kube.NewMetadataCollection(c.Client, deployments, kube.Filter{LabelSelector: "app=web"}, stop)
	if err != nil {
		t.Fatal(err)
	}
	waitSynced(t, all, stop)
	waitSynced(t, web, stop)
	if got := keysOf(all); got != "ns/db ns/web" {
		t.Errorf("all = %q, want ns/db ns/web", got)
	}
	if got := keysOf(web); got != "ns/web" {
		t.Errorf("app=web = %q, want ns/web", got)
	}
	got := *all.GetKey("ns/web")
	if len(got.ManagedFields) != 0 {
		t.Errorf("managedFields kept: %v", got.ManagedFields)
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].Name != "owner" {
		t.Errorf("owner references %v, want the owner", got.OwnerReferences)
	}

	// Created later, through the metadata fake.
	fake := c.MetadataFake.Resource(deployments).Namespace("ns").(metadatafake.MetadataClient)
	if _, err := fake.CreateFake(deploymentMetadata("ns/web-2", map[string]string{"app": "web"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitKeys(t, web, "ns/web ns/web-2")
	waitKeys(t, all, "ns/db ns/web ns/web-2")
	if err := c.Metadata().Resource(deployments).Namespace("ns").Delete(context.Background(), "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitKeys(t, all, "ns/web ns/web-2")
}

func TestMetadataCollectionErrors(t *testing.T) {
	c := newFakeClient(t)
	noMetadata := kube.NewClientFromClientsets(kube.Clientsets{Kube: c.KubeFake})
	t.Cleanup(noMetadata.Shutdown)
	stop := krttest.Stop(t)
	if _, err := kube.NewMetadataCollection(c.Client, schema.GroupVersionResource{Group: "apps", Resource: "deployments"}, kube.Filter{}, stop); err == nil || !strings.Contains(err.Error(), "needs a version") {
		t.Errorf("no version: %v", err)
	}
	if _, err := kube.NewMetadataCollection(c.Client, deployments, kube.Filter{LabelSelector: "a in ("}, stop); err == nil || !strings.Contains(err.Error(), "label selector for metadata of apps/v1/deployments") {
		t.Errorf("bad selector: %v", err)
	}
	if _, err := kube.NewMetadataCollection(noMetadata, deployments, kube.Filter{}, stop); err == nil || !strings.Contains(err.Error(), "no metadata client") {
		t.Errorf("no metadata client: %v", err)
	}
}
