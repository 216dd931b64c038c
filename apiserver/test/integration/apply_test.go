package integration

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	appsv1apply "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
)

func managedEntry(obj metav1.Object, manager, subresource string) *metav1.ManagedFieldsEntry {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Subresource == subresource {
			return &e
		}
	}
	return nil
}

func deploymentApply(name, manager, container, image string) *appsv1apply.DeploymentApplyConfiguration {
	return appsv1apply.Deployment(name, "default").
		WithSpec(appsv1apply.DeploymentSpec().
			WithSelector(metav1apply.LabelSelector().WithMatchLabels(map[string]string{"app": name})).
			WithTemplate(corev1apply.PodTemplateSpec().
				WithLabels(map[string]string{"app": name}).
				WithSpec(corev1apply.PodSpec().WithContainers(
					corev1apply.Container().WithName(container).WithImage(image)))))
}

// TestServerSideApplyMergesByKey: two managers apply one container each to
// the same Deployment; containers are a list keyed by name, so both stay,
// each owned by its applier, and re-applying one leaves the other alone.
func TestServerSideApplyMergesByKey(t *testing.T) {
	ts := start(t, nil)
	deploys := ts.Client.AppsV1().Deployments("default")
	d, err := deploys.Apply(ctx(t), deploymentApply("web", "a", "app", "nginx:1").WithSpec(
		deploymentApply("web", "a", "app", "nginx:1").Spec.WithReplicas(2)), metav1.ApplyOptions{FieldManager: "team-a"})
	if err != nil {
		t.Fatalf("first apply (a create): %v", err)
	}
	if d.UID == "" || d.Generation != 1 || *d.Spec.Replicas != 2 {
		t.Errorf("created by apply: uid %q generation %d replicas %d", d.UID, d.Generation, *d.Spec.Replicas)
	}
	// Defaults are applied to what apply creates, as to any create.
	if got := d.Spec.Template.Spec.Containers[0].TerminationMessagePath; got != corev1.TerminationMessagePathDefault {
		t.Errorf("container defaults not applied: terminationMessagePath %q", got)
	}
	if _, err := deploys.Apply(ctx(t), deploymentApply("web", "b", "sidecar", "envoy:1"), metav1.ApplyOptions{FieldManager: "team-b"}); err != nil {
		t.Fatalf("second manager's apply: %v", err)
	}
	d, err = deploys.Apply(ctx(t), deploymentApply("web", "a", "app", "nginx:2").WithSpec(
		deploymentApply("web", "a", "app", "nginx:2").Spec.WithReplicas(2)), metav1.ApplyOptions{FieldManager: "team-a"})
	if err != nil {
		t.Fatalf("re-apply: %v", err)
	}
	images := map[string]string{}
	for _, c := range d.Spec.Template.Spec.Containers {
		images[c.Name] = c.Image
	}
	if len(images) != 2 || images["app"] != "nginx:2" || images["sidecar"] != "envoy:1" {
		t.Errorf("containers after both applies: %v", images)
	}
	a, b := managedEntry(d, "team-a", ""), managedEntry(d, "team-b", "")
	if a == nil || b == nil || a.Operation != metav1.ManagedFieldsOperationApply ||
		!strings.Contains(string(a.FieldsV1.Raw), `k:{\"name\":\"app\"}`) || strings.Contains(string(a.FieldsV1.Raw), "sidecar") ||
		!strings.Contains(string(b.FieldsV1.Raw), `k:{\"name\":\"sidecar\"}`) {
		t.Errorf("ownership: %+v", d.ManagedFields)
	}
	// team-b stops applying its container: it goes; team-a's stays.
	d, err = deploys.Apply(ctx(t), appsv1apply.Deployment("web", "default"), metav1.ApplyOptions{FieldManager: "team-b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 || d.Spec.Template.Spec.Containers[0].Name != "app" {
		t.Errorf("containers after team-b applied nothing: %+v", d.Spec.Template.Spec.Containers)
	}
}

// TestServerSideApplyConflictsAndStatus: an update's manager owns what it
// wrote, an apply that changes it conflicts (409 with the field as cause)
// unless forced; status is applied through its subresource only.
func TestServerSideApplyConflictsAndStatus(t *testing.T) {
	ts := start(t, nil)
	deploys := ts.Client.AppsV1().Deployments("default")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "api"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "api:1"}}},
			},
		},
	}
	d, err := deploys.Create(ctx(t), d, metav1.CreateOptions{FieldManager: "installer"})
	if err != nil {
		t.Fatal(err)
	}
	if e := managedEntry(d, "installer", ""); e == nil || e.Operation != metav1.ManagedFieldsOperationUpdate {
		t.Fatalf("create's entry: %+v", d.ManagedFields)
	}
	_, err = deploys.Apply(ctx(t), deploymentApply("api", "", "app", "api:2"), metav1.ApplyOptions{FieldManager: "ci"})
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) || len(status.Status().Details.Causes) == 0 ||
		status.Status().Details.Causes[0].Type != metav1.CauseTypeFieldManagerConflict ||
		!strings.Contains(status.Status().Details.Causes[0].Message, `conflict with "installer"`) {
		t.Fatalf("conflicting apply: %v", err)
	}
	d, err = deploys.Apply(ctx(t), deploymentApply("api", "", "app", "api:2"), metav1.ApplyOptions{FieldManager: "ci", Force: true})
	if err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if d.Spec.Template.Spec.Containers[0].Image != "api:2" || *d.Spec.Replicas != 1 {
		t.Errorf("after the forced apply: image %q replicas %d", d.Spec.Template.Spec.Containers[0].Image, *d.Spec.Replicas)
	}

	// Status through the status subresource: recorded with subresource
	// "status"; what the patch says of the spec is ignored.
	st := appsv1apply.Deployment("api", "default").
		WithSpec(appsv1apply.DeploymentSpec().WithReplicas(9)).
		WithStatus(appsv1apply.DeploymentStatus().WithObservedGeneration(7).WithReplicas(1))
	d, err = deploys.ApplyStatus(ctx(t), st, metav1.ApplyOptions{FieldManager: "controller", Force: true})
	if err != nil {
		t.Fatalf("apply status: %v", err)
	}
	if d.Status.ObservedGeneration != 7 || *d.Spec.Replicas != 1 {
		t.Errorf("after apply status: observedGeneration %d, replicas %d", d.Status.ObservedGeneration, *d.Spec.Replicas)
	}
	if e := managedEntry(d, "controller", "status"); e == nil || !strings.Contains(string(e.FieldsV1.Raw), "f:observedGeneration") ||
		strings.Contains(string(e.FieldsV1.Raw), "f:spec") {
		t.Errorf("status entry: %+v", d.ManagedFields)
	}
	// Status written through the main resource is not taken. (A manager
	// of its own: were it "ci", applying no spec would drop ci's fields.)
	d, err = deploys.Apply(ctx(t), appsv1apply.Deployment("api", "default").WithStatus(appsv1apply.DeploymentStatus().WithObservedGeneration(99)),
		metav1.ApplyOptions{FieldManager: "status-writer", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ObservedGeneration != 7 {
		t.Errorf("status changed through the main resource: %d", d.Status.ObservedGeneration)
	}
	// The status of a missing object is not created.
	if _, err := deploys.ApplyStatus(ctx(t), appsv1apply.Deployment("missing", "default").WithStatus(appsv1apply.DeploymentStatus().WithReplicas(1)),
		metav1.ApplyOptions{FieldManager: "controller"}); !apierrors.IsNotFound(err) {
		t.Errorf("apply status of a missing object: %v", err)
	}

	// Resetting managedFields to [{}] on an update clears them; the update
	// changed nothing else, so its manager owns nothing either.
	d.ManagedFields = []metav1.ManagedFieldsEntry{{}}
	d, err = deploys.Update(ctx(t), d, metav1.UpdateOptions{FieldManager: "reset"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.ManagedFields) != 0 {
		t.Errorf("after reset: %+v", d.ManagedFields)
	}
	// The first apply to an object without managedFields finds what is
	// there owned by "before-first-apply", as upstream's.
	_, err = deploys.Apply(ctx(t), deploymentApply("api", "", "app", "api:3"), metav1.ApplyOptions{FieldManager: "newcomer"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "before-first-apply"`) {
		t.Errorf("apply after the reset: %v", err)
	}
}

// TestServerSideApplyErrors: malformed requests get upstream's 4xx, never a
// 500, and change nothing.
func TestServerSideApplyErrors(t *testing.T) {
	ts := start(t, nil)
	const path = "/api/v1/namespaces/default/configmaps/cm"
	const apply = string(types.ApplyYAMLPatchType)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n"
	cases := []struct {
		name, query, contentType, body string
		code                           int
		message                        string
	}{
		{"no field manager", "", apply, cm, http.StatusUnprocessableEntity, "fieldManager: Required value: is required for apply patch"},
		{"force with a merge patch", "?fieldManager=x&force=true", string(types.MergePatchType), `{"data":{"a":"2"}}`, http.StatusUnprocessableEntity, "force: Forbidden: may not be specified for non-apply patch"},
		{"field manager too long", "?fieldManager=" + strings.Repeat("m", 129), apply, cm, http.StatusUnprocessableEntity, "fieldManager: Too long: may not be more than 128 bytes"},
		{"undeclared field", "?fieldManager=x", apply, cm + "bogus: 1\n", http.StatusBadRequest, ".bogus: field not declared in schema"},
		{"wrong kind", "?fieldManager=x", apply, strings.Replace(cm, "ConfigMap", "Secret", 1), http.StatusBadRequest, "invalid object type: /v1, Kind=Secret"},
		{"not YAML", "?fieldManager=x", apply, "a: [", http.StatusBadRequest, "error decoding YAML"},
		{"duplicate field, strict", "?fieldManager=x&fieldValidation=Strict", apply, cm + "data:\n  b: \"2\"\n", http.StatusBadRequest, `error strict decoding YAML`},
		{"managedFields set", "?fieldManager=x", apply, strings.Replace(cm, "  name: cm\n", "  name: cm\n  managedFields: []\n", 1), http.StatusBadRequest, "metadata.managedFields must be nil"},
		{"other name", "?fieldManager=x", apply, strings.Replace(cm, "name: cm", "name: other", 1), http.StatusBadRequest, "does not match the name on the URL"},
		{"CBOR apply", "?fieldManager=x", "application/apply-patch+cbor", cm, http.StatusUnsupportedMediaType, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := raw(t, ts, http.MethodPatch, path+c.query, c.contentType, []byte(c.body))
			if code != c.code || !strings.Contains(string(body), c.message) {
				t.Errorf("got %d %s; want %d with %q", code, body, c.code, c.message)
			}
		})
	}
	if _, err := ts.Client.CoreV1().ConfigMaps("default").Get(ctx(t), "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a failed apply left an object: %v", err)
	}
	// A dry run answers 201 with the object and stores nothing.
	code, body := raw(t, ts, http.MethodPatch, path+"?fieldManager=x&dryRun=All", apply, []byte(cm))
	if code != http.StatusCreated || !strings.Contains(string(body), `"manager":"x"`) {
		t.Errorf("dry-run apply: %d %s", code, body)
	}
	if _, err := ts.Client.CoreV1().ConfigMaps("default").Get(ctx(t), "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry-run apply stored the object: %v", err)
	}
	if code, body := raw(t, ts, http.MethodPatch, path+"?fieldManager=x", apply, []byte(cm)); code != http.StatusCreated {
		t.Errorf("apply: %d %s", code, body)
	}
	if code, body := raw(t, ts, http.MethodPatch, path+"?fieldManager=x", apply, []byte(cm)); code != http.StatusOK {
		t.Errorf("second apply: %d %s", code, body)
	}
}

// TestServerSideApplyCustomResource: apply on a custom resource with a
// preserved-unknown subtree, a status subresource and a second version:
// the fields of each manager are tracked and merged, unknown fields under
// x-kubernetes-preserve-unknown-fields are kept and owned, an Update at the
// other version keeps the ownership readable.
func TestServerSideApplyCustomResource(t *testing.T) {
	ts := start(t, nil)
	ext, dyn := crdClients(t, ts)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx(t), widgetCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, dyn, "widgets."+widgetGroup, widgetsV1)
	widgets := dyn.Resource(widgetsV1).Namespace("default")
	applyYAML := func(manager, body string, force bool) (*unstructured.Unstructured, error) {
		return widgets.Patch(ctx(t), "w", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager, Force: &force})
	}
	w, err := applyYAML("owner", `{"apiVersion":"example.skiff.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","extra":{"free":{"form":1}}}}`, false)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if got, _, _ := unstructured.NestedInt64(w.Object, "spec", "extra", "free", "form"); got != 1 {
		t.Errorf("preserved field: %v", w.Object["spec"])
	}
	if got, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas"); got != 1 {
		t.Errorf("default not applied: %v", w.Object["spec"])
	}
	e := managedEntry(w, "owner", "")
	if e == nil || !strings.Contains(string(e.FieldsV1.Raw), `"f:extra"`) || !strings.Contains(string(e.FieldsV1.Raw), `"f:color"`) {
		t.Fatalf("owner's entry: %+v", w.GetManagedFields())
	}
	if _, err := applyYAML("other", `{"apiVersion":"example.skiff.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"blue"}}`, false); !apierrors.IsConflict(err) {
		t.Errorf("conflicting apply: %v", err)
	}
	w, err = applyYAML("tagger", `{"apiVersion":"example.skiff.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"tags":["a"]}}`, false)
	if err != nil {
		t.Fatal(err)
	}
	if spec := w.Object["spec"].(map[string]any); spec["color"] != "red" || len(spec["tags"].([]any)) != 1 {
		t.Errorf("after a second manager: %v", spec)
	}
	// Status through its subresource.
	st, err := widgets.Patch(ctx(t), "w", types.ApplyPatchType,
		[]byte(`{"apiVersion":"example.skiff.dev/v1","kind":"Widget","metadata":{"name":"w"},"status":{"replicas":1}}`),
		metav1.PatchOptions{FieldManager: "controller"}, "status")
	if err != nil {
		t.Fatalf("apply status: %v", err)
	}
	if managedEntry(st, "controller", "status") == nil {
		t.Errorf("status entry: %+v", st.GetManagedFields())
	}
	// An update at v1beta1 is recorded at v1beta1, and apply at v1 still
	// reads every entry.
	old, err := dyn.Resource(widgetsV1beta1).Namespace("default").Get(ctx(t), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(old.Object, "L", "spec", "size")
	upd, err := dyn.Resource(widgetsV1beta1).Namespace("default").Update(ctx(t), old, metav1.UpdateOptions{FieldManager: "resizer"})
	if err != nil {
		t.Fatal(err)
	}
	if e := managedEntry(upd, "resizer", ""); e == nil || e.APIVersion != widgetGroup+"/v1beta1" {
		t.Errorf("resizer's entry: %+v", upd.GetManagedFields())
	}
	if _, err := applyYAML("owner", `{"apiVersion":"example.skiff.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","size":"S"}}`, false); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "resizer"`) {
		t.Errorf("apply over the v1beta1 update: %v", err)
	}

	// A field added to the schema can be applied once the CRD is served
	// again: the field manager follows the new schema.
	const weighted = `{"apiVersion":"example.skiff.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","weight":3}}`
	if _, err := applyYAML("owner", weighted, false); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), ".spec.weight: field not declared in schema") {
		t.Fatalf("apply of a field the schema lacks: %v", err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx(t), "widgets."+widgetGroup, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"].Properties["weight"] = apiextensionsv1.JSONSchemaProps{Type: "integer"}
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx(t), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, func() error {
		_, err := applyYAML("owner", weighted, false)
		return err
	}); err != nil {
		t.Errorf("apply of the added field: %v", err)
	}
}

// TestServerSideApplyScale: applying a Scale sets the parent's replicas,
// owned with subresource "scale"; it conflicts with the parent's applier
// unless forced, as upstream's.
func TestServerSideApplyScale(t *testing.T) {
	ts := start(t, nil)
	deploys := ts.Client.AppsV1().Deployments("default")
	if _, err := deploys.Apply(ctx(t), deploymentApply("web", "", "app", "nginx").WithSpec(
		deploymentApply("web", "", "app", "nginx").Spec.WithReplicas(2)), metav1.ApplyOptions{FieldManager: "owner"}); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/apps/v1/namespaces/default/deployments/web/scale"
	scale := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":5}}`
	code, body := raw(t, ts, http.MethodPatch, path+"?fieldManager=hpa", string(types.ApplyYAMLPatchType), []byte(scale))
	if code != http.StatusConflict || !strings.Contains(string(body), `conflict with \"owner\"`) {
		t.Errorf("apply of the scale over the owner's replicas: %d %s", code, body)
	}
	code, body = raw(t, ts, http.MethodPatch, path+"?fieldManager=hpa&force=true", string(types.ApplyYAMLPatchType), []byte(scale))
	if code != http.StatusOK || !strings.Contains(string(body), `"kind":"Scale"`) || !strings.Contains(string(body), `"replicas":5`) {
		t.Fatalf("forced apply of the scale: %d %s", code, body)
	}
	d, err := deploys.Get(ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 5 {
		t.Errorf("replicas = %d", *d.Spec.Replicas)
	}
	if e := managedEntry(d, "hpa", "scale"); e == nil || e.Operation != metav1.ManagedFieldsOperationApply || !strings.Contains(string(e.FieldsV1.Raw), "f:replicas") {
		t.Errorf("the scale applier's entry: %+v", d.ManagedFields)
	}
	if e := managedEntry(d, "owner", ""); e == nil || strings.Contains(string(e.FieldsV1.Raw), "f:replicas") {
		t.Errorf("the owner still owns replicas: %+v", d.ManagedFields)
	}
	for _, bad := range []struct {
		body string
		code int
	}{
		{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1}}`, http.StatusBadRequest},
		{`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":-1}}`, http.StatusUnprocessableEntity},
		{`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":5000000000}}`, http.StatusUnprocessableEntity},
		{`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"other"},"spec":{"replicas":1}}`, http.StatusBadRequest},
	} {
		if code, body := raw(t, ts, http.MethodPatch, path+"?fieldManager=hpa", string(types.ApplyYAMLPatchType), []byte(bad.body)); code != bad.code {
			t.Errorf("%s: %d %s", bad.body, code, body)
		}
	}
	missing := strings.Replace(scale, `"name":"web"`, `"name":"missing"`, 1)
	if code, _ := raw(t, ts, http.MethodPatch, "/apis/apps/v1/namespaces/default/deployments/missing/scale?fieldManager=hpa", string(types.ApplyYAMLPatchType), []byte(missing)); code != http.StatusNotFound {
		t.Errorf("apply of a missing object's scale: %d", code)
	}
}
