package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	ctrdimages "github.com/containerd/containerd/images"
	"github.com/containerd/containerd/namespaces"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/kubelet/app"
)

// TestImageGarbageCollection runs the kubelet's image GC against the real
// containerd with thresholds this disk always exceeds (high 1%, low 0%,
// every second): an image that only a deleted pod used is removed, the
// image of a running pod is kept. The minimum age is upstream's guard for
// an image between its pull and its container's creation, when no
// container uses it yet: at 0 the collector may remove it under a starting
// pod, so the test keeps 10 s.
func TestImageGarbageCollection(t *testing.T) {
	e := setup(t)
	// The same busybox under another name and in Docker's manifest format:
	// a second image with its own digest.
	layout := buildBusyboxImage(t)
	if out, err := exec.Command("skopeo", "copy", "--dest-tls-verify=false", "--format", "v2s2",
		"oci:"+layout+":latest", "docker://"+e.registry+"/library/spare:latest").CombinedOutput(); err != nil {
		t.Fatalf("skopeo copy: %v\n%s", err, out)
	}
	e.customize = func(o *app.Options) {
		o.ImageGC.HighThresholdPercent, o.ImageGC.LowThresholdPercent, o.ImageGC.MinAge = 1, 0, 10*time.Second
		o.ImageGCInterval = time.Second
	}
	e.startKubelet(t)
	ctx := context.Background()
	e.assignPodCIDR(t)
	e.createPod(t, imagePod("keeper", "busybox", corev1.RestartPolicyAlways, "sleep", "3600"))
	e.createPod(t, imagePod("once", "spare", corev1.RestartPolicyNever, "true"))
	poll(t, 60*time.Second, "keeper to run and once to finish", func() (bool, string) {
		k, o := e.getPod(t, "keeper"), e.getPod(t, "once")
		return k.Status.Phase == corev1.PodRunning && o.Status.Phase == corev1.PodSucceeded,
			fmt.Sprintf("keeper %s %+v, once %s %+v", k.Status.Phase, k.Status.ContainerStatuses, o.Status.Phase, o.Status.ContainerStatuses)
	})
	if err := e.client.CoreV1().Pods("default").Delete(ctx, "once", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	images := func() string {
		list, err := e.ctd.Client.ListImages(namespaces.WithNamespace(ctx, e.namespace))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, img := range list {
			names = append(names, img.Name())
		}
		return strings.Join(names, " ")
	}
	poll(t, 60*time.Second, "the unused image to be collected", func() (bool, string) {
		got := images()
		return !strings.Contains(got, "library/spare"), got
	})
	if got := images(); !strings.Contains(got, "docker.io/library/busybox:latest") {
		t.Errorf("the running pod's image was collected: images now %q", got)
	}
	if p := e.getPod(t, "keeper"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("keeper is %s after the collection", p.Status.Phase)
	}
}

// TestImageRemovedUnderRunningPod: an image removed by hand while its pod
// runs (crictl rmi, ctr images rm) is pulled again when the container
// restarts, though its imagePullPolicy is IfNotPresent, as upstream makes
// sure of the image before every start.
func TestImageRemovedUnderRunningPod(t *testing.T) {
	e := setup(t)
	e.startKubelet(t)
	e.assignPodCIDR(t)
	ctx := context.Background()
	p := imagePod("restarts", "busybox", corev1.RestartPolicyAlways, "sleep", "5")
	p.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	e.createPod(t, p)
	poll(t, 60*time.Second, "the pod to run", func() (bool, string) {
		p := e.getPod(t, "restarts")
		return p.Status.Phase == corev1.PodRunning, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
	})
	// Every name of the image goes, as with ctr images rm; the running
	// container keeps its snapshot.
	cctx := namespaces.WithNamespace(ctx, e.namespace)
	list, err := e.ctd.Client.ListImages(cctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("containerd lists no images while the pod runs")
	}
	for _, img := range list {
		if err := e.ctd.Client.ImageService().Delete(cctx, img.Name(), ctrdimages.SynchronousDelete()); err != nil {
			t.Fatalf("removing %s: %v", img.Name(), err)
		}
	}
	if p := e.getPod(t, "restarts"); p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("the container restarted before its image was removed: %+v", p.Status.ContainerStatuses)
	}
	poll(t, 60*time.Second, "the container to run again", func() (bool, string) {
		p := e.getPod(t, "restarts")
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].State.Running != nil, fmt.Sprintf("%+v", cs)
	})
	poll(t, 10*time.Second, "two Pulling events", func() (bool, string) {
		events, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		pulls := int32(0)
		for _, ev := range events.Items {
			if ev.InvolvedObject.Name == "restarts" && ev.Reason == "Pulling" {
				pulls += max(ev.Count, 1)
			}
		}
		return pulls == 2, fmt.Sprintf("%d Pulling events", pulls)
	})
}

// imagePod is a pod of one container, c, running cmd in image.
func imagePod(name, image string, policy corev1.RestartPolicy, cmd ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy: policy, TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "c", Image: image, Command: cmd}},
		},
	}
}
