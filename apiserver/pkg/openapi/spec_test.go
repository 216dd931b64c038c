package openapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func TestGroupVersions(t *testing.T) {
	s := newTestSpec(t)
	want := []string{"api/v1", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1"}
	if got := s.GroupVersions(); !slices.Equal(got, want) {
		t.Errorf("GroupVersions() = %v, want %v", got, want)
	}
}

func TestReplicaSetPatchOperation(t *testing.T) {
	s := newTestSpec(t)
	doc := v3Doc(t, s, "apis/apps/v1")
	op := at(t, doc, "paths", "/apis/apps/v1/namespaces/{namespace}/replicasets/{name}", "patch").(map[string]interface{})

	if got := op["operationId"]; got != "patchAppsV1NamespacedReplicaSet" {
		t.Errorf("operationId = %v", got)
	}
	if got := op["x-kubernetes-action"]; got != "patch" {
		t.Errorf("x-kubernetes-action = %v", got)
	}
	wantGVK := map[string]interface{}{"group": "apps", "version": "v1", "kind": "ReplicaSet"}
	if got := op["x-kubernetes-group-version-kind"]; !reflect.DeepEqual(got, wantGVK) {
		t.Errorf("x-kubernetes-group-version-kind = %v, want %v", got, wantGVK)
	}
	var params []string
	for _, p := range op["parameters"].([]interface{}) {
		params = append(params, p.(map[string]interface{})["name"].(string))
	}
	if want := []string{"dryRun", "fieldManager", "fieldValidation", "force"}; !slices.Equal(params, want) {
		t.Errorf("operation parameters = %v, want %v", params, want)
	}
	content := at(t, op, "requestBody", "content").(map[string]interface{})
	for _, ct := range []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"} {
		if ref := at(t, content, ct, "schema", "$ref"); ref != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" {
			t.Errorf("request body %s = %v", ct, ref)
		}
	}
	for _, code := range []string{"200", "201"} {
		if ref := at(t, op, "responses", code, "content", "application/json", "schema", "$ref"); ref != "#/components/schemas/io.k8s.api.apps.v1.ReplicaSet" {
			t.Errorf("response %s = %v", code, ref)
		}
	}
	if got := at(t, op, "responses", "401", "description"); got != "Unauthorized" {
		t.Errorf("401 = %v", got)
	}
	var pathParams []string
	for _, p := range at(t, doc, "paths", "/apis/apps/v1/namespaces/{namespace}/replicasets/{name}", "parameters").([]interface{}) {
		pathParams = append(pathParams, p.(map[string]interface{})["name"].(string))
	}
	if want := []string{"name", "namespace", "pretty"}; !slices.Equal(pathParams, want) {
		t.Errorf("path parameters = %v, want %v", pathParams, want)
	}
}

