package openapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/cached"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"
	"sigs.k8s.io/yaml"
)

// These tests read the documents the way kubectl does, through client-go's
// discovery and OpenAPI clients against a live HTTP server.

var servedKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "Namespace"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
}

func newDiscoveryClient(t *testing.T) *discovery.DiscoveryClient {
	t.Helper()
	srv := newTestServer(t, newTestSpec(t))
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// patchSupportsV3 is how kubectl create/apply decide, from a group-version's
// OpenAPI v3 document, that the server validates fields itself
// (k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go): the first
// PATCH operation tagged with the kind must list the parameter.
func patchSupportsV3(doc *spec3.OpenAPI, gvk schema.GroupVersionKind, param string) bool {
	for _, path := range doc.Paths.Paths {
		op := path.Patch
		if op == nil {
			continue
		}
		var opGVK map[string]string
		if err := op.Extensions.GetObject(extensionGVK, &opGVK); err != nil {
			continue
		}
		if opGVK["group"] != gvk.Group || opGVK["version"] != gvk.Version || opGVK["kind"] != gvk.Kind {
			continue
		}
		for _, p := range op.Parameters {
			if p.Name == param {
				return true
			}
		}
		return false
	}
	return false
}

// patchSupportsV2 is the same decision from the protobuf v2 document
// (query_param_verifier.go), which also follows $refs to shared parameters.
func patchSupportsV2(doc *openapiv2.Document, gvk schema.GroupVersionKind, param string) bool {
	shared := map[string]*openapiv2.NamedParameter{}
	for _, p := range doc.GetParameters().GetAdditionalProperties() {
		shared["#/parameters/"+p.GetName()] = p
	}
	for _, path := range doc.GetPaths().GetPath() {
		op := path.GetValue().GetPatch()
		matches := false
		for _, ext := range op.GetVendorExtension() {
			if ext.GetName() != extensionGVK {
				continue
			}
			var v map[string]string
			if err := yaml.Unmarshal([]byte(ext.GetValue().GetYaml()), &v); err == nil {
				matches = v["group"] == gvk.Group && v["version"] == gvk.Version && v["kind"] == gvk.Kind
			}
			break
		}
		if !matches {
			continue
		}
		for _, p := range op.GetParameters() {
			if p.GetParameter().GetNonBodyParameter().GetQueryParameterSubSchema().GetName() == param {
				return true
			}
			if sp, ok := shared[p.GetJsonReference().GetXRef()]; ok && sp.GetValue().GetNonBodyParameter().GetQueryParameterSubSchema().GetName() == param {
				return true
			}
		}
		return false
	}
	return false
}

func TestClientGoOpenAPIV3(t *testing.T) {
	dc := newDiscoveryClient(t)
	root := openapi3.NewRoot(cached.NewClient(dc.OpenAPIV3()))

	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatalf("GroupVersions: %v", err)
	}
	for _, want := range []schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}, {Group: "rbac.authorization.k8s.io", Version: "v1"}} {
		if !slices.Contains(gvs, want) {
			t.Errorf("GroupVersions() = %v, missing %v", gvs, want)
		}
	}

	for _, gvk := range servedKinds {
		t.Run(gvk.Kind, func(t *testing.T) {
			doc, err := root.GVSpec(gvk.GroupVersion())
			if err != nil {
				t.Fatalf("GVSpec(%s): %v", gvk.GroupVersion(), err)
			}
			if !patchSupportsV3(doc, gvk, "fieldValidation") {
				t.Errorf("%s: kubectl would not find fieldValidation on PATCH in the v3 document", gvk)
			}
		})
	}
	doc, err := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if patchSupportsV3(doc, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, "fieldValidation") {
		t.Error("fieldValidation found for a kind that is not served")
	}

	if _, err := root.GVSpec(schema.GroupVersion{Group: "batch", Version: "v1"}); err == nil {
		t.Error("GVSpec of an unserved group-version succeeded")
	} else if _, ok := err.(*openapi3.GroupVersionNotFoundError); !ok {
		t.Errorf("GVSpec of an unserved group-version: %v, want GroupVersionNotFoundError", err)
	}
}

