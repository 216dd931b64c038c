package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/apiserver/pkg/testserver"
)

const podManifest = `apiVersion: v1
kind: Pod
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  containers:
  - name: web
    image: nginx
`

const replicaSetManifest = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
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

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%s does not contain %q:\n%s", what, s, got)
		}
	}
}

func TestVerbs(t *testing.T) {
	ts := testserver.Start(t, nil)
	ctx := context.Background()
	rsFile := writeFile(t, "replicaset.yaml", replicaSetManifest)
	// No controller manager runs here: create the default ServiceAccount
	// that pod admission needs.
	if _, err := ts.Client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("create", func(t *testing.T) {
		out := must(t, ts, "", "create", "-f", rsFile)
		if out != "replicaset.apps/my-replicaset created\n" {
			t.Errorf("create output = %q", out)
		}
		rs, err := ts.Client.AppsV1().ReplicaSets("default").Get(ctx, "my-replicaset", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *rs.Spec.Replicas != 2 || rs.Spec.Template.Spec.Containers[0].Image != "nginx" {
			t.Errorf("stored replicaset = %+v", rs.Spec)
		}
		r := skiffctl(t, ts, "", "create", "-f", rsFile)
		if r.err == nil || !strings.Contains(r.err.Error(), "AlreadyExists") {
			t.Errorf("second create error = %v, want AlreadyExists", r.err)
		}
		// apply takes over an object that create made, with a warning.
		r = skiffctl(t, ts, "", "apply", "-f", rsFile)
		if r.err != nil || r.out != "replicaset.apps/my-replicaset configured\n" || !strings.Contains(r.errOut, "Warning: replicaset.apps/my-replicaset has no kubectl.kubernetes.io/last-applied-configuration") {
			t.Errorf("apply over a created object: %v %q %q", r.err, r.out, r.errOut)
		}
		// A server dry run stores nothing; -o prints what the server answered.
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\n"
		out = must(t, ts, cm, "create", "-f", "-", "--dry-run=server", "-o", "jsonpath={.metadata.name}/{.kind}")
		if out != "dry/ConfigMap" {
			t.Errorf("create --dry-run=server -o jsonpath = %q", out)
		}
		if _, err := ts.Client.CoreV1().ConfigMaps("default").Get(ctx, "dry", metav1.GetOptions{}); err == nil {
			t.Error("a server dry run stored the object")
		}
	})

	t.Run("get", func(t *testing.T) {
		out := must(t, ts, "", "get", "rs")
		wantContains(t, "get rs", out, "NAME            DESIRED   CURRENT   READY   AGE", "my-replicaset   2")
		out = must(t, ts, "", "get", "rs", "-o", "wide")
		wantContains(t, "get rs -o wide", out, "CONTAINERS", "IMAGES", "SELECTOR", "app=my-app")
		out = must(t, ts, "", "get", "replicaset/my-replicaset", "-o", "yaml")
		wantContains(t, "get -o yaml", out, "kind: ReplicaSet", "name: my-replicaset", "replicas: 2")
		out = must(t, ts, "", "get", "rs", "my-replicaset", "-o", "json")
		wantContains(t, "get -o json", out, `"kind": "ReplicaSet"`)
		out = must(t, ts, "", "get", "rs,ns", "-o", "name")
		wantContains(t, "get -o name", out, "replicaset.apps/my-replicaset\n", "namespace/default\n")
		out = must(t, ts, "", "get", "rs", "-o", "jsonpath={.items[*].metadata.name}")
		if out != "my-replicaset" {
			t.Errorf("jsonpath output = %q", out)
		}
		out = must(t, ts, "", "get", "rs", "-l", "app=nothing")
		if out != "" {
			t.Errorf("get with a selector that matches nothing printed %q", out)
		}
		r := skiffctl(t, ts, "", "get", "rs", "-l", "app=nothing")
		wantContains(t, "stderr of an empty get", r.errOut, "No resources found in default namespace.")
		out = must(t, ts, "", "get", "ns", "--field-selector", "metadata.name=kube-system", "--no-headers")
		if !strings.HasPrefix(out, "kube-system") || strings.Count(out, "\n") != 1 {
			t.Errorf("field selector output = %q", out)
		}
		out = must(t, ts, "", "get", "rs,svc")
		wantContains(t, "two kinds", out, "replicaset.apps/my-replicaset", "\n\nNAME", "service/kubernetes")
		out = must(t, ts, "", "get", "all")
		wantContains(t, "get all", out, "service/kubernetes", "replicaset.apps/my-replicaset")
		out = must(t, ts, "", "get", "--raw", "/readyz")
		if out != "ok" {
			t.Errorf("get --raw /readyz = %q", out)
		}
		out = must(t, ts, "", "get", "--raw", "/api/v1/namespaces?limit=1")
		wantContains(t, "get --raw with a query", out, `"kind":"NamespaceList"`)
		r = skiffctl(t, ts, "", "get", "rs", "missing")
		if r.err == nil || !strings.Contains(r.err.Error(), `replicasets.apps "missing" not found`) {
			t.Errorf("get of a missing object: %v", r.err)
		}
	})

	t.Run("get -w", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan result, 1)
		go func() { done <- skiffctlCtx(cctx, ts, "", "get", "configmaps", "-w") }()
		// Create a ConfigMap once the watch is established: poll until it
		// shows up in the watch's output.
		if _, err := ts.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(3*time.Second, cancel)
		r := <-done
		if r.err != nil {
			t.Fatalf("get -w: %v", r.err)
		}
		wantContains(t, "get -w", r.out, "NAME", "watched")

		// Watching one object: listed once, then its changes.
		cctx2, cancel2 := context.WithCancel(ctx)
		defer cancel2()
		go func() { done <- skiffctlCtx(cctx2, ts, "", "get", "configmap", "watched", "-w", "-o", "name") }()
		// Change the object every 200ms until the watch is cancelled.
		updates := 0
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Second, false, func(ctx context.Context) (bool, error) {
			cm, err := ts.Client.CoreV1().ConfigMaps("default").Get(ctx, "watched", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			cm.Data = map[string]string{"changed": fmt.Sprint(updates)}
			if _, err := ts.Client.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err == nil {
				updates++
			}
			return false, nil
		})
		cancel2()
		r = <-done
		if r.err != nil {
			t.Fatalf("get NAME -w: %v", r.err)
		}
		// The first print is the object as listed; each later one is an
		// update seen by the watch (the last updates may race the cancel).
		if n := strings.Count(r.out, "configmap/watched"); n < 2 || n > updates+1 {
			t.Errorf("get configmap watched -w -o name printed the object %d times after %d updates:\n%s", n, updates, r.out)
		}
	})

	t.Run("describe", func(t *testing.T) {
		rs, err := ts.Client.AppsV1().ReplicaSets("default").Get(ctx, "my-replicaset", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		yes := true
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "my-replicaset-abcde", Labels: map[string]string{"app": "my-app"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "my-container", Image: "nginx"}}},
		}
		pod, err = ts.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		now := metav1.Now()
		_, err = ts.Client.CoreV1().Events("default").Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "my-replicaset-abcde.1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
			Reason:         "Scheduled", Message: "Successfully assigned default/my-replicaset-abcde to node-1",
			Type: "Normal", Source: corev1.EventSource{Component: "default-scheduler"},
			FirstTimestamp: now, LastTimestamp: now, Count: 1,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := must(t, ts, "", "describe", "pod", "my-replicaset-abcde")
		wantContains(t, "describe pod", out,
			"Name:         my-replicaset-abcde", "Namespace:    default",
			"Controlled By:  ReplicaSet/my-replicaset",
			"Owner Chain:  Pod/my-replicaset-abcde <- ReplicaSet/my-replicaset",
			"Events:", "Scheduled", "default-scheduler", "Successfully assigned default/my-replicaset-abcde to node-1")
		out = must(t, ts, "", "describe", "rs/my-replicaset")
		wantContains(t, "describe rs", out, "Controls:     Pod/my-replicaset-abcde")
		// A name prefix works as in kubectl.
		out = must(t, ts, "", "describe", "pods", "my-replicaset")
		wantContains(t, "describe by prefix", out, "Name:         my-replicaset-abcde")
		out = must(t, ts, "", "events", "--for", "pod/my-replicaset-abcde")
		wantContains(t, "events", out, "LAST SEEN   TYPE     REASON      OBJECT                    MESSAGE", "Pod/my-replicaset-abcde")
		if _, err := os.Stat(kubectlPath); err == nil {
			for _, args := range [][]string{{"events"}, {"events", "-A"}, {"events", "--for", "pod/my-replicaset-abcde"}} {
				got, want := maskAge(must(t, ts, "", args...)), maskAge(kubectl(t, ts, "", args...))
				if got != want {
					t.Errorf("skiffctl %v differs from kubectl:\n%s\nkubectl:\n%s", args, got, want)
				}
			}
		}
	})

	t.Run("label and annotate", func(t *testing.T) {
		out := must(t, ts, "", "label", "rs", "my-replicaset", "tier=web")
		if out != "replicaset.apps/my-replicaset labeled\n" {
			t.Errorf("label output = %q", out)
		}
		r := skiffctl(t, ts, "", "label", "rs/my-replicaset", "tier=db")
		if r.err == nil || !strings.Contains(r.err.Error(), "--overwrite") {
			t.Errorf("label without --overwrite: %v", r.err)
		}
		must(t, ts, "", "label", "rs/my-replicaset", "tier=db", "--overwrite")
		must(t, ts, "", "annotate", "rs", "my-replicaset", "note=hello")
		rs, _ := ts.Client.AppsV1().ReplicaSets("default").Get(ctx, "my-replicaset", metav1.GetOptions{})
		if rs.Labels["tier"] != "db" || rs.Annotations["note"] != "hello" {
			t.Errorf("labels %v annotations %v", rs.Labels, rs.Annotations)
		}
		must(t, ts, "", "label", "rs", "my-replicaset", "tier-")
		must(t, ts, "", "annotate", "rs", "--all", "note-")
		rs, _ = ts.Client.AppsV1().ReplicaSets("default").Get(ctx, "my-replicaset", metav1.GetOptions{})
		if _, ok := rs.Labels["tier"]; ok {
			t.Errorf("label tier not removed: %v", rs.Labels)
		}
		if _, ok := rs.Annotations["note"]; ok {
			t.Errorf("annotation note not removed: %v", rs.Annotations)
		}
	})

	t.Run("scale", func(t *testing.T) {
		out := must(t, ts, "", "scale", "rs/my-replicaset", "--replicas=5")
		if out != "replicaset.apps/my-replicaset scaled\n" {
			t.Errorf("scale output = %q", out)
		}
		rs, _ := ts.Client.AppsV1().ReplicaSets("default").Get(ctx, "my-replicaset", metav1.GetOptions{})
		if *rs.Spec.Replicas != 5 {
			t.Errorf("replicas = %d, want 5", *rs.Spec.Replicas)
		}
		r := skiffctl(t, ts, "", "scale", "rs/my-replicaset", "--replicas=1", "--current-replicas=2")
		if r.err == nil {
			t.Error("scale with a wrong --current-replicas succeeded")
		}
	})

	t.Run("edit", func(t *testing.T) {
		script := writeFile(t, "editor.sh", "#!/bin/sh\nsed -i 's/image: nginx$/image: nginx:1.27/' \"$1\"\n")
		if err := os.Chmod(script, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBE_EDITOR", script)
		out := must(t, ts, "", "edit", "rs/my-replicaset")
		if out != "replicaset.apps/my-replicaset edited\n" {
			t.Errorf("edit output = %q", out)
		}
		rs, _ := ts.Client.AppsV1().ReplicaSets("default").Get(ctx, "my-replicaset", metav1.GetOptions{})
		if img := rs.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
			t.Errorf("image after edit = %q", img)
		}
		t.Setenv("KUBE_EDITOR", "true")
		r := skiffctl(t, ts, "", "edit", "rs/my-replicaset")
		if r.err == nil || !strings.Contains(r.err.Error(), "cancelled") {
			t.Errorf("edit without changes: %v", r.err)
		}
	})

	t.Run("wait", func(t *testing.T) {
		go func() {
			_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
				p, err := ts.Client.CoreV1().Pods("default").Get(ctx, "my-replicaset-abcde", metav1.GetOptions{})
				if err != nil {
					return false, nil
				}
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
				_, err = ts.Client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
				return err == nil, nil
			})
		}()
		out := must(t, ts, "", "wait", "pod/my-replicaset-abcde", "--for=condition=Ready", "--timeout=20s")
		if out != "pod/my-replicaset-abcde condition met\n" {
			t.Errorf("wait output = %q", out)
		}
		r := skiffctl(t, ts, "", "wait", "rs/my-replicaset", "--for=condition=Nope", "--timeout=1s")
		if r.err == nil || !strings.Contains(r.err.Error(), "timed out") {
			t.Errorf("wait for a condition that never comes: %v", r.err)
		}
		out = must(t, ts, "", "wait", "pod/my-replicaset-abcde", "--for=jsonpath={.spec.containers[0].name}=my-container", "--timeout=5s")
		wantContains(t, "wait jsonpath", out, "condition met")
	})

	t.Run("delete", func(t *testing.T) {
		cm := writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: doomed\n  labels:\n    doomed: \"yes\"\n")
		must(t, ts, "", "apply", "-f", cm)
		out := must(t, ts, "", "delete", "-f", cm)
		if out != "configmap \"doomed\" deleted\n" {
			t.Errorf("delete -f output = %q", out)
		}
		if _, err := ts.Client.CoreV1().ConfigMaps("default").Get(ctx, "doomed", metav1.GetOptions{}); err == nil {
			t.Error("configmap still exists after delete returned")
		}
		must(t, ts, "", "apply", "-f", cm)
		out = must(t, ts, "", "delete", "cm", "-l", "doomed=yes", "--grace-period=0", "--force")
		wantContains(t, "delete -l", out, `configmap "doomed" deleted`)
		r := skiffctl(t, ts, "", "delete", "cm", "doomed")
		if r.err == nil || !strings.Contains(r.err.Error(), "NotFound") {
			t.Errorf("delete of a missing object: %v", r.err)
		}
		must(t, ts, "", "delete", "cm", "doomed", "--ignore-not-found")
		out = must(t, ts, "", "delete", "rs", "my-replicaset", "--wait=false")
		wantContains(t, "delete --wait=false", out, `replicaset.apps "my-replicaset" deleted`)
	})

	t.Run("version and api-resources", func(t *testing.T) {
		out := must(t, ts, "", "version")
		wantContains(t, "version", out, "Client Version: v", "Server Version: v")
		out = must(t, ts, "", "api-resources", "--api-group=apps")
		wantContains(t, "api-resources", out, "NAME", "SHORTNAMES", "deployments", "deploy", "apps/v1", "Deployment")
		if strings.Contains(out, "configmaps") {
			t.Error("api-resources --api-group=apps lists configmaps")
		}
	})

	t.Run("explain", func(t *testing.T) {
		out := must(t, ts, "", "explain", "deploy")
		wantContains(t, "explain deploy", out, "GROUP:      apps", "KIND:       Deployment", "VERSION:    v1", "DESCRIPTION:", "FIELDS:", "spec\t<DeploymentSpec>")
		out = must(t, ts, "", "explain", "pod.spec.containers.ports")
		wantContains(t, "explain field", out, "FIELD: ports <[]ContainerPort>", "containerPort\t<integer> -required-")
		r := skiffctl(t, ts, "", "explain", "pod.spec.nope")
		if r.err == nil || !strings.Contains(r.err.Error(), `"nope" does not exist`) {
			t.Errorf("explain of a missing field: %v", r.err)
		}
	})

	t.Run("logs", func(t *testing.T) {
		r := skiffctl(t, ts, "", "logs", "my-replicaset-abcde")
		if r.err == nil {
			t.Fatal("logs succeeded although no kubelet serves them")
		}
		wantContains(t, "logs error", r.err.Error(), "my-replicaset-abcde", `container "my-container"`)
	})

	t.Run("completion", func(t *testing.T) {
		for _, shell := range []string{"bash", "zsh"} {
			out := must(t, ts, "", "completion", shell)
			wantContains(t, "completion "+shell, out, "skiffctl")
		}
		out := must(t, ts, "", "__complete", "get", "")
		wantContains(t, "completion of resource types", out, "pods", "deployments")
		out = must(t, ts, "", "__complete", "get", "pods", "my-")
		wantContains(t, "completion of names", out, "my-replicaset-abcde")
		out = must(t, ts, "", "__complete", "get", "pods", "-n", "kube-")
		wantContains(t, "completion of -n", out, "kube-system", "kube-public")
	})
}

