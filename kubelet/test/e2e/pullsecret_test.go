package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestImagePullSecret pulls from a registry that wants a password: a pod
// without the pull secret cannot, a pod with it runs.
func TestImagePullSecret(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	private := startRegistryWith(t, "puller", "pa55word")
	pushImage(t, buildBusyboxImage(t), private, "private/busybox", "puller", "pa55word")
	e.startKubelet(t)
	e.makeReady(t)
	image := private + "/private/busybox:latest"
	pod := func(name string, secrets ...string) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				AutomountServiceAccountToken:  ptr.To(false),
				Containers:                    []corev1.Container{{Name: "c", Image: image, Command: []string{"sleep", "3600"}}},
			},
		}
		for _, s := range secrets {
			p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
		}
		return p
	}
	waiting := func(name string) string {
		p := e.getPod(t, name)
		if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
			return ""
		}
		return p.Status.ContainerStatuses[0].State.Waiting.Reason
	}

	e.createPod(t, pod("no-secret"))
	poll(t, 30*time.Second, "the pull without credentials to fail", func() (bool, string) {
		r := waiting("no-secret")
		return r == "ErrImagePull" || r == "ImagePullBackOff", r
	})

	auth := base64.StdEncoding.EncodeToString([]byte("puller:pa55word"))
	if _, err := e.client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "regcred"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(fmt.Sprintf(`{"auths":{"http://%s":{"auth":%q}}}`, private, auth))},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createPod(t, pod("with-secret", "missing", "regcred"))
	poll(t, 60*time.Second, "the pod with the pull secret to run", func() (bool, string) {
		p := e.getPod(t, "with-secret")
		return p.Status.Phase == corev1.PodRunning, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
	})
	poll(t, 10*time.Second, "a FailedToRetrieveImagePullSecret event for the missing secret", func() (bool, string) {
		events, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, ev := range events.Items {
			if ev.InvolvedObject.Name == "with-secret" && ev.Reason == "FailedToRetrieveImagePullSecret" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(events.Items))
	})
}
