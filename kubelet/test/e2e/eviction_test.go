package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/kubelet/app"
)

// TestMemoryPressureEviction runs the kubelet with a memory threshold no
// machine meets (memory.available<1000Ti), so the node is under memory
// pressure from the start: the node reports MemoryPressure, a new
// BestEffort pod is refused, and a Burstable pod, admitted, is evicted
// (its containers killed, the pod Failed/Evicted) and counted in
// kubelet_evictions.
func TestMemoryPressureEviction(t *testing.T) {
	e := setup(t)
	e.customize = func(o *app.Options) {
		o.Eviction.Hard = "memory.available<1000Ti"
		o.EvictionInterval = time.Second
	}
	k := e.startKubelet(t)
	ctx := context.Background()
	e.assignPodCIDR(t)
	poll(t, 30*time.Second, "MemoryPressure True on the node", func() (bool, string) {
		n, err := e.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeMemoryPressure {
				return c.Status == corev1.ConditionTrue && c.Reason == "KubeletHasInsufficientMemory", fmt.Sprintf("%+v", c)
			}
		}
		return false, "no MemoryPressure condition"
	})

	sleeper := func(name string, r corev1.ResourceRequirements) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"}, Resources: r}},
			},
		}
	}
	// BestEffort: refused under memory pressure, as upstream's admission.
	e.createPod(t, sleeper("best-effort", corev1.ResourceRequirements{}))
	poll(t, 30*time.Second, "the BestEffort pod to be rejected", func() (bool, string) {
		p := e.getPod(t, "best-effort")
		return p.Status.Phase == corev1.PodFailed, fmt.Sprintf("%s %s %q", p.Status.Phase, p.Status.Reason, p.Status.Message)
	})
	if p := e.getPod(t, "best-effort"); p.Status.Reason != "Evicted" || !strings.HasPrefix(p.Status.Message, "Pod was rejected: The node had condition: [MemoryPressure]") {
		t.Errorf("rejected pod status: %q %q", p.Status.Reason, p.Status.Message)
	}
	if ids := e.podContainers(t, e.getPod(t, "best-effort").UID); len(ids) != 0 {
		t.Errorf("a rejected pod got containers: %v", ids)
	}

	// Burstable: admitted, then evicted since the pressure never ends.
	mem := resource.MustParse("16Mi")
	created := e.createPod(t, sleeper("burstable", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: mem}}))
	var evicted *corev1.Pod
	poll(t, 60*time.Second, "the Burstable pod to be evicted", func() (bool, string) {
		evicted = e.getPod(t, "burstable")
		return evicted.Status.Phase == corev1.PodFailed, fmt.Sprintf("%s %s %q", evicted.Status.Phase, evicted.Status.Reason, evicted.Status.Message)
	})
	st := evicted.Status
	if st.Reason != "Evicted" || !strings.HasPrefix(st.Message, "The node was low on resource: memory. Threshold quantity: 1000Ti, available: ") {
		t.Errorf("evicted pod: reason %q message %q", st.Reason, st.Message)
	}
	var disruption bool
	for _, c := range st.Conditions {
		disruption = disruption || (c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "TerminationByKubelet")
	}
	if !disruption {
		t.Errorf("no DisruptionTarget condition on the evicted pod: %+v", st.Conditions)
	}
	if ids := e.podContainers(t, created.UID); len(ids) != 0 {
		t.Errorf("containers left after the eviction: %v", ids)
	}
	for _, class := range []string{"", "burstable", "besteffort"} {
		if dir := e.podCgroupDir("memory", class, created.UID); statErr(dir) == nil {
			t.Errorf("pod cgroup %s left after the eviction", dir)
		}
	}
	code, body := e.apiClient(t, k, "apiserver-kubelet-client").get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	if !strings.Contains(body, `kubelet_evictions{eviction_signal="memory.available"} 1`) {
		t.Errorf("/metrics lacks one memory.available eviction:\n%s", grepLines(body, "kubelet_evictions"))
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
