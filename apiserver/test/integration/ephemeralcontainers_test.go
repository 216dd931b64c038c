package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ephemeral is an ephemeral container as kubectl debug writes it.
func ephemeral(name, target string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: name, Image: "busybox", Command: []string{"sleep", "3600"},
			ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		},
		TargetContainerName: target,
	}
}

func ephemeralNames(p *corev1.Pod) []string {
	var out []string
	for _, ec := range p.Spec.EphemeralContainers {
		out = append(out, ec.Name)
	}
	return out
}

// pods/ephemeralcontainers as upstream serves it: GET, PUT and every kind
// of PATCH add ephemeral containers, nothing else of the pod changes, bad
// additions are 422 with the field, a plain pod update may not add one,
// RBAC names the subresource, discovery lists it, and kubectl debug uses it.
func TestEphemeralContainersSubresource(t *testing.T) {
	ts := start(t, nil)
	pods := ts.Client.CoreV1().Pods("default")
	c := ctx(t)
	p := testPod("target", "node-1")
	p.Labels = map[string]string{"app": "x"}
	if _, err := pods.Create(c, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const path = "/api/v1/namespaces/default/pods/target/ephemeralcontainers"

	t.Run("get", func(t *testing.T) {
		code, body := raw(t, ts, http.MethodGet, path, "", nil)
		var got corev1.Pod
		if code != http.StatusOK || json.Unmarshal(body, &got) != nil || got.Kind != "Pod" || got.Name != "target" {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
	})

	t.Run("update", func(t *testing.T) {
		cur, err := pods.Get(c, "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, ephemeral("by-update", "c"))
		// What else the update says is ignored.
		cur.Labels["app"] = "changed"
		cur.Spec.Containers[0].Image = "changed"
		got, err := pods.UpdateEphemeralContainers(c, "target", cur, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ephemeralNames(got), []string{"by-update"}) || got.Labels["app"] != "x" || got.Spec.Containers[0].Image != "busybox" {
			t.Errorf("after the update: ephemeral %v, labels %v, image %q", ephemeralNames(got), got.Labels, got.Spec.Containers[0].Image)
		}
		if got.Spec.EphemeralContainers[0].TargetContainerName != "c" {
			t.Errorf("targetContainerName %q, want c", got.Spec.EphemeralContainers[0].TargetContainerName)
		}
	})

	t.Run("patches", func(t *testing.T) {
		ec, _ := json.Marshal(ephemeral("by-smp", ""))
		patches := []struct {
			name, contentType, body, query, want string
		}{
			{"strategic merge", string(types.StrategicMergePatchType), `{"spec":{"ephemeralContainers":[` + string(ec) + `]}}`, "", "by-smp"},
			{"json patch", string(types.JSONPatchType), `[{"op":"add","path":"/spec/ephemeralContainers/-","value":{"name":"by-json-patch","image":"busybox","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}}]`, "", "by-json-patch"},
			{"apply", string(types.ApplyYAMLPatchType), `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"target"},"spec":{"ephemeralContainers":[{"name":"by-apply","image":"busybox"}]}}`, "?fieldManager=debugger", "by-apply"},
		}
		for _, tc := range patches {
			code, body := raw(t, ts, http.MethodPatch, path+tc.query, tc.contentType, []byte(tc.body))
			var got corev1.Pod
			if code != http.StatusOK || json.Unmarshal(body, &got) != nil {
				t.Fatalf("%s: %d %s", tc.name, code, body)
			}
			if !slices.Contains(ephemeralNames(&got), tc.want) {
				t.Errorf("%s: ephemeral containers %v lack %s", tc.name, ephemeralNames(&got), tc.want)
			}
		}
		// A JSON merge patch replaces the list: it must repeat the old ones.
		cur, err := pods.Get(c, "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		list := append(cur.Spec.EphemeralContainers, ephemeral("by-merge", ""))
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"ephemeralContainers": list}})
		code, body := raw(t, ts, http.MethodPatch, path, string(types.MergePatchType), b)
		if code != http.StatusOK || !strings.Contains(string(body), `"by-merge"`) {
			t.Fatalf("merge patch: %d %s", code, body)
		}
		after, err := pods.Get(c, "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A strategic merge patch puts what it adds first, as upstream's.
		want := []string{"by-apply", "by-json-patch", "by-merge", "by-smp", "by-update"}
		if got := ephemeralNames(after); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
			t.Errorf("ephemeral containers %v, want %v", ephemeralNames(after), want)
		}
		if after.Status.Phase != corev1.PodPending {
			t.Errorf("phase %q changed", after.Status.Phase)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		cases := []struct {
			name, body, field string
			reason            metav1.CauseType
		}{
			{"removal", `{"spec":{"ephemeralContainers":null}}`, "spec.ephemeralContainers", metav1.CauseType(field.ErrorTypeForbidden)},
			{"ports", `{"name":"p","image":"busybox","ports":[{"containerPort":80}]}`, "spec.ephemeralContainers[5].ports", metav1.CauseType(field.ErrorTypeForbidden)},
			{"probe", `{"name":"p","image":"busybox","livenessProbe":{"exec":{"command":["true"]}}}`, "spec.ephemeralContainers[5].livenessProbe", metav1.CauseType(field.ErrorTypeForbidden)},
			{"lifecycle", `{"name":"p","image":"busybox","lifecycle":{"preStop":{"exec":{"command":["true"]}}}}`, "spec.ephemeralContainers[5].lifecycle", metav1.CauseType(field.ErrorTypeForbidden)},
			{"resources", `{"name":"p","image":"busybox","resources":{"limits":{"cpu":"1"}}}`, "spec.ephemeralContainers[5].resources", metav1.CauseType(field.ErrorTypeForbidden)},
			{"duplicate name", `{"name":"c","image":"busybox"}`, "spec.ephemeralContainers[5].name", metav1.CauseTypeFieldValueDuplicate},
			{"unknown target", `{"name":"t","image":"busybox","targetContainerName":"nope"}`, "spec.ephemeralContainers[5].targetContainerName", metav1.CauseTypeFieldValueNotFound},
		}
		for _, tc := range cases {
			// Each addition goes at the end (index 5) by a JSON patch.
			ct, patch := string(types.JSONPatchType), `[{"op":"add","path":"/spec/ephemeralContainers/-","value":`+tc.body+`}]`
			if tc.name == "removal" {
				ct, patch = string(types.MergePatchType), tc.body
			}
			code, body := raw(t, ts, http.MethodPatch, path, ct, []byte(patch))
			if code != http.StatusUnprocessableEntity {
				t.Errorf("%s: %d %s, want 422", tc.name, code, body)
				continue
			}
			st := status(t, body)
			found := false
			for _, cause := range st.Details.Causes {
				found = found || (cause.Field == tc.field && cause.Type == tc.reason)
			}
			if st.Reason != metav1.StatusReasonInvalid || !found {
				t.Errorf("%s: %+v, want %s on %s", tc.name, st, tc.reason, tc.field)
			}
		}
		// Changing an existing one.
		cur, err := pods.Get(c, "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.EphemeralContainers[0].Image = "other"
		msg := fmt.Sprintf("existing ephemeral containers %q may not be changed", cur.Spec.EphemeralContainers[0].Name)
		if _, err := pods.UpdateEphemeralContainers(c, "target", cur, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), msg) {
			t.Errorf("changing an ephemeral container: %v, want 422", err)
		}
		// A plain pod update may not add one.
		cur, err = pods.Get(c, "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, ephemeral("by-pod-update", ""))
		if _, err := pods.Update(c, cur, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("a pod update adding an ephemeral container: %v, want 422", err)
		}
	})

	t.Run("discovery", func(t *testing.T) {
		list, err := ts.Client.Discovery().ServerResourcesForGroupVersion("v1")
		if err != nil {
			t.Fatal(err)
		}
		var verbs []string
		for _, r := range list.APIResources {
			if r.Name == "pods/ephemeralcontainers" {
				verbs = r.Verbs
			}
		}
		if !slices.Equal(verbs, []string{"get", "patch", "update"}) {
			t.Errorf("pods/ephemeralcontainers verbs %v, want get, patch, update", verbs)
		}
	})

	t.Run("rbac", func(t *testing.T) {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-patcher"},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "patch", "update"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
		if _, err := ts.Client.RbacV1().Roles("default").Create(c, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pod-patcher"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-patcher"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "eve"}}}
		if _, err := ts.Client.RbacV1().RoleBindings("default").Create(c, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eve := clientAs(t, ts, "eve").CoreV1().Pods("default")
		if err := waitFor(t, func() error {
			_, err := eve.Get(c, "target", metav1.GetOptions{})
			return err
		}); err != nil {
			t.Fatalf("the role never took effect: %v", err)
		}
		patch := []byte(`{"spec":{"ephemeralContainers":[{"name":"by-eve","image":"busybox"}]}}`)
		if _, err := eve.Patch(c, "target", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "ephemeralcontainers"); !apierrors.IsForbidden(err) {
			t.Fatalf("pods patch alone allowed pods/ephemeralcontainers: %v", err)
		}
		role.Rules = append(role.Rules, rbacv1.PolicyRule{Verbs: []string{"patch"}, APIGroups: []string{""}, Resources: []string{"pods/ephemeralcontainers"}})
		if _, err := ts.Client.RbacV1().Roles("default").Update(c, role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := waitFor(t, func() error {
			_, err := eve.Patch(c, "target", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "ephemeralcontainers")
			return err
		}); err != nil {
			t.Fatalf("pods/ephemeralcontainers patch never allowed: %v", err)
		}
	})

	t.Run("kubectl debug", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/kubectl"); err != nil {
			t.Skip("no kubectl at /usr/bin/kubectl")
		}
		mustKubectl(t, c, ts, "debug", "-n", "default", "target", "--image=busybox", "--target=c", "-c", "kdebug", "--profile=legacy")
		got, err := pods.Get(c, "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ec *corev1.EphemeralContainer
		for i := range got.Spec.EphemeralContainers {
			if got.Spec.EphemeralContainers[i].Name == "kdebug" {
				ec = &got.Spec.EphemeralContainers[i]
			}
		}
		if ec == nil || ec.TargetContainerName != "c" || ec.Image != "busybox" {
			t.Fatalf("kubectl debug's container: %+v (all: %v)", ec, ephemeralNames(got))
		}
		out := mustKubectl(t, c, ts, "get", "-n", "default", "pod", "target", "-o", "jsonpath={.spec.ephemeralContainers[*].name}")
		if !strings.Contains(out, "kdebug") {
			t.Errorf("kubectl get: %s", out)
		}
	})
}
