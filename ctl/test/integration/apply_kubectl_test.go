package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"skiff.dev/apiserver/pkg/testserver"
)

const kubectlPath = "/usr/bin/kubectl"

// manifestsV1 is the first version of the application.
const manifestsV1 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
    team: blue
  annotations:
    owner: ops
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: registry.local/web:1
        ports:
        - containerPort: 8080
        env:
        - name: MODE
          value: fast
        - name: DEBUG
          value: "1"
      - name: sidecar
        image: registry.local/log:1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: "1"
  b: "2"
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080
`

// manifestsV2 removes fields (a label, an annotation, an env var, a
// container, a ConfigMap key) and changes others.
const manifestsV2 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: registry.local/web:2
        ports:
        - containerPort: 8080
        env:
        - name: MODE
          value: safe
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: "10"
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 8080
    targetPort: 8080
`

func kubectl(t *testing.T, ts *testserver.TestServer, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(kubectlPath, append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func requireKubectl(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Skipf("the real kubectl is not installed at %s", kubectlPath)
	}
}

var comparedKinds = []struct {
	gvr  schema.GroupVersionResource
	name string
}{
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "web"},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "settings"},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "web"},
}

// normalized returns the stored object without what differs between two
// namespaces: identity, timestamps, managedFields, the namespace, the
// Service's allocated IPs; the last-applied annotation is decoded with
// its namespace removed.
func normalized(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) map[string]any {
	t.Helper()
	u, err := dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	annots := u.GetAnnotations()
	if la, ok := annots["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		if !strings.HasSuffix(la, "\n") {
			t.Errorf("%s %s/%s: last-applied annotation does not end in a newline as kubectl's does", gvr.Resource, ns, name)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(la), &v); err != nil {
			t.Fatalf("last-applied annotation is not JSON: %v", err)
		}
		unstructured.RemoveNestedField(v, "metadata", "namespace")
		annots["kubectl.kubernetes.io/last-applied-configuration"] = ""
		u.SetAnnotations(annots)
		u.Object["lastApplied"] = v
	}
	return u.Object
}

func compareNamespaces(t *testing.T, dyn dynamic.Interface, nsA, nsB, step string) {
	t.Helper()
	for _, k := range comparedKinds {
		a := normalized(t, dyn, k.gvr, nsA, k.name)
		b := normalized(t, dyn, k.gvr, nsB, k.name)
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.MarshalIndent(a, "", "  ")
			jb, _ := json.MarshalIndent(b, "", "  ")
			t.Errorf("%s: %s %q differs:\n--- %s ---\n%s\n--- %s ---\n%s", step, k.gvr.Resource, k.name, nsA, ja, nsB, jb)
		}
	}
}

