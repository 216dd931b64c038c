package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
)

const widgetGroup = "example.skiff.dev"

var (
	widgetsV1      = schema.GroupVersionResource{Group: widgetGroup, Version: "v1", Resource: "widgets"}
	widgetsV1beta1 = schema.GroupVersionResource{Group: widgetGroup, Version: "v1beta1", Resource: "widgets"}
)

// widgetSchema is the schema of both versions of the Widget CRD: defaults,
// an enum, bounds, a preserved subtree and a status with replicas.
func widgetSchema() *apiextensionsv1.CustomResourceValidation {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type: "object", Description: "Spec of the widget.", Required: []string{"color"},
				XValidations: apiextensionsv1.ValidationRules{{Rule: "!has(self.replicas) || self.replicas <= 10", Message: "at most 10 widgets"}},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"replicas": {Type: "integer", Minimum: ptr.To(0.0), Default: &apiextensionsv1.JSON{Raw: []byte("1")}, Description: "How many widgets."},
					"color":    {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"red"`)}, {Raw: []byte(`"blue"`)}}, Description: "Paint of the widget."},
					"size":     {Type: "string", MaxLength: ptr.To[int64](3), Default: &apiextensionsv1.JSON{Raw: []byte(`"M"`)}},
					"tags":     {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
					"extra":    {Type: "object", XPreserveUnknownFields: ptr.To(true)},
				},
			},
			"status": {
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"replicas": {Type: "integer"},
					"selector": str,
				},
			},
		},
	}}
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	subresources := &apiextensionsv1.CustomResourceSubresources{
		Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
		Scale: &apiextensionsv1.CustomResourceSubresourceScale{
			SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ptr.To(".status.selector"),
		},
	}
	columns := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Color", Type: "string", JSONPath: ".spec.color"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + widgetGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgetGroup, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ShortNames: []string{"wd"}, Categories: []string{"all"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: widgetSchema(), Subresources: subresources, AdditionalPrinterColumns: columns,
					SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}}},
				{Name: "v1beta1", Served: true, Schema: widgetSchema(), Subresources: subresources},
			},
		},
	}
}

func crdClients(t *testing.T, ts *testserver.TestServer) (*apiextensionsclient.Clientset, *dynamic.DynamicClient) {
	t.Helper()
	ext, err := apiextensionsclient.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return ext, dyn
}

// waitEstablished waits until the CRD is Established and its first
// version's collection answers.
func waitEstablished(t *testing.T, ext *apiextensionsclient.Clientset, dyn dynamic.Interface, name string, gvr schema.GroupVersionResource) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crd *apiextensionsv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(ctx(t), 50*time.Millisecond, 30*time.Second, true, func(c context.Context) (bool, error) {
		var err error
		crd, err = ext.ApiextensionsV1().CustomResourceDefinitions().Get(c, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				_, err := dyn.Resource(gvr).List(c, metav1.ListOptions{})
				return err == nil, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v (%+v)", name, err, crd.Status)
	}
	return crd
}

func conditionOf(crd *apiextensionsv1.CustomResourceDefinition, ct apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == ct {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

func widget(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": widgetGroup + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app": "w"}},
		"spec":     spec,
	}}
}

func TestCustomResourceDefinitionLifecycle(t *testing.T) {
	ts := testserver.Start(t, nil)
	ext, dyn := crdClients(t, ts)
	c := ctx(t)

	created, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, widgetCRD(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Names.Singular != "widget" || created.Spec.Names.ListKind != "WidgetList" || created.Spec.Conversion == nil || created.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("CRD defaults not applied: names %+v conversion %+v", created.Spec.Names, created.Spec.Conversion)
	}
	if !slices.Equal(created.Status.StoredVersions, []string{"v1"}) {
		t.Errorf("storedVersions = %v, want [v1]", created.Status.StoredVersions)
	}
	crd := waitEstablished(t, ext, dyn, "widgets."+widgetGroup, widgetsV1)
	if cond := conditionOf(crd, apiextensionsv1.NamesAccepted); cond == nil || cond.Status != apiextensionsv1.ConditionTrue || cond.Reason != "NoConflicts" {
		t.Errorf("NamesAccepted = %+v", cond)
	}
	if crd.Status.AcceptedNames.Plural != "widgets" || crd.Status.AcceptedNames.Kind != "Widget" {
		t.Errorf("acceptedNames = %+v", crd.Status.AcceptedNames)
	}

	t.Run("create prunes and defaults", func(t *testing.T) {
		w := widget("w1", map[string]any{"color": "red", "unknown": "x", "extra": map[string]any{"anything": "kept"}})
		w.Object["status"] = map[string]any{"replicas": int64(9)}
		out, err := dyn.Resource(widgetsV1).Namespace("default").Create(c, w, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := out.Object["spec"].(map[string]any)
		if _, ok := spec["unknown"]; ok {
			t.Errorf("spec.unknown not pruned: %v", spec)
		}
		if got, _, _ := unstructured.NestedString(out.Object, "spec", "extra", "anything"); got != "kept" {
			t.Errorf("preserved field lost: %v", spec)
		}
		if spec["replicas"] != int64(1) || spec["size"] != "M" {
			t.Errorf("defaults not applied: %v", spec)
		}
		if _, ok := out.Object["status"]; ok {
			t.Errorf("status set on create despite the status subresource: %v", out.Object["status"])
		}
		if out.GetGeneration() != 1 || out.GetUID() == "" || out.GetResourceVersion() == "" {
			t.Errorf("metadata not set by the server: %+v", out.Object["metadata"])
		}
	})

	t.Run("stored as JSON under the group and plural", func(t *testing.T) {
		resp, err := ts.Server.EtcdClient().Get(c, "/registry/"+widgetGroup+"/widgets/default/w1")
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("etcd key: %v %v", err, resp)
		}
		var stored map[string]any
		if err := json.Unmarshal(resp.Kvs[0].Value, &stored); err != nil {
			t.Fatalf("stored value is not JSON: %v: %q", err, resp.Kvs[0].Value)
		}
		if stored["apiVersion"] != widgetGroup+"/v1" || stored["kind"] != "Widget" {
			t.Errorf("stored apiVersion/kind: %v %v", stored["apiVersion"], stored["kind"])
		}
	})

	t.Run("schema violations are all named", func(t *testing.T) {
		w := widget("bad", map[string]any{"color": "green", "replicas": "three", "size": "XXXL", "tags": []any{int64(1)}})
		_, err := dyn.Resource(widgetsV1).Namespace("default").Create(c, w, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("err = %v, want 422 Invalid", err)
		}
		var fields []string
		for _, cause := range err.(apierrors.APIStatus).Status().Details.Causes {
			fields = append(fields, cause.Field)
		}
		for _, want := range []string{"spec.color", "spec.replicas", "spec.size", "spec.tags[0]"} {
			if !slices.Contains(fields, want) {
				t.Errorf("no cause for %s in %v (%v)", want, fields, err)
			}
		}
		_, err = dyn.Resource(widgetsV1).Namespace("default").Create(c, widget("many", map[string]any{"color": "red", "replicas": int64(11)}), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec: Invalid value: "object": at most 10 widgets`) {
			t.Errorf("x-kubernetes-validations rule: err = %v", err)
		}
		missing := widget("missing", map[string]any{})
		_, err = dyn.Resource(widgetsV1).Namespace("default").Create(c, missing, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.color: Required value") {
			t.Errorf("missing required field: err = %v", err)
		}
	})

	t.Run("strict field validation rejects unknown fields", func(t *testing.T) {
		w := widget("strict", map[string]any{"color": "blue", "bogus": true})
		_, err := dyn.Resource(widgetsV1).Namespace("default").Create(c, w, metav1.CreateOptions{FieldValidation: "Strict"})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unknown field "spec.bogus"`) {
			t.Errorf("err = %v, want 400 naming spec.bogus", err)
		}
	})

	t.Run("other version rewrites apiVersion", func(t *testing.T) {
		out, err := dyn.Resource(widgetsV1beta1).Namespace("default").Get(c, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.GetAPIVersion() != widgetGroup+"/v1beta1" {
			t.Errorf("apiVersion = %s", out.GetAPIVersion())
		}
		w := widget("w2", map[string]any{"color": "blue", "replicas": int64(2)})
		w.SetAPIVersion(widgetGroup + "/v1beta1")
		w.SetLabels(map[string]string{"app": "other"})
		if _, err := dyn.Resource(widgetsV1beta1).Namespace("default").Create(c, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := dyn.Resource(widgetsV1).Namespace("default").Get(c, "w2", metav1.GetOptions{})
		if err != nil || got.GetAPIVersion() != widgetGroup+"/v1" {
			t.Fatalf("v1 view of an object created through v1beta1: %v %v", got, err)
		}
	})

	t.Run("list with selectors", func(t *testing.T) {
		list, err := dyn.Resource(widgetsV1).Namespace("default").List(c, metav1.ListOptions{LabelSelector: "app=w"})
		if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "w1" {
			t.Fatalf("label selector: %v %v", list, err)
		}
		list, err = dyn.Resource(widgetsV1).List(c, metav1.ListOptions{FieldSelector: "metadata.name=w2,metadata.namespace=default"})
		if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "w2" {
			t.Fatalf("field selector: %v %v", list, err)
		}
		if list.GetKind() != "WidgetList" {
			t.Errorf("list kind = %s", list.GetKind())
		}
		// selectableFields: v1 selects on spec.color, v1beta1 does not.
		list, err = dyn.Resource(widgetsV1).Namespace("default").List(c, metav1.ListOptions{FieldSelector: "spec.color=blue"})
		if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "w2" {
			t.Fatalf("selectable field: %v %v", list, err)
		}
		_, err = dyn.Resource(widgetsV1beta1).List(c, metav1.ListOptions{FieldSelector: "spec.color=red"})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "field label not supported: spec.color") {
			t.Errorf("unsupported field selector: err = %v, want 400", err)
		}
	})

	t.Run("watch sees changes", func(t *testing.T) {
		list, err := dyn.Resource(widgetsV1).Namespace("default").List(c, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := dyn.Resource(widgetsV1).Namespace("default").Watch(c, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), FieldSelector: "metadata.name=w1"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		patch := []byte(`{"spec":{"color":"blue"}}`)
		if _, err := dyn.Resource(widgetsV1).Namespace("default").Patch(c, "w1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w.ResultChan():
			u, ok := ev.Object.(*unstructured.Unstructured)
			if ev.Type != watch.Modified || !ok || u.GetName() != "w1" || u.Object["spec"].(map[string]any)["color"] != "blue" || u.GetGeneration() != 2 {
				t.Errorf("event %s %+v", ev.Type, ev.Object)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no watch event")
		}
	})

	t.Run("strategic merge patch is unsupported", func(t *testing.T) {
		_, err := dyn.Resource(widgetsV1).Namespace("default").Patch(c, "w1", types.StrategicMergePatchType, []byte(`{"spec":{"color":"red"}}`), metav1.PatchOptions{})
		if !apierrors.IsUnsupportedMediaType(err) {
			t.Errorf("err = %v, want 415", err)
		}
	})

	t.Run("protobuf is not spoken", func(t *testing.T) {
		code, _ := raw(t, ts, http.MethodPost, "/apis/"+widgetGroup+"/v1/namespaces/default/widgets", "application/vnd.kubernetes.protobuf", []byte("k8s\x00"))
		if code != http.StatusUnsupportedMediaType {
			t.Errorf("protobuf body: %d, want 415", code)
		}
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/apis/"+widgetGroup+"/v1/namespaces/default/widgets/w1", nil)
		req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
		hc, err := ts.HTTPClient()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotAcceptable {
			t.Errorf("protobuf response: %d, want 406", resp.StatusCode)
		}
	})

	t.Run("status subresource", func(t *testing.T) {
		cur, err := dyn.Resource(widgetsV1).Namespace("default").Get(c, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Object["status"] = map[string]any{"replicas": int64(3), "selector": "app=w"}
		cur.Object["spec"].(map[string]any)["color"] = "red"
		out, err := dyn.Resource(widgetsV1).Namespace("default").UpdateStatus(c, cur, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(out.Object, "status", "replicas"); r != 3 {
			t.Errorf("status.replicas = %d", r)
		}
		if color, _, _ := unstructured.NestedString(out.Object, "spec", "color"); color != "blue" {
			t.Errorf("status update changed spec.color to %s", color)
		}
		// The main endpoint keeps status.
		out.Object["status"] = map[string]any{"replicas": int64(7)}
		out2, err := dyn.Resource(widgetsV1).Namespace("default").Update(c, out, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(out2.Object, "status", "replicas"); r != 3 {
			t.Errorf("main update changed status.replicas to %d", r)
		}
	})

	t.Run("scale subresource", func(t *testing.T) {
		sc, err := dyn.Resource(widgetsV1).Namespace("default").Get(c, "w1", metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatal(err)
		}
		if sc.GetKind() != "Scale" || sc.Object["status"].(map[string]any)["replicas"] != int64(3) || sc.Object["status"].(map[string]any)["selector"] != "app=w" {
			t.Errorf("scale = %v", sc.Object)
		}
		if _, err := dyn.Resource(widgetsV1).Namespace("default").Patch(c, "w1", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale"); err != nil {
			t.Fatal(err)
		}
		got, err := dyn.Resource(widgetsV1).Namespace("default").Get(c, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 5 {
			t.Errorf("spec.replicas = %d after scaling to 5", r)
		}
	})

	t.Run("table with printer columns", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/apis/"+widgetGroup+"/v1/namespaces/default/widgets", nil)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		hc, err := ts.HTTPClient()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var table metav1.Table
		if err := json.NewDecoder(resp.Body).Decode(&table); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, col := range table.ColumnDefinitions {
			names = append(names, col.Name)
		}
		if !slices.Equal(names, []string{"Name", "Replicas", "Color", "Age"}) || len(table.Rows) != 2 {
			t.Fatalf("columns %v, %d rows", names, len(table.Rows))
		}
		if table.Rows[0].Cells[0] != "w1" || table.Rows[0].Cells[1] != float64(5) || table.Rows[0].Cells[2] != "blue" {
			t.Errorf("row = %v", table.Rows[0].Cells)
		}
	})

	t.Run("discovery and openapi", func(t *testing.T) {
		rl, err := ts.Client.Discovery().ServerResourcesForGroupVersion(widgetGroup + "/v1")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rl.APIResources {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, []string{"widgets", "widgets/scale", "widgets/status"}) {
			t.Errorf("discovery resources = %v", names)
		}
		// The OpenAPI documents follow within seconds, rebuilt in the background.
		err = wait.PollUntilContextTimeout(c, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			code, _ := raw(t, ts, http.MethodGet, "/openapi/v3/apis/"+widgetGroup+"/v1", "", nil)
			return code == http.StatusOK, nil
		})
		if err != nil {
			t.Fatalf("no OpenAPI v3 document for %s/v1: %v", widgetGroup, err)
		}
		code, body := raw(t, ts, http.MethodGet, "/openapi/v3/apis/"+widgetGroup+"/v1", "", nil)
		if code != http.StatusOK || !strings.Contains(string(body), `"dev.skiff.example.v1.Widget"`) || !strings.Contains(string(body), "Paint of the widget.") {
			t.Errorf("openapi v3: %d %.300s", code, body)
		}
		code, body = raw(t, ts, http.MethodGet, "/openapi/v2", "", nil)
		if code != http.StatusOK || !strings.Contains(string(body), `"dev.skiff.example.v1beta1.Widget"`) {
			t.Errorf("openapi v2: %d", code)
		}
	})

	t.Run("defaults applied on read", func(t *testing.T) {
		// A new default in the schema shows on objects stored before it.
		cur, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(c, "widgets."+widgetGroup, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["shape"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"round"`)}}
		cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Update(c, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		err = wait.PollUntilContextTimeout(c, 50*time.Millisecond, 20*time.Second, true, func(c context.Context) (bool, error) {
			got, err := dyn.Resource(widgetsV1).Namespace("default").Get(c, "w1", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			shape, _, _ := unstructured.NestedString(got.Object, "spec", "shape")
			return shape == "round", nil
		})
		if err != nil {
			t.Errorf("the new default never showed on read: %v", err)
		}
	})

	t.Run("deleting the CRD deletes instances and routes", func(t *testing.T) {
		if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(c, "widgets."+widgetGroup, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(c, 50*time.Millisecond, 30*time.Second, true, func(c context.Context) (bool, error) {
			_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(c, "widgets."+widgetGroup, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatalf("CRD still there: %v", err)
		}
		resp, err := ts.Server.EtcdClient().Get(c, "/registry/"+widgetGroup+"/widgets/", clientv3Prefix())
		if err != nil || len(resp.Kvs) != 0 {
			t.Errorf("instances left in etcd: %v %d", err, len(resp.Kvs))
		}
		err = wait.PollUntilContextTimeout(c, 50*time.Millisecond, 10*time.Second, true, func(c context.Context) (bool, error) {
			code, _ := raw(t, ts, http.MethodGet, "/apis/"+widgetGroup+"/v1/widgets", "", nil)
			return code == http.StatusNotFound, nil
		})
		if err != nil {
			t.Errorf("route still served: %v", err)
		}
		if _, err := ts.Client.Discovery().ServerResourcesForGroupVersion(widgetGroup + "/v1"); !apierrors.IsNotFound(err) {
			t.Errorf("discovery of the group after deletion: err = %v, want 404", err)
		}
	})
}

// TestCustomResourceDefinitionValidation checks that invalid CRDs are
// refused with every problem named.
func TestCustomResourceDefinitionValidation(t *testing.T) {
	ts := testserver.Start(t, nil)
	ext, _ := crdClients(t, ts)
	c := ctx(t)
	crd := widgetCRD()
	crd.Name = "wrong.example.skiff.dev"
	crd.Spec.Versions[1].Storage = true
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["untyped"] = apiextensionsv1.JSONSchemaProps{}
	crd.Spec.Versions[1].Schema = nil
	crd.Spec.Scope = "Galaxy"
	_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, crd, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want 422", err)
	}
	for _, want := range []string{
		`metadata.name: Invalid value: "wrong.example.skiff.dev": must be spec.names.plural+"."+spec.group`,
		`spec.scope: Unsupported value: "Galaxy"`,
		"spec.versions: Invalid value:",
		"must have exactly one version marked as storage version",
		"spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[untyped].type: Required value: must not be empty for specified object fields",
		"spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q:\n%v", want, err)
		}
	}

	// A rule whose estimated cost is over upstream's limit (every pair of
	// items of an unbounded list of unbounded strings) is refused as
	// upstream refuses it: 422, the rule's field, FieldValueForbidden.
	crd = widgetCRD()
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["names"] = apiextensionsv1.JSONSchemaProps{
		Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}},
		XValidations: apiextensionsv1.ValidationRules{{Rule: "self.all(x, self.all(y, x == y || !x.contains(y)))"}},
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, crd, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("a rule over the cost limit: err = %v, want 422", err)
	}
	const rulePath = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule"
	var found bool
	for _, cause := range err.(apierrors.APIStatus).Status().Details.Causes {
		if cause.Field == rulePath && cause.Type == metav1.CauseTypeForbidden &&
			strings.Contains(cause.Message, "estimated rule cost exceeds budget by factor of more than 100x") {
			found = true
		}
	}
	if !found {
		t.Errorf("no Forbidden cause at %s: %v", rulePath, err)
	}
}

