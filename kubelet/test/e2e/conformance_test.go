package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestConformanceBehaviours checks, on one node, kubelet behaviours that
// upstream's conformance suite relies on: a finished pod's logs stay
// readable (across a kubelet restart) until the pod is deleted.
func TestConformanceBehaviours(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	outer := t
	k := e.startKubelet(t)
	e.makeReady(t)

	done := imagePod("done", "busybox", corev1.RestartPolicyNever, "sh", "-c", "echo hello from done; echo oops >&2")
	done = e.createPod(t, done)

	t.Run("finished pod keeps its containers and logs until deleted", func(t *testing.T) {
		var p *corev1.Pod
		poll(t, 60*time.Second, "pod done to succeed", func() (bool, string) {
			p = e.getPod(t, "done")
			return p.Status.Phase == corev1.PodSucceeded, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
		})
		api := e.apiClient(t, k, "apiserver-kubelet-client")
		logs := "/containerLogs/default/done/c"
		poll(t, 10*time.Second, "the finished pod's log", func() (bool, string) {
			code, body := api.get(t, logs)
			return code == http.StatusOK && body == "hello from done\noops\n", fmt.Sprintf("%d %q", code, body)
		})
		ids := e.podContainers(t, p.UID)
		if len(ids) != 1 {
			t.Fatalf("containers of the finished pod: %v, want its one exited container", ids)
		}
		// What it held is released: network namespace and pod cgroup.
		poll(t, 10*time.Second, "the finished pod's namespace and cgroup to go", func() (bool, string) {
			netns := filepath.Join(e.netnsDir, "skiff-"+string(p.UID))
			_, err := os.Stat(netns)
			cg := e.podCgroupDir("memory", "besteffort", p.UID)
			return errors.Is(err, os.ErrNotExist) && errors.Is(statErr(cg), os.ErrNotExist), fmt.Sprintf("netns: %v, cgroup %s: %v", err, cg, statErr(cg))
		})
		// A restarted kubelet adopts the finished pod: the log stays.
		k.stop()
		k = e.startKubelet(outer)
		poll(t, 30*time.Second, "the new kubelet to sync", func() (bool, string) { return k.cfg.Kubelet.Synced(), "" })
		api = e.apiClient(t, k, "apiserver-kubelet-client")
		if code, body := api.get(t, logs); code != http.StatusOK || body != "hello from done\noops\n" {
			t.Errorf("after a kubelet restart: %d %q", code, body)
		}
		if got := e.podContainers(t, p.UID); strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Errorf("containers after a kubelet restart: %v, want %v", got, ids)
		}
		if err := e.client.CoreV1().Pods("default").Delete(ctx, "done", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, 30*time.Second, "pod done to be gone", func() (bool, string) {
			_, err := e.client.CoreV1().Pods("default").Get(ctx, "done", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		// A finished pod is removed at once (grace period 0); the kubelet
		// then removes its containers and logs.
		poll(t, 30*time.Second, "pod done's containers to go", func() (bool, string) {
			left := e.podContainers(t, p.UID)
			return len(left) == 0, fmt.Sprint(left)
		})
		e.assertNothingLeft(t, p.UID, p.Status.PodIP, ids)
	})
}