func TestClientGoOpenAPIV2(t *testing.T) {
	dc := newDiscoveryClient(t)
	// OpenAPISchema asks for the protobuf encoding only.
	doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	for _, gvk := range servedKinds {
		if !patchSupportsV2(doc, gvk, "fieldValidation") {
			t.Errorf("%s: kubectl would not find fieldValidation on PATCH in the v2 document", gvk)
		}
	}

	models, err := openapiproto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("NewOpenAPIData: %v", err)
	}
	pod := models.LookupModel("io.k8s.api.core.v1.Pod")
	if pod == nil {
		t.Fatal("no io.k8s.api.core.v1.Pod model")
	}
	if _, ok := pod.GetExtensions()[extensionGVK]; !ok {
		t.Error("v2 Pod model has no x-kubernetes-group-version-kind")
	}

	// kubectl apply's fallback: a strategic merge patch computed from the v2 model.
	meta := strategicpatch.NewPatchMetaFromOpenAPI(pod)
	checkContainerMerge(t, meta)
}

func TestClientGoTypeConverter(t *testing.T) {
	dc := newDiscoveryClient(t)
	tc, err := openapi.NewTypeConverter(dc.OpenAPIV3(), false)
	if err != nil {
		t.Fatalf("NewTypeConverter: %v", err)
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
	if _, err := tc.ObjectToTyped(pod); err != nil {
		t.Errorf("ObjectToTyped(Pod): %v", err)
	}
}

func TestStrategicMergePatchFromV3(t *testing.T) {
	dc := newDiscoveryClient(t)
	root := openapi3.NewRoot(dc.OpenAPIV3())
	doc, err := root.GVSpec(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	// kubectl apply finds the kind's schema by its extension, then patches.
	var podSchema string
	for name, s := range doc.Components.Schemas {
		var gvks []map[string]string
		if err := s.Extensions.GetObject(extensionGVK, &gvks); err != nil {
			continue
		}
		for _, gvk := range gvks {
			if gvk["group"] == "" && gvk["version"] == "v1" && gvk["kind"] == "Pod" {
				podSchema = name
			}
		}
	}
	if podSchema != "io.k8s.api.core.v1.Pod" {
		t.Fatalf("schema tagged as v1 Pod = %q", podSchema)
	}
	meta := strategicpatch.PatchMetaFromOpenAPIV3{Schema: doc.Components.Schemas[podSchema], SchemaList: doc.Components.Schemas}
	checkContainerMerge(t, meta)
}

// checkContainerMerge computes kubectl apply's three-way patch of a Pod whose
// one container changes image while the live object has gained a second
// container: merging by the container name keeps the other container.
func checkContainerMerge(t *testing.T, meta strategicpatch.LookupPatchMeta) {
	t.Helper()
	original := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"x"}]}}`
	modified := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"y"}]}}`
	current := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"x"},{"name":"sidecar","image":"s"}]}}`
	patch, err := strategicpatch.CreateThreeWayMergePatch([]byte(original), []byte(modified), []byte(current), meta, false)
	if err != nil {
		t.Fatalf("CreateThreeWayMergePatch: %v", err)
	}
	if !strings.Contains(string(patch), `$setElementOrder/containers`) {
		t.Errorf("patch %s does not merge containers by name", patch)
	}
	merged, err := strategicpatch.StrategicMergePatchUsingLookupPatchMeta([]byte(current), patch, meta)
	if err != nil {
		t.Fatalf("applying patch: %v", err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(merged, &pod); err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, c := range pod.Spec.Containers {
		images[c.Name] = c.Image
	}
	if len(images) != 2 || images["a"] != "y" || images["sidecar"] != "s" {
		t.Errorf("patched containers = %v, want a=y and sidecar=s", images)
	}
}