// TestCustomResourceDefinitionNameConflict: a CRD whose names another CRD
// of its group holds is not accepted and not served.
func TestCustomResourceDefinitionNameConflict(t *testing.T) {
	ts := testserver.Start(t, nil)
	ext, dyn := crdClients(t, ts)
	c := ctx(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, widgetCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, dyn, "widgets."+widgetGroup, widgetsV1)
	gizmos := widgetCRD()
	gizmos.Name = "gizmos." + widgetGroup
	gizmos.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Kind: "Gizmo", ShortNames: []string{"widget"}}
	gizmos.Spec.Versions = gizmos.Spec.Versions[:1]
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, gizmos, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *apiextensionsv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(c, 50*time.Millisecond, 20*time.Second, true, func(c context.Context) (bool, error) {
		var err error
		got, err = ext.ApiextensionsV1().CustomResourceDefinitions().Get(c, gizmos.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cond := conditionOf(got, apiextensionsv1.NamesAccepted)
		return cond != nil && cond.Status == apiextensionsv1.ConditionFalse, nil
	})
	if err != nil {
		t.Fatalf("NamesAccepted never False: %v", err)
	}
	if cond := conditionOf(got, apiextensionsv1.NamesAccepted); cond.Reason != "ShortNamesConflict" || cond.Message != `"widget" is already in use` {
		t.Errorf("NamesAccepted = %+v", cond)
	}
	if cond := conditionOf(got, apiextensionsv1.Established); cond == nil || cond.Status != apiextensionsv1.ConditionFalse || cond.Reason != "NotAccepted" {
		t.Errorf("Established = %+v", cond)
	}
	if got.Status.AcceptedNames.Plural != "" {
		t.Errorf("acceptedNames = %+v, want none", got.Status.AcceptedNames)
	}
	if code, _ := raw(t, ts, http.MethodGet, "/apis/"+widgetGroup+"/v1/gizmos", "", nil); code != http.StatusNotFound {
		t.Errorf("a CRD whose names are not accepted is served: %d", code)
	}
}