func TestOperations(t *testing.T) {
	s := newTestSpec(t)
	tests := []struct {
		gv, path, method string
		id, action       string
		gvk              string // group/version/kind of the operation
		params           []string
		response         string // schema of the 200 application/json response
	}{
		{"api/v1", "/api/v1/namespaces/{namespace}/pods", "get", "listCoreV1NamespacedPod", "list", "/v1/Pod",
			[]string{"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"},
			"io.k8s.api.core.v1.PodList"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods", "post", "createCoreV1NamespacedPod", "post", "/v1/Pod",
			[]string{"dryRun", "fieldManager", "fieldValidation"}, "io.k8s.api.core.v1.Pod"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods", "delete", "deleteCoreV1CollectionNamespacedPod", "deletecollection", "/v1/Pod",
			[]string{"continue", "dryRun", "fieldSelector", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential", "labelSelector", "limit", "orphanDependents", "propagationPolicy", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds"},
			"io.k8s.apimachinery.pkg.apis.meta.v1.Status"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}", "delete", "deleteCoreV1NamespacedPod", "delete", "/v1/Pod",
			[]string{"dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential", "orphanDependents", "propagationPolicy"},
			"io.k8s.api.core.v1.Pod"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}", "put", "replaceCoreV1NamespacedPod", "put", "/v1/Pod",
			[]string{"dryRun", "fieldManager", "fieldValidation"}, "io.k8s.api.core.v1.Pod"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}", "get", "readCoreV1NamespacedPod", "get", "/v1/Pod", nil, "io.k8s.api.core.v1.Pod"},
		{"api/v1", "/api/v1/pods", "get", "listCoreV1PodForAllNamespaces", "list", "/v1/Pod", nil, "io.k8s.api.core.v1.PodList"},
		{"api/v1", "/api/v1/watch/namespaces/{namespace}/pods", "get", "watchCoreV1NamespacedPodList", "watchlist", "/v1/Pod", nil, "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"},
		{"api/v1", "/api/v1/watch/namespaces/{namespace}/pods/{name}", "get", "watchCoreV1NamespacedPod", "watch", "/v1/Pod", nil, "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"},
		{"api/v1", "/api/v1/watch/pods", "get", "watchCoreV1PodListForAllNamespaces", "watchlist", "/v1/Pod", nil, "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/status", "patch", "patchCoreV1NamespacedPodStatus", "patch", "/v1/Pod",
			[]string{"dryRun", "fieldManager", "fieldValidation", "force"}, "io.k8s.api.core.v1.Pod"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/binding", "post", "createCoreV1NamespacedPodBinding", "post", "/v1/Binding",
			[]string{"dryRun", "fieldManager", "fieldValidation"}, "io.k8s.api.core.v1.Binding"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/eviction", "post", "createCoreV1NamespacedPodEviction", "post", "policy/v1/Eviction",
			[]string{"dryRun", "fieldManager", "fieldValidation"}, "io.k8s.api.policy.v1.Eviction"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/log", "get", "readCoreV1NamespacedPodLog", "get", "/v1/Pod",
			[]string{"container", "follow", "insecureSkipTLSVerifyBackend", "limitBytes", "previous", "sinceSeconds", "stream", "tailLines", "timestamps"}, ""},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/exec", "post", "connectCoreV1PostNamespacedPodExec", "connect", "/v1/PodExecOptions", nil, ""},
		{"api/v1", "/api/v1/namespaces/{name}", "delete", "deleteCoreV1Namespace", "delete", "/v1/Namespace",
			[]string{"dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential", "orphanDependents", "propagationPolicy"},
			"io.k8s.apimachinery.pkg.apis.meta.v1.Status"},
		{"api/v1", "/api/v1/namespaces/{namespace}/endpoints", "post", "createCoreV1NamespacedEndpoints", "post", "/v1/Endpoints", nil, "io.k8s.api.core.v1.Endpoints"},
		{"apis/apps/v1", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "put", "replaceAppsV1NamespacedDeploymentScale", "put", "autoscaling/v1/Scale",
			[]string{"dryRun", "fieldManager", "fieldValidation"}, "io.k8s.api.autoscaling.v1.Scale"},
		{"apis/apps/v1", "/apis/apps/v1/replicasets", "get", "listAppsV1ReplicaSetForAllNamespaces", "list", "apps/v1/ReplicaSet", nil, "io.k8s.api.apps.v1.ReplicaSetList"},
		{"apis/rbac.authorization.k8s.io/v1", "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}", "patch", "patchRbacAuthorizationV1ClusterRole", "patch", "rbac.authorization.k8s.io/v1/ClusterRole",
			[]string{"dryRun", "fieldManager", "fieldValidation", "force"}, "io.k8s.api.rbac.v1.ClusterRole"},
		{"apis/rbac.authorization.k8s.io/v1", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "delete", "deleteRbacAuthorizationV1CollectionClusterRole", "deletecollection", "rbac.authorization.k8s.io/v1/ClusterRole", nil, "io.k8s.apimachinery.pkg.apis.meta.v1.Status"},
	}
	docs := map[string]map[string]interface{}{}
	for _, gv := range s.GroupVersions() {
		docs[gv] = v3Doc(t, s, gv)
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			op := at(t, docs[tt.gv], "paths", tt.path, tt.method).(map[string]interface{})
			if op["operationId"] != tt.id {
				t.Errorf("operationId = %v, want %s", op["operationId"], tt.id)
			}
			if op["x-kubernetes-action"] != tt.action {
				t.Errorf("x-kubernetes-action = %v, want %s", op["x-kubernetes-action"], tt.action)
			}
			gvk := op["x-kubernetes-group-version-kind"].(map[string]interface{})
			if got := gvk["group"].(string) + "/" + gvk["version"].(string) + "/" + gvk["kind"].(string); got != tt.gvk {
				t.Errorf("x-kubernetes-group-version-kind = %s, want %s", got, tt.gvk)
			}
			if tt.params != nil {
				// Parameters every operation of a path shares sit on the
				// path; count them too, less the path's own and pretty.
				var got []string
				pathParams, _ := at(t, docs[tt.gv], "paths", tt.path).(map[string]interface{})["parameters"].([]interface{})
				opParams, _ := op["parameters"].([]interface{})
				for _, p := range append(pathParams, opParams...) {
					p := p.(map[string]interface{})
					if name := p["name"].(string); p["in"] == "query" && name != "pretty" {
						got = append(got, name)
					}
				}
				sort.Strings(got)
				if !slices.Equal(got, tt.params) {
					t.Errorf("parameters = %v, want %v", got, tt.params)
				}
			}
			if tt.response != "" {
				ref := at(t, op, "responses", "200", "content", "application/json", "schema", "$ref")
				if ref != "#/components/schemas/"+tt.response {
					t.Errorf("200 response = %v, want %s", ref, tt.response)
				}
			}
		})
	}
}

