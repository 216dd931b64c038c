package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"skiff.dev/kubelet/test/harness"
)

// daemonPods returns the pods of the DaemonSet "agent", with a line
// describing them.
func (c *cluster) daemonPods(t *testing.T) ([]corev1.Pod, string) {
	t.Helper()
	l, err := c.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, p := range l.Items {
		states = append(states, fmt.Sprintf("%s on %q %s ready=%v deleting=%v hash=%s", p.Name, p.Spec.NodeName, p.Status.Phase,
			podReady(&p), p.DeletionTimestamp != nil, p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]))
	}
	return l.Items, strings.Join(states, "; ")
}

// waitDaemonPodSays waits for exactly one pod of "agent", ready on the
// node, whose log is want; it returns the pod.
func (c *cluster) waitDaemonPodSays(t *testing.T, want string) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	harness.Poll(t, 3*time.Minute, "one ready agent pod saying "+want, func() (bool, string) {
		pods, state := c.daemonPods(t)
		if len(pods) != 1 || pods[0].Spec.NodeName != nodeName || !podReady(&pods[0]) || pods[0].DeletionTimestamp != nil {
			return false, state
		}
		pod = pods[0]
		out, err := c.kubectlErr("logs", pod.Name)
		return err == nil && strings.TrimSpace(out) == want, state + "; log: " + out
	})
	return pod
}

// TestDaemonSets runs a DaemonSet on the one-node cluster with real
// containers, placed through the scheduler: its pod lands on the node
// once the node has the label its nodeSelector wants; a changed command
// rolls out (kubectl rollout status waits for it) and kubectl rollout undo
// brings the old one back; removing the label removes the pod.
func TestDaemonSets(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	grace := int64(1)
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec: corev1.PodSpec{
					NodeSelector:                  map[string]string{"e2e.skiff.dev/agent": "yes"},
					TerminationGracePeriodSeconds: &grace,
					Containers: []corev1.Container{{Name: "agent", Image: "busybox",
						Command: []string{"sh", "-c", "echo v1; exec sleep 3600"}}},
				},
			},
		},
	}
	if _, err := c.client.AppsV1().DaemonSets("default").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Poll(t, 30*time.Second, "the DaemonSet's status with no eligible node", func() (bool, string) {
		cur, err := c.client.AppsV1().DaemonSets("default").Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Status.ObservedGeneration == 1 && cur.Status.DesiredNumberScheduled == 0, fmt.Sprintf("%+v", cur.Status)
	})
	if pods, state := c.daemonPods(t); len(pods) != 0 {
		t.Fatalf("pods on a node without the label: %s", state)
	}

	setLabel := func(value *string) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := c.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if value == nil {
				delete(n.Labels, "e2e.skiff.dev/agent")
			} else {
				n.Labels["e2e.skiff.dev/agent"] = *value
			}
			_, err = c.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	yes := "yes"
	setLabel(&yes)
	v1 := c.waitDaemonPodSays(t, "v1")
	if ref := metav1.GetControllerOf(&v1); ref == nil || ref.Kind != "DaemonSet" || ref.Name != "agent" {
		t.Errorf("pod controller %+v", ref)
	}
	c.kubectl(t, "rollout", "status", "daemonset/agent", "--timeout=2m")

	// Roll out a changed command.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.client.AppsV1().DaemonSets("default").Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Template.Spec.Containers[0].Command = []string{"sh", "-c", "echo v2; exec sleep 3600"}
		_, err = c.client.AppsV1().DaemonSets("default").Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c.kubectl(t, "rollout", "status", "daemonset/agent", "--timeout=3m")
	v2 := c.waitDaemonPodSays(t, "v2")
	if v2.UID == v1.UID || v2.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == v1.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] ||
		v2.Labels["pod-template-generation"] != "2" {
		t.Errorf("rolled-out pod %s labels %v (old %s labels %v)", v2.Name, v2.Labels, v1.Name, v1.Labels)
	}
	if out := c.kubectl(t, "rollout", "history", "daemonset/agent"); !strings.Contains(out, "1 ") || !strings.Contains(out, "2 ") {
		t.Errorf("kubectl rollout history:\n%s", out)
	}

	// kubectl rollout undo: back to revision 1's command.
	c.kubectl(t, "rollout", "undo", "daemonset/agent")
	c.kubectl(t, "rollout", "status", "daemonset/agent", "--timeout=3m")
	back := c.waitDaemonPodSays(t, "v1")
	if back.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != v1.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] {
		t.Errorf("after undo the pod runs revision %s, want %s", back.Labels[appsv1.DefaultDaemonSetUniqueLabelKey], v1.Labels[appsv1.DefaultDaemonSetUniqueLabelKey])
	}

	// Without the label the node loses its pod.
	setLabel(nil)
	harness.Poll(t, 2*time.Minute, "no agent pod once the label is gone", func() (bool, string) {
		pods, state := c.daemonPods(t)
		return len(pods) == 0, state
	})
	harness.Poll(t, 30*time.Second, "status with no eligible node", func() (bool, string) {
		cur, err := c.client.AppsV1().DaemonSets("default").Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Status.DesiredNumberScheduled == 0 && cur.Status.CurrentNumberScheduled == 0 && cur.Status.NumberMisscheduled == 0,
			fmt.Sprintf("%+v", cur.Status)
	})
}