func TestRollout(t *testing.T) {
	ts := testserver.Start(t, nil)
	ctx := context.Background()
	deployFile := writeFile(t, "deploy.yaml", strings.Replace(strings.Split(manifestsV1, "---")[0], "replicas: 2", "replicas: 1", 1))
	must(t, ts, "", "apply", "-f", deployFile)
	d, err := ts.Client.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Play the deployment controller: two revisions as ReplicaSets.
	yes := true
	makeRS := func(rev, image string) {
		t.Helper()
		tmpl := d.Spec.Template.DeepCopy()
		tmpl.Labels["pod-template-hash"] = "h" + rev
		tmpl.Spec.Containers[0].Image = image
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "web-h" + rev, Labels: tmpl.Labels,
				Annotations:     map[string]string{"deployment.kubernetes.io/revision": rev},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes}}},
			Spec: appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: *tmpl},
		}
		if _, err := ts.Client.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	makeRS("1", "registry.local/web:0")
	makeRS("2", "registry.local/web:1")

	out := must(t, ts, "", "rollout", "history", "deploy/web")
	wantContains(t, "history", out, "deployment.apps/web", "REVISION  CHANGE-CAUSE", "1         <none>", "2         <none>")
	if _, err := os.Stat(kubectlPath); err == nil {
		if want := kubectl(t, ts, "", "rollout", "history", "deploy/web"); out != want {
			t.Errorf("rollout history differs from kubectl's:\n%q\nkubectl:\n%q", out, want)
		}
	}

	// status: report progress, then success once the status says so.
	go func() {
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			cur, err := ts.Client.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			cur.Status = appsv1.DeploymentStatus{ObservedGeneration: cur.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
			_, err = ts.Client.AppsV1().Deployments("default").UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err == nil, nil
		})
	}()
	out = must(t, ts, "", "rollout", "status", "deployment/web", "--timeout=30s")
	wantContains(t, "rollout status", out, `deployment "web" successfully rolled out`)

	// undo: the template of revision 1 goes back into the Deployment.
	out = must(t, ts, "", "rollout", "undo", "deploy/web", "--to-revision=1")
	if out != "deployment.apps/web rolled back\n" {
		t.Errorf("undo output = %q", out)
	}
	d, _ = ts.Client.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "registry.local/web:0" {
		t.Errorf("image after undo = %q, want registry.local/web:0", img)
	}
	if _, ok := d.Spec.Template.Labels["pod-template-hash"]; ok {
		t.Error("undo copied the pod-template-hash label into the Deployment")
	}
	if d.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "" {
		t.Error("undo dropped the last-applied annotation")
	}

	out = must(t, ts, "", "rollout", "restart", "deploy/web")
	if out != "deployment.apps/web restarted\n" {
		t.Errorf("restart output = %q", out)
	}
	d, _ = ts.Client.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Error("restart did not set kubectl.kubernetes.io/restartedAt")
	}

	// A failed rollout ends rollout status with an error.
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	d.Status.ObservedGeneration = d.Generation
	if _, err := ts.Client.AppsV1().Deployments("default").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := skiffctl(t, ts, "", "rollout", "status", "deploy/web", "--timeout=10s")
	if r.err == nil || !strings.Contains(r.err.Error(), "exceeded its progress deadline") {
		t.Errorf("rollout status of a failed rollout: %v", r.err)
	}
}