func TestStreamingSubresourcesAnswerStrings(t *testing.T) {
	s := newTestSpec(t)
	doc := v3Doc(t, s, "api/v1")
	tests := []struct{ path, method, contentType string }{
		{"/api/v1/namespaces/{namespace}/pods/{name}/log", "get", "text/plain"},
		{"/api/v1/namespaces/{namespace}/pods/{name}/exec", "get", "*/*"},
		{"/api/v1/namespaces/{namespace}/pods/{name}/exec", "post", "*/*"},
	}
	for _, tt := range tests {
		got := at(t, doc, "paths", tt.path, tt.method, "responses", "200", "content", tt.contentType, "schema", "type")
		if got != "string" {
			t.Errorf("%s %s: 200 %s schema type = %v, want string", tt.method, tt.path, tt.contentType, got)
		}
	}
}

func TestPodSchemaExtensions(t *testing.T) {
	s := newTestSpec(t)
	doc := v3Doc(t, s, "api/v1")
	schemas := at(t, doc, "components", "schemas")

	containers := at(t, schemas, "io.k8s.api.core.v1.PodSpec", "properties", "containers").(map[string]interface{})
	for k, want := range map[string]interface{}{
		"x-kubernetes-patch-merge-key": "name",
		"x-kubernetes-patch-strategy":  "merge",
		"x-kubernetes-list-type":       "map",
	} {
		if containers[k] != want {
			t.Errorf("PodSpec.containers %s = %v, want %v", k, containers[k], want)
		}
	}
	wantGVK := []interface{}{map[string]interface{}{"group": "", "version": "v1", "kind": "Pod"}}
	if got := at(t, schemas, "io.k8s.api.core.v1.Pod", "x-kubernetes-group-version-kind"); !reflect.DeepEqual(got, wantGVK) {
		t.Errorf("Pod x-kubernetes-group-version-kind = %v, want %v", got, wantGVK)
	}
	// v3 keeps refs wrapped in allOf with their defaults, as upstream.
	if got := at(t, schemas, "io.k8s.api.core.v1.Pod", "properties", "metadata", "allOf"); got == nil {
		t.Error("Pod.metadata is not an allOf-wrapped ref")
	}
	// Only definitions reachable from core/v1 routes are in its document.
	if _, ok := schemas.(map[string]interface{})["io.k8s.api.apps.v1.ReplicaSet"]; ok {
		t.Error("core/v1 document holds apps/v1 definitions")
	}
}