// TestApplyMatchesKubectl applies the same manifests with skiffctl and
// with kubectl, in two namespaces, and compares the stored objects after
// creating and after an update that removes fields.
func TestApplyMatchesKubectl(t *testing.T) {
	requireKubectl(t)
	ts := testserver.Start(t, nil)
	dyn, err := dynamic.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	v1, v2 := filepath.Join(dir, "v1.yaml"), filepath.Join(dir, "v2.yaml")
	if err := os.WriteFile(v1, []byte(manifestsV1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v2, []byte(manifestsV2), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, ts, "", "create", "namespace", "by-skiffctl")
	kubectl(t, ts, "", "create", "namespace", "by-kubectl")

	out := must(t, ts, "", "apply", "-f", v1, "-n", "by-skiffctl")
	wantCreated := "deployment.apps/web created\nconfigmap/settings created\nservice/web created\n"
	if out != wantCreated {
		t.Errorf("skiffctl apply output:\n%s\nwant:\n%s", out, wantCreated)
	}
	kubectl(t, ts, "", "apply", "-f", v1, "-n", "by-kubectl")
	compareNamespaces(t, dyn, "by-skiffctl", "by-kubectl", "after creating")

	out = must(t, ts, "", "apply", "-f", v1, "-n", "by-skiffctl")
	if want := "deployment.apps/web unchanged\nconfigmap/settings unchanged\nservice/web unchanged\n"; out != want {
		t.Errorf("second skiffctl apply of the same manifests:\n%s\nwant:\n%s", out, want)
	}

	out = must(t, ts, "", "apply", "-f", v2, "-n", "by-skiffctl")
	if want := "deployment.apps/web configured\nconfigmap/settings configured\nservice/web configured\n"; out != want {
		t.Errorf("skiffctl apply of v2:\n%s\nwant:\n%s", out, want)
	}
	kubectl(t, ts, "", "apply", "-f", v2, "-n", "by-kubectl")
	compareNamespaces(t, dyn, "by-skiffctl", "by-kubectl", "after applying v2")

	// The removed fields are gone.
	d := normalized(t, dyn, comparedKinds[0].gvr, "by-skiffctl", "web")
	if _, ok, _ := unstructured.NestedString(d, "metadata", "labels", "team"); ok {
		t.Error("label team, removed from the manifest, is still set")
	}
	containers, _, _ := unstructured.NestedSlice(d, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Errorf("deployment has %d containers after the sidecar was removed, want 1", len(containers))
	}

	// Each tool takes over the other's objects: the same manifest is
	// unchanged for both.
	out = must(t, ts, "", "apply", "-f", v2, "-n", "by-kubectl")
	if want := "deployment.apps/web unchanged\nconfigmap/settings unchanged\nservice/web unchanged\n"; out != want {
		t.Errorf("skiffctl apply over kubectl's objects:\n%s\nwant:\n%s", out, want)
	}
	kout := kubectl(t, ts, "", "apply", "-f", v2, "-n", "by-skiffctl")
	if !strings.Contains(kout, "deployment.apps/web unchanged") || !strings.Contains(kout, "configmap/settings unchanged") {
		t.Errorf("kubectl apply over skiffctl's objects: %s", kout)
	}
	// kubectl takes over skiffctl's object going back to v1, and
	// skiffctl's and kubectl's results still match.
	kubectl(t, ts, "", "apply", "-f", v1, "-n", "by-skiffctl")
	must(t, ts, "", "apply", "-f", v1, "-n", "by-kubectl")
	compareNamespaces(t, dyn, "by-skiffctl", "by-kubectl", "after switching tools")
}

// TestGetMatchesKubectl compares skiffctl get's layout with kubectl's for
// the same objects (the AGE column, last, is masked).
func TestGetMatchesKubectl(t *testing.T) {
	requireKubectl(t)
	ts := testserver.Start(t, nil)
	must(t, ts, manifestsV1, "apply", "-f", "-")
	must(t, ts, replicaSetManifest, "create", "-f", "-")
	v1 := writeFile(t, "v1.yaml", manifestsV1)
	for _, args := range [][]string{
		{"get", "-f", v1},
		{"get", "-f", v1, "-o", "name"},
		{"get", "rs", "-o", "wide"},
		{"get", "deploy", "web", "-o", "yaml"},
		{"get", "cm/settings", "svc/web", "-o", "json"},
		{"get", "svc,cm", "-o", "yaml"},
		{"get", "all"},
		{"get", "deploy,rs", "-A", "-o", "wide"},
		{"get", "deploy", "-L", "team"},
		{"api-resources"},
		{"api-resources", "-o", "wide"},
		{"api-resources", "--namespaced=false", "-o", "name"},
		{"explain", "deploy"},
		{"explain", "deploy.spec.strategy.type"},
		{"explain", "pod.spec.containers.ports"},
		{"explain", "svc.spec"},
		{"explain", "rs", "--recursive"},
		{"config", "view"},
		{"config", "get-contexts"},
		{"get", "deploy"},
		{"get", "svc,cm"},
		{"get", "configmaps", "-A"},
		{"get", "deploy", "web", "--show-labels"},
		{"get", "ns"},
		{"get", "deploy", "-o", "name"},
		{"get", "svc", "web", "-o", "jsonpath={.spec.ports[0].port}"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			got := maskAge(must(t, ts, "", args...))
			want := maskAge(kubectl(t, ts, "", args...))
			if got != want {
				t.Errorf("skiffctl:\n%s\nkubectl:\n%s", got, want)
			}
		})
	}
}

// ageRE matches an age cell (5s, 3m2s, 10d) and its padding.
var ageRE = regexp.MustCompile(`(?m)\b(\d+[smhdy])+( +|$)`)

// maskAge replaces ages, with their padding, by a fixed token, so that
// output taken a second apart compares equal.
func maskAge(s string) string { return ageRE.ReplaceAllString(s, "<age> ") }
