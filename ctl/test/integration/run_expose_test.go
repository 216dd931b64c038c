package integration

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"skiff.dev/apiserver/pkg/testserver"
)

// sameStored compares the object name in nsA and nsB without what
// differs between namespaces (normalized) and the server's choices
// (nodePorts) and the field manager.
func sameStored(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, nsA, nsB, name string) {
	t.Helper()
	a := normalized(t, dyn, gvr, nsA, name)
	b := normalized(t, dyn, gvr, nsB, name)
	if !reflect.DeepEqual(a, b) {
		ja, _ := json.MarshalIndent(a, "", "  ")
		jb, _ := json.MarshalIndent(b, "", "  ")
		t.Errorf("%s %q differs:\n--- skiffctl ---\n%s\n--- kubectl ---\n%s", gvr.Resource, name, ja, jb)
	}
}

// skiffctl run and expose make the objects kubectl makes for the same
// flags: the client dry run's YAML is the same text, and the stored
// objects are the same.
func TestRunAndExposeMatchKubectl(t *testing.T) {
	requireKubectl(t)
	ts := testserver.Start(t, nil)
	ctx := context.Background()
	for _, ns := range []string{"sk", "kc"} {
		if _, err := ts.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deploy := writeFile(t, "deploy.yaml", strings.Split(manifestsV1, "---")[0])
	must(t, ts, "", "apply", "-n", "sk", "-f", deploy)
	must(t, ts, "", "apply", "-n", "kc", "-f", deploy)

	dryRuns := [][]string{
		{"run", "web", "--image=nginx", "--port=80"},
		{"run", "job", "--image=busybox", "--restart=Never", "--labels=a=b,c=d", "--env=X=1", "--env=Y=2", "--command", "--", "sh", "-c", "echo hi"},
		{"run", "p", "--image=nginx", "--privileged", "--image-pull-policy=IfNotPresent", "--annotations=x=y", "--", "arg1", "arg2"},
		{"run", "web", "--image=nginx", "--port=80", "--expose"},
		{"expose", "deploy", "web", "--port=80", "--target-port=8080"},
		{"expose", "deployment/web", "--name=web-np", "--type=NodePort", "--protocol=UDP", "--labels=tier=front"},
		{"expose", "deploy/web", "--port=80,443", "--session-affinity=ClientIP", "--external-ip=192.0.2.1"},
	}
	for _, args := range dryRuns {
		for _, o := range []string{"yaml", "json", "name"} {
			full := append([]string{"-n", "sk"}, append(args[:len(args):len(args)], "--dry-run=client", "-o", o)...)
			if i := indexOf(args, "--"); i >= 0 {
				full = append([]string{"-n", "sk"}, append(append(append([]string{}, args[:i]...), "--dry-run=client", "-o", o), args[i:]...)...)
			}
			got := must(t, ts, "", full...)
			want, errOut, err := kubectlRun(t, ts, full...)
			if err != nil {
				t.Fatalf("kubectl %v: %v\n%s", full, err, errOut)
			}
			if got != want {
				t.Errorf("%v:\n--- skiffctl ---\n%s\n--- kubectl ---\n%s", full, got, want)
			}
		}
	}

	// For real: the same objects stored, the same lines printed.
	creates := [][]string{
		{"run", "web", "--image=nginx", "--port=80", "--labels=app=web", "--expose"},
		{"run", "job", "--image=busybox", "--restart=Never", "--command", "--", "sh", "-c", "echo hi"},
		{"expose", "deploy", "web", "--name=web-2", "--port=8080", "--target-port=http"},
		// Stdin kept open for a later attach, with a terminal asked for.
		{"run", "sin", "--image=busybox", "-i", "-t", "--attach=false", "--", "sh"},
		{"run", "sin-open", "--image=busybox", "-i", "--attach=false", "--leave-stdin-open", "--restart=OnFailure"},
	}
	for _, args := range creates {
		got := must(t, ts, "", append([]string{"-n", "sk"}, args...)...)
		want, errOut, err := kubectlRun(t, ts, append([]string{"-n", "kc"}, args...)...)
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, errOut)
		}
		if got != want {
			t.Errorf("%v printed %q, kubectl %q", args, got, want)
		}
	}
	dyn, err := dynamicFor(ts)
	if err != nil {
		t.Fatal(err)
	}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	// The field managers differ by name only: skiffctl's are kubectl's.
	sameStored(t, dyn, pods, "sk", "kc", "web")
	sameStored(t, dyn, pods, "sk", "kc", "job")
	sameStored(t, dyn, services, "sk", "kc", "web")
	sameStored(t, dyn, services, "sk", "kc", "web-2")
	sameStored(t, dyn, pods, "sk", "kc", "sin")
	sameStored(t, dyn, pods, "sk", "kc", "sin-open")

	// The attached run's flags refused as kubectl refuses them, with its
	// messages (neither creates anything).
	for _, args := range [][]string{
		{"run", "x", "--image=busybox", "-t"},
		{"run", "x", "--image=busybox", "--rm"},
		{"run", "x", "--image=busybox", "--rm", "-i", "--attach=false"},
		{"run", "x", "--image=busybox", "-i", "--dry-run=client"},
		{"run", "x", "--image=busybox", "--attach", "--dry-run=server"},
		{"run", "x", "--image=busybox", "-i", "--restart=Sometimes"},
	} {
		full := append([]string{"-n", "sk"}, args...)
		r := skiffctl(t, ts, "", full...)
		_, kerr, err := kubectlRun(t, ts, full...)
		if r.err == nil || err == nil {
			t.Errorf("%v: skiffctl %v, kubectl %v; want both refused", args, r.err, err)
			continue
		}
		if want := strings.SplitN(kerr, "\n", 2)[0]; strings.SplitN(stderrOf(r), "\n", 2)[0] != want {
			t.Errorf("%v: skiffctl says %q, kubectl %q", args, stderrOf(r), kerr)
		}
	}
	if _, err := ts.Client.CoreV1().Pods("sk").Get(ctx, "x", metav1.GetOptions{}); err == nil {
		t.Errorf("a refused run created its pod")
	}

	if r := skiffctl(t, ts, "", "run", "x", "--image=nginx", "--restart=Sometimes"); r.err == nil || !strings.Contains(r.err.Error(), "invalid restart policy: Sometimes") {
		t.Errorf("a bad --restart: %v", r.err)
	}
	if r := skiffctl(t, ts, "", "run", "x", "--image=nginx", "--expose"); r.err == nil || !strings.Contains(r.err.Error(), "--port must be set when exposing a service") {
		t.Errorf("--expose without --port: %v", r.err)
	}
	if r := skiffctl(t, ts, "", "-n", "sk", "expose", "pod", "job"); r.err == nil || !strings.Contains(r.err.Error(), "couldn't find port via --port flag or introspection") {
		t.Errorf("expose of a pod without ports: %v", r.err)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func dynamicFor(ts *testserver.TestServer) (dynamic.Interface, error) {
	return dynamic.NewForConfig(ts.AdminConfig)
}