func TestV2Document(t *testing.T) {
	s := newTestSpec(t)
	var sw spec.Swagger
	if err := json.Unmarshal(s.v2.json, &sw); err != nil {
		t.Fatalf("decoding v2: %v", err)
	}
	if sw.Swagger != "2.0" || sw.Info.Title != "Kubernetes" || sw.Info.Version != "v1.32.4-skiff" {
		t.Errorf("swagger %q info %+v", sw.Swagger, sw.Info.InfoProps)
	}
	for _, p := range []string{
		"/api/v1/namespaces/{namespace}/pods/{name}",
		"/apis/apps/v1/namespaces/{namespace}/replicasets/{name}/scale",
		"/apis/rbac.authorization.k8s.io/v1/clusterroles",
	} {
		if _, ok := sw.Paths.Paths[p]; !ok {
			t.Errorf("v2 has no path %s", p)
		}
	}
	if _, ok := sw.SecurityDefinitions["BearerToken"]; !ok {
		t.Error("v2 has no BearerToken security definition")
	}
	ios := sw.Definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
	if !ios.Type.Contains("string") || ios.Format != "int-or-string" {
		t.Errorf("v2 IntOrString = %v %q, want the v2 string/int-or-string form", ios.Type, ios.Format)
	}
	if bytes.Contains(s.v2.json, []byte(`"default"`)) {
		t.Error("v2 definitions still carry defaults")
	}
	gvks, ok := sw.Definitions["io.k8s.api.apps.v1.Deployment"].Extensions[extensionGVK]
	if !ok {
		t.Fatal("v2 Deployment has no x-kubernetes-group-version-kind")
	}
	if got, _ := json.Marshal(gvks); string(got) != `[{"group":"apps","kind":"Deployment","version":"v1"}]` {
		t.Errorf("v2 Deployment x-kubernetes-group-version-kind = %s", got)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := newTestSpec(t), newTestSpec(t)
	if a.v2.etag != b.v2.etag {
		t.Error("v2 differs between builds")
	}
	for gv, doc := range a.v3 {
		if doc.etag != b.v3[gv].etag {
			t.Errorf("%s differs between builds", gv)
		}
	}
	if !bytes.Equal(a.discovery.json, b.discovery.json) {
		t.Error("v3 discovery differs between builds")
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name      string
		resources []Resource
		want      string
	}{
		{"unknown kind", []Resource{{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Verbs: []string{"get"}}}, "no Go type known"},
		{"unknown verb", []Resource{{Version: "v1", Kind: "Pod", Resource: "pods", Verbs: []string{"frobnicate"}}}, "unknown verb"},
		{"duplicate", []Resource{{Version: "v1", Kind: "Pod", Resource: "pods"}, {Version: "v1", Kind: "Pod", Resource: "pods"}}, "listed twice"},
		{"missing kind", []Resource{{Version: "v1", Resource: "pods"}}, "must be set"},
		{"slash", []Resource{{Version: "v1", Kind: "Pod", Resource: "pods/status"}}, "Subresources"},
		{"list verb on subresource", []Resource{{Version: "v1", Kind: "Pod", Resource: "pods", Subresources: []Subresource{{Name: "status", Kind: "Pod", Verbs: []string{"list"}}}}}, "not supported on subresources"},
		{"unknown subresource kind", []Resource{{Version: "v1", Kind: "Pod", Resource: "pods", Subresources: []Subresource{{Name: "x", Group: "example.com", Version: "v1", Kind: "X", Verbs: []string{"get"}}}}}, "no Go type known"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.resources)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestDefinitionsCoverScheme keeps generate.sh and schemeBuilders in step:
// every kind the scheme registers has a generated definition.
func TestDefinitionsCoverScheme(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defs := definitions(func(string) spec.Ref { return spec.Ref{} })
	var missing []string
	for gvk, rt := range reg.scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		if _, ok := defs[canonicalName(rt)]; !ok {
			missing = append(missing, gvk.String())
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("kinds without a generated definition (run generate.sh with their packages): %v", missing)
	}
}

func TestOperationIDs(t *testing.T) {
	n := newOperationNamer()
	tests := []struct {
		op, path string
		wantID   string
		wantTag  string
	}{
		{"listNamespacedPod", "/api/v1/namespaces/{namespace}/pods", "listCoreV1NamespacedPod", "core_v1"},
		{"deletecollectionNamespacedPod", "/api/v1/namespaces/{namespace}/pods", "deleteCoreV1CollectionNamespacedPod", "core_v1"},
		{"getAPIResources", "/apis/apps/v1/", "getAppsV1APIResources", "apps_v1"},
		{"patchClusterRole", "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}", "patchRbacAuthorizationV1ClusterRole", "rbacAuthorization_v1"},
		{"readNamespacedLease", "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}", "readCoordinationV1NamespacedLease", "coordination_v1"},
		{"connectGetNamespacedPodExec", "/api/v1/namespaces/{namespace}/pods/{name}/exec", "connectCoreV1GetNamespacedPodExec", "core_v1"},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			id, tags, err := n.idAndTags(&route{operation: tt.op, path: tt.path})
			if err != nil {
				t.Fatal(err)
			}
			if id != tt.wantID || len(tags) != 1 || tags[0] != tt.wantTag {
				t.Errorf("idAndTags = %q %v, want %q [%s]", id, tags, tt.wantID, tt.wantTag)
			}
		})
	}
	if _, _, err := n.idAndTags(&route{operation: "frobnicatePod", path: "/api/v1/pods"}); err == nil {
		t.Error("an operation name without a verb was accepted")
	}
}

func TestArticle(t *testing.T) {
	tests := []struct{ noun, want string }{
		{"Pod", " a "},
		{"Endpoints", " "},
		{"IngressClass", " an "},
		{"Eviction", " an "},
		{"StorageClass", " a "},
	}
	for _, tt := range tests {
		if got := article(tt.noun); got != tt.want {
			t.Errorf("article(%q) = %q, want %q", tt.noun, got, tt.want)
		}
	}
}