// TestCustomResourceClusterScopedAndRBAC serves a cluster-scoped CRD and
// checks that RBAC governs its resources as any other.
func TestCustomResourceClusterScopedAndRBAC(t *testing.T) {
	ts := testserver.Start(t, nil)
	ext, dyn := crdClients(t, ts)
	c := ctx(t)
	crd := widgetCRD()
	crd.Name = "gadgets." + widgetGroup
	crd.Spec.Scope = apiextensionsv1.ClusterScoped
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Kind: "Gadget"}
	crd.Spec.Versions = crd.Spec.Versions[:1]
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets := schema.GroupVersionResource{Group: widgetGroup, Version: "v1", Resource: "gadgets"}
	waitEstablished(t, ext, dyn, crd.Name, gadgets)
	g := widget("g1", map[string]any{"color": "red"})
	g.SetKind("Gadget")
	out, err := dyn.Resource(gadgets).Create(c, g, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.GetNamespace() != "" {
		t.Errorf("cluster-scoped object has namespace %q", out.GetNamespace())
	}
	code, _ := raw(t, ts, http.MethodGet, "/apis/"+widgetGroup+"/v1/namespaces/default/gadgets", "", nil)
	if code != http.StatusNotFound {
		t.Errorf("namespaced path of a cluster-scoped resource: %d, want 404", code)
	}

	// A user with no role is forbidden; a ClusterRole on gadgets lets her read.
	cfg := *ts.AdminConfig
	cfg.Impersonate.UserName = "alice"
	alice, err := dynamic.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Resource(gadgets).Get(c, "g1", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("alice without a role: err = %v, want 403", err)
	}
	role := fmt.Sprintf(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"gadget-reader"},
		"rules":[{"apiGroups":[%q],"resources":["gadgets"],"verbs":["get","list"]}]}`, widgetGroup)
	binding := `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"alice-gadgets"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"gadget-reader"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"alice"}]}`
	for path, body := range map[string]string{
		"/apis/rbac.authorization.k8s.io/v1/clusterroles":        role,
		"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings": binding,
	} {
		if code, out := raw(t, ts, http.MethodPost, path, "application/json", []byte(body)); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, code, out)
		}
	}
	err = wait.PollUntilContextTimeout(c, 50*time.Millisecond, 10*time.Second, true, func(c context.Context) (bool, error) {
		_, err := alice.Resource(gadgets).Get(c, "g1", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("alice with gadget-reader cannot get: %v", err)
	}
	if err := alice.Resource(gadgets).Delete(c, "g1", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice deleting: err = %v, want 403", err)
	}
}

func clientv3Prefix() clientv3.OpOption { return clientv3.WithPrefix() }

// TestCustomResourceDefinitionDeletionWaitsForInstances deletes a CRD whose
// instance holds a finalizer: the CRD stays Terminating, refuses creates,
// and goes once the instance does.
func TestCustomResourceDefinitionDeletionWaitsForInstances(t *testing.T) {
	ts := testserver.Start(t, nil)
	ext, dyn := crdClients(t, ts)
	c := ctx(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, widgetCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, dyn, "widgets."+widgetGroup, widgetsV1)
	widgets := dyn.Resource(widgetsV1).Namespace("default")

	// The admission chain applies: no instance in a missing namespace.
	if _, err := dyn.Resource(widgetsV1).Namespace("nowhere").Create(c, widget("x", map[string]any{"color": "red"}), metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("create in a missing namespace: err = %v, want 404", err)
	}
	// deletecollection with a label selector.
	for _, name := range []string{"a", "b"} {
		w := widget(name, map[string]any{"color": "red"})
		w.SetLabels(map[string]string{"batch": "1"})
		if _, err := widgets.Create(c, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := widgets.DeleteCollection(c, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=1"}); err != nil {
		t.Fatal(err)
	}
	if list, err := widgets.List(c, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("after deletecollection: %v %v", list, err)
	}

	held := widget("held", map[string]any{"color": "red"})
	held.SetFinalizers([]string{widgetGroup + "/hold"})
	if _, err := widgets.Create(c, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(c, "widgets."+widgetGroup, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(c, 50*time.Millisecond, 20*time.Second, true, func(c context.Context) (bool, error) {
		w, err := widgets.Get(c, "held", metav1.GetOptions{})
		return err == nil && w.GetDeletionTimestamp() != nil, nil
	})
	if err != nil {
		t.Fatalf("the instance was not marked for deletion: %v", err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(c, "widgets."+widgetGroup, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("CRD gone while an instance is left: %v", err)
	}
	if cond := conditionOf(crd, apiextensionsv1.Terminating); cond == nil || cond.Status != apiextensionsv1.ConditionTrue {
		t.Errorf("Terminating = %+v", cond)
	}
	if !slices.Contains(crd.Finalizers, "customresourcecleanup.apiextensions.k8s.io") || crd.DeletionTimestamp == nil {
		t.Errorf("finalizers %v, deletionTimestamp %v", crd.Finalizers, crd.DeletionTimestamp)
	}
	_, err = widgets.Create(c, widget("late", map[string]any{"color": "red"}), metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), "create not allowed while custom resource definition is terminating") {
		t.Errorf("create while terminating: err = %v, want 405", err)
	}

	if _, err := widgets.Patch(c, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(c, 50*time.Millisecond, 20*time.Second, true, func(c context.Context) (bool, error) {
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(c, "widgets."+widgetGroup, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("CRD not deleted after its last instance went: %v", err)
	}
}

// TestCustomResourceAdmissionWebhooks: webhooks see custom resources as any
// kind; what a mutating webhook adds is pruned and defaulted like a request.
func TestCustomResourceAdmissionWebhooks(t *testing.T) {
	ts := testserver.Start(t, nil)
	ext, dyn := crdClients(t, ts)
	c := ctx(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, widgetCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, dyn, "widgets."+widgetGroup, widgetsV1)

	none := admissionregistrationv1.SideEffectClassNone
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{widgetGroup}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
	}}
	mutator := startWebhookServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		pt := admissionv1.PatchTypeJSONPatch
		patch := `[{"op":"add","path":"/spec/tags","value":["mutated"]},{"op":"add","path":"/spec/injected","value":"dropped"}]`
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt, Patch: []byte(patch)}
	}, 0)
	denier := startWebhookServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var w unstructured.Unstructured
		_ = json.Unmarshal(req.Object.Raw, &w.Object)
		if color, _, _ := unstructured.NestedString(w.Object, "spec", "color"); color == "blue" || req.Kind.Kind != "Widget" {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "no blue widgets", Code: 403}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	}, 0)
	if _, err := ts.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(c, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "widget-mutator"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mutate.widgets.skiff.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &mutator.url, CABundle: mutator.caBundle},
			Rules: rules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(c, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "widget-denier"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "deny.widgets.skiff.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &denier.url, CABundle: denier.caBundle},
			Rules: rules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	widgets := dyn.Resource(widgetsV1).Namespace("default")
	var created *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(c, 100*time.Millisecond, 20*time.Second, true, func(c context.Context) (bool, error) {
		out, err := widgets.Create(c, widget(fmt.Sprintf("w-%d", time.Now().UnixNano()), map[string]any{"color": "red"}), metav1.CreateOptions{})
		if err != nil {
			return false, nil
		}
		created = out
		tags, _, _ := unstructured.NestedStringSlice(out.Object, "spec", "tags")
		return slices.Equal(tags, []string{"mutated"}), nil
	})
	if err != nil {
		t.Fatalf("the mutating webhook never applied to a widget: %v (last %v)", err, created)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(created.Object, "spec", "injected"); found {
		t.Errorf("a field the webhook added outside the schema was not pruned: %v", created.Object["spec"])
	}
	if size, _, _ := unstructured.NestedString(created.Object, "spec", "size"); size != "M" {
		t.Errorf("defaults lost: %v", created.Object["spec"])
	}
	_, err = widgets.Create(c, widget("blue", map[string]any{"color": "blue"}), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `admission webhook "deny.widgets.skiff.dev" denied the request: no blue widgets`) {
		t.Errorf("validating webhook: err = %v, want 403", err)
	}
}

// TestCustomResourcesServedAfterRestart: a restarted server is ready only
// once the stored CRDs' resources are served again.
func TestCustomResourcesServedAfterRestart(t *testing.T) {
	dir := t.TempDir()
	ts, err := testserver.StartServer(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ext, dyn := crdClients(t, ts)
	c := ctx(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(c, widgetCRD(), metav1.CreateOptions{}); err != nil {
		ts.TearDown()
		t.Fatal(err)
	}
	waitEstablished(t, ext, dyn, "widgets."+widgetGroup, widgetsV1)
	if _, err := dyn.Resource(widgetsV1).Namespace("default").Create(c, widget("survivor", map[string]any{"color": "red"}), metav1.CreateOptions{}); err != nil {
		ts.TearDown()
		t.Fatal(err)
	}
	ts.TearDown()

	ts, err = testserver.StartServer(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.TearDown)
	_, dyn = crdClients(t, ts)
	// StartServer returned after /readyz: no polling here.
	got, err := dyn.Resource(widgetsV1).Namespace("default").Get(c, "survivor", metav1.GetOptions{})
	if err != nil || got.GetName() != "survivor" {
		t.Fatalf("after restart: %v %v", got, err)
	}
	rl, err := ts.Client.Discovery().ServerResourcesForGroupVersion(widgetGroup + "/v1")
	if err != nil || len(rl.APIResources) == 0 {
		t.Errorf("discovery after restart: %v %v", rl, err)
	}
}
