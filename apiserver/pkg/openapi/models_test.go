package openapi

import (
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

func gvkOf(t *testing.T, s *spec.Schema) []interface{} {
	t.Helper()
	if s == nil {
		t.Fatal("no schema")
	}
	list, _ := s.Extensions[extensionGVK].([]interface{})
	return list
}

func TestModels(t *testing.T) {
	models, err := Models(nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := models["io.k8s.api.core.v1.Pod"]
	if list := gvkOf(t, pod); len(list) != 1 || list[0].(map[string]interface{})["kind"] != "Pod" {
		t.Errorf("Pod's kinds: %v", list)
	}
	// What a kind refers to is there, with upstream's list extensions that
	// make containers a map keyed by name.
	podSpec := models["io.k8s.api.core.v1.PodSpec"]
	if podSpec == nil || podSpec.Properties["containers"].Extensions["x-kubernetes-list-type"] != "map" {
		t.Errorf("PodSpec.containers: %+v", podSpec)
	}
	if models["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"] == nil {
		t.Error("no ObjectMeta")
	}

	custom := Resource{Group: "stable.example.com", Version: "v1", Kind: "CronTab", Resource: "crontabs", Namespaced: true,
		Verbs: []string{"get"}, ListKind: "CronTabList", Schema: &spec.Schema{SchemaProps: spec.SchemaProps{
			Type: []string{"object"},
			Properties: map[string]spec.Schema{"spec": {SchemaProps: spec.SchemaProps{Type: []string{"object"},
				Properties: map[string]spec.Schema{"image": {SchemaProps: spec.SchemaProps{Type: []string{"string"}}}}}}},
		}}}
	models, err = Models([]Resource{custom})
	if err != nil {
		t.Fatal(err)
	}
	ct := models["com.example.stable.v1.CronTab"]
	if list := gvkOf(t, ct); len(list) != 1 || list[0].(map[string]interface{})["group"] != "stable.example.com" {
		t.Errorf("CronTab's kinds: %v", list)
	}
	if _, ok := ct.Properties["spec"].Properties["image"]; !ok {
		t.Errorf("CronTab schema: %+v", ct.Properties)
	}
	if models["io.k8s.api.core.v1.Pod"] != nil {
		t.Error("a custom resource's models include unrelated built-in kinds")
	}
}
