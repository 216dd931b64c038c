package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/apiserver/pkg/testserver"
)

const kubectlPath = "/usr/bin/kubectl"

type kubectl struct {
	t          *testing.T
	kubeconfig string
}

func newKubectl(t *testing.T) (*kubectl, *testserver.TestServer) {
	t.Helper()
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Fatalf("the real kubectl is required at %s: %v", kubectlPath, err)
	}
	ts := testserver.Start(t, nil)
	return &kubectl{t: t, kubeconfig: ts.Kubeconfig}, ts
}

// run runs kubectl and fails the test when it fails.
func (k *kubectl) run(args ...string) string {
	k.t.Helper()
	out, err := k.try(args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (k *kubectl) try(args ...string) (string, error) {
	return k.tryEnv(nil, args...)
}

func (k *kubectl) tryEnv(env []string, args ...string) (string, error) {
	return k.tryWith(env, "", args...)
}

// runStdin runs kubectl with stdin on its standard input and fails the test
// when it fails.
func (k *kubectl) runStdin(stdin string, args ...string) string {
	k.t.Helper()
	out, err := k.tryWith(nil, stdin, args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (k *kubectl) tryWith(env []string, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Env = append(append(os.Environ(), "HOME="+k.t.TempDir()), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const replicaSetYAML = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  namespace: default
  name: my-replicaset
spec:
  replicas: 2
  selector:
    matchLabels:
      app: my-app
  template:
    metadata:
      labels:
        app: my-app
    spec:
      containers:
      - name: my-container
        image: nginx
        ports:
        - containerPort: 80
`

// columns splits a kubectl table line on runs of two or more spaces.
func columns(line string) []string {
	return regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
}

func TestKubectlCreateGetDescribe(t *testing.T) {
	k, ts := newKubectl(t)
	f := writeFile(t, "rs.yaml", replicaSetYAML)
	if out := k.run("create", "-f", f); strings.TrimSpace(out) != "replicaset.apps/my-replicaset created" {
		t.Errorf("create: %q", out)
	}
	// kubectl create again: AlreadyExists, non-zero exit, upstream's message.
	if out, err := k.try("create", "-f", f); err == nil || !strings.Contains(out, `replicasets.apps "my-replicaset" already exists`) {
		t.Errorf("second create: %v %q", err, out)
	}

	// Upstream's columns, from the server's Table.
	lines := strings.Split(strings.TrimSpace(k.run("get", "rs")), "\n")
	if got := columns(lines[0]); strings.Join(got, ",") != "NAME,DESIRED,CURRENT,READY,AGE" {
		t.Errorf("get rs header: %q", lines[0])
	}
	if got := columns(lines[1]); got[0] != "my-replicaset" || got[1] != "2" || got[2] != "0" {
		t.Errorf("get rs row: %q", lines[1])
	}
	wide := strings.Split(k.run("get", "rs", "-o", "wide"), "\n")
	if got := columns(wide[0]); strings.Join(got, ",") != "NAME,DESIRED,CURRENT,READY,AGE,CONTAINERS,IMAGES,SELECTOR" {
		t.Errorf("get rs -o wide header: %q", wide[0])
	}
	if got := strings.TrimSpace(k.run("get", "rs", "-o", "name")); got != "replicaset.apps/my-replicaset" {
		t.Errorf("-o name: %q", got)
	}
	if got := k.run("get", "rs", "my-replicaset", "-o", "jsonpath={.spec.template.spec.containers[0].imagePullPolicy}"); got != "Always" {
		t.Errorf("-o jsonpath: defaulted imagePullPolicy = %q", got)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(k.run("get", "rs", "my-replicaset", "-o", "json")), &obj); err != nil {
		t.Errorf("-o json: %v", err)
	}
	if y := k.run("get", "rs", "my-replicaset", "-o", "yaml"); !strings.Contains(y, "terminationMessagePath: /dev/termination-log") {
		t.Errorf("-o yaml misses defaults:\n%s", y)
	}
	if got := k.run("get", "rs", "-o", "custom-columns=N:.metadata.name,R:.spec.replicas", "--no-headers"); strings.Join(columns(got), ",") != "my-replicaset,2" {
		t.Errorf("custom-columns: %q", got)
	}
	if out := k.run("get", "rs", "-l", "app=other"); !strings.Contains(out, "No resources found") {
		t.Errorf("-l with no match: %q", out)
	}
	if out := k.run("get", "rs", "--field-selector", "metadata.name=my-replicaset", "-A"); !strings.Contains(out, "my-replicaset") || !strings.HasPrefix(out, "NAMESPACE") {
		t.Errorf("--field-selector -A: %q", out)
	}
	if out := k.run("get", "ns"); !strings.Contains(out, "kube-system") || !strings.Contains(out, "Active") {
		t.Errorf("get ns: %q", out)
	}
	if out := k.run("get", "svc", "kubernetes"); !strings.Contains(out, "10.96.0.1") || !strings.Contains(out, "443/TCP") {
		t.Errorf("get svc kubernetes: %q", out)
	}
	if out := k.run("get", "all"); !strings.Contains(out, "replicaset.apps/my-replicaset") || !strings.Contains(out, "service/kubernetes") {
		t.Errorf("get all: %q", out)
	}
	desc := k.run("describe", "rs", "my-replicaset")
	for _, want := range []string{"Name:         my-replicaset", "Selector:     app=my-app", "Replicas:     0 current / 2 desired", "Image:         nginx", "Events:"} {
		if !strings.Contains(desc, want) {
			t.Errorf("describe lacks %q:\n%s", want, desc)
		}
	}
	if out := k.run("api-resources"); !strings.Contains(out, "replicasets") || !strings.Contains(out, "rs ") {
		t.Errorf("api-resources: %q", out)
	}
	if out := k.run("explain", "replicaset.spec.replicas"); !strings.Contains(out, "replicas") {
		t.Errorf("explain: %q", out)
	}
	_ = ts
}

func TestKubectlApplyEditPatchLabelScaleDelete(t *testing.T) {
	k, ts := newKubectl(t)
	manifest := `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  a: "1"
  b: "2"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
`
	f := writeFile(t, "app.yaml", manifest)
	out := k.run("apply", "-f", f)
	if !strings.Contains(out, "configmap/app-config created") || !strings.Contains(out, "deployment.apps/web created") {
		t.Errorf("apply: %q", out)
	}
	// A changed file: removed keys are removed, changed fields change.
	changed := strings.NewReplacer(`b: "2"`, `c: "3"`, "replicas: 2", "replicas: 3").Replace(manifest)
	if err := os.WriteFile(f, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	out = k.run("apply", "-f", f)
	if !strings.Contains(out, "configmap/app-config configured") || !strings.Contains(out, "deployment.apps/web configured") {
		t.Errorf("second apply: %q", out)
	}
	cm, err := ts.Client.CoreV1().ConfigMaps("default").Get(context.Background(), "app-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 2 || cm.Data["a"] != "1" || cm.Data["c"] != "3" {
		t.Errorf("after apply, data = %v, want a=1 c=3", cm.Data)
	}
	if out := k.run("apply", "-f", f); !strings.Contains(out, "unchanged") {
		t.Errorf("third apply: %q", out)
	}

	// edit through $EDITOR.
	if out, err := k.tryEnv([]string{"EDITOR=sed -i s/replicas:\\ 3/replicas:\\ 4/", "KUBE_EDITOR="}, "edit", "deploy", "web"); err != nil || !strings.Contains(out, "edited") {
		t.Fatalf("edit: %v %q", err, out)
	}
	// patch: strategic, merge, json.
	k.run("patch", "deploy", "web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}`)
	k.run("patch", "cm", "app-config", "--type=merge", "-p", `{"data":{"d":"4"}}`)
	k.run("patch", "cm", "app-config", "--type=json", "-p", `[{"op":"remove","path":"/data/a"}]`)
	k.run("label", "deploy", "web", "tier=frontend")
	k.run("annotate", "deploy", "web", "owner=team-a")
	if out := k.run("scale", "deploy", "web", "--replicas=5"); !strings.Contains(out, "scaled") {
		t.Errorf("scale: %q", out)
	}
	d, err := ts.Client.AppsV1().Deployments("default").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 5 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" || d.Labels["tier"] != "frontend" || d.Annotations["owner"] != "team-a" {
		t.Errorf("deployment after edits: replicas=%d image=%s labels=%v annotations=%v", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, d.Labels, d.Annotations)
	}
	if d.Generation != 5 {
		t.Errorf("generation %d, want 5 (apply, edit, patch, scale changed the spec; label and annotate did not)", d.Generation)
	}
	cm, _ = ts.Client.CoreV1().ConfigMaps("default").Get(context.Background(), "app-config", metav1.GetOptions{})
	if _, ok := cm.Data["a"]; ok || cm.Data["d"] != "4" {
		t.Errorf("configmap after patches: %v", cm.Data)
	}
	// Invalid input: a 422 naming the field, non-zero exit.
	if out, err := k.try("scale", "deploy", "web", "--replicas=-1"); err == nil {
		t.Errorf("scale to -1 succeeded: %q", out)
	}

	out = k.run("delete", "-f", f)
	if !strings.Contains(out, `configmap "app-config" deleted`) || !strings.Contains(out, `deployment.apps "web" deleted`) {
		t.Errorf("delete: %q", out)
	}
	if out := k.run("get", "deploy,cm", "-l", "app=web"); !strings.Contains(out, "No resources found") {
		t.Errorf("after delete: %q", out)
	}
}

func TestKubectlWatch(t *testing.T) {
	k, _ := newKubectl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath, "--kubeconfig", k.kubeconfig, "get", "cm", "-w", "--output-watch-events")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	// Keep writing until the watch reports the object (kubectl may not be
	// watching yet when the first write lands).
	var got []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, _ = k.try("create", "cm", "watched", "--from-literal=x=1")
		for {
			select {
			case l := <-lines:
				got = append(got, l)
				if strings.HasPrefix(l, "ADDED") && strings.Contains(l, "watched") {
					return true, nil
				}
			default:
				return false, nil
			}
		}
	})
	if err != nil {
		t.Fatalf("kubectl get -w never showed ADDED watched: %q", got)
	}
	k.run("delete", "cm", "watched")
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l := <-lines:
			if strings.HasPrefix(l, "DELETED") && strings.Contains(l, "watched") {
				return
			}
		case <-deadline:
			t.Fatal("kubectl get -w never showed DELETED watched")
		}
	}
}
