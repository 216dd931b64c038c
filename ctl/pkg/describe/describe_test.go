package describe

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n--- got ---\n%s--- want ---\n%s", path, got, want)
	}
}

const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web-7d9c-abcde
  namespace: default
  creationTimestamp: "2026-01-01T10:00:00Z"
  labels: {app: web, pod-template-hash: 7d9c}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-7d9c, uid: u1, controller: true}
spec:
  nodeName: node-1
  containers:
  - name: app
    image: registry.local/web:1
    ports:
    - {containerPort: 8080, protocol: TCP}
status:
  phase: Running
  podIP: 10.244.0.5
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2026-01-01T10:00:09Z"}
  - {type: PodScheduled, status: "True", lastTransitionTime: "2026-01-01T10:00:01Z"}
  - {type: Initialized, status: "True", lastTransitionTime: "2026-01-01T10:00:02Z"}
  - {type: ContainersReady, status: "True", lastTransitionTime: "2026-01-01T10:00:09Z"}
`

func TestDescribePod(t *testing.T) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(podYAML), &m); err != nil {
		t.Fatal(err)
	}
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 10, 0, s, 0, time.UTC)) }
	in := Input{
		Object: &unstructured.Unstructured{Object: m},
		Owners: []Owner{{Kind: "ReplicaSet", Name: "web-7d9c"}, {Kind: "Deployment", Name: "web"}},
		Events: []corev1.Event{
			{Type: "Normal", Reason: "Pulled", Message: "Container image pulled", Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
				FirstTimestamp: at(3), LastTimestamp: at(5), Count: 2},
			{Type: "Normal", Reason: "Scheduled", Message: "Successfully assigned default/web-7d9c-abcde to node-1",
				Source: corev1.EventSource{Component: "default-scheduler"}, FirstTimestamp: at(1), LastTimestamp: at(1), Count: 1},
		},
		Now: time.Date(2026, 1, 1, 10, 5, 0, 0, time.UTC),
	}
	var buf bytes.Buffer
	if err := Describe(&buf, in); err != nil {
		t.Fatal(err)
	}
	golden(t, "pod.txt", buf.Bytes())
}

func TestDescribeNoEvents(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "default", "creationTimestamp": "2026-01-01T10:00:00Z"},
		"data":     map[string]any{"app.conf": "x=1", "A_KEY": "2"},
	}}
	var buf bytes.Buffer
	if err := Describe(&buf, Input{Object: u, Now: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	golden(t, "configmap.txt", buf.Bytes())
}

func TestSmartLabel(t *testing.T) {
	for in, want := range map[string]string{"containerPort": "Container Port", "podIP": "Pod IP", "spec": "Spec", "terminationGracePeriodSeconds": "Termination Grace Period Seconds"} {
		if got := smartLabel(in); got != want {
			t.Errorf("smartLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
