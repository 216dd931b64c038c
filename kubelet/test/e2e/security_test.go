package e2e

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/exec"
	"k8s.io/utils/ptr"
)

func sleeper(name string, sc *corev1.SecurityContext) corev1.Container {
	return corev1.Container{Name: name, Image: "busybox", Command: []string{"sleep", "3600"}, SecurityContext: sc}
}

// securityPod has one container per security setting.
func securityPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sec"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			SecurityContext:               &corev1.PodSecurityContext{SupplementalGroups: []int64{3000}},
			Containers: []corev1.Container{
				sleeper("default", nil),
				sleeper("user", &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](2000)}),
				sleeper("ro", &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}),
				sleeper("caps", &corev1.SecurityContext{
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}},
					AllowPrivilegeEscalation: ptr.To(false),
				}),
				sleeper("priv", &corev1.SecurityContext{Privileged: ptr.To(true)}),
			},
		},
	}
}

// procStatus returns a field of /proc/1/status in a container.
func procStatus(t *testing.T, api *apiClient, container, field string) string {
	t.Helper()
	out, _, err := api.exec(context.Background(), "default", "sec", container, nil, "grep", field+":", "/proc/1/status")
	if err != nil {
		t.Fatalf("reading %s in %s: %v", field, container, err)
	}
	_, v, _ := strings.Cut(strings.TrimSpace(out), ":")
	return strings.TrimSpace(v)
}

// TestSecurityContext checks users and groups, a read-only root,
// capabilities, privileged mode, no_new_privs and OOMKilled on real
// containers.
func TestSecurityContext(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	k := e.startKubelet(t)
	e.makeReady(t)
	// The privileged container needs the privileged Pod Security level.
	e.enforcePrivileged(t)
	e.createPod(t, securityPod())
	hog := e.createPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hog"},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{
				Name: "hog", Image: "busybox", Command: []string{"sh", "-c", `a=0123456789abcdef; while true; do a="$a$a"; done`},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}},
			}},
		},
	})
	poll(t, 60*time.Second, "pod sec to run", func() (bool, string) {
		p := e.getPod(t, "sec")
		return condition(p, corev1.ContainersReady) == corev1.ConditionTrue, fmt.Sprintf("%+v", p.Status.ContainerStatuses)
	})
	api := e.apiClient(t, k, "apiserver-kubelet-client")

	t.Run("runAsUser, runAsGroup, supplementalGroups", func(t *testing.T) {
		for _, tc := range []struct{ container, flag, want string }{
			{"user", "-u", "1000"}, {"user", "-g", "2000"}, {"default", "-u", "0"},
		} {
			out, _, err := api.exec(ctx, "default", "sec", tc.container, nil, "id", tc.flag)
			if err != nil || strings.TrimSpace(out) != tc.want {
				t.Errorf("%s: id %s = %q, %v; want %s", tc.container, tc.flag, out, err, tc.want)
			}
		}
		out, _, err := api.exec(ctx, "default", "sec", "user", nil, "id", "-G")
		if err != nil || !strings.Contains(" "+strings.TrimSpace(out)+" ", " 3000 ") {
			t.Errorf("id -G = %q, %v; want 3000 among the groups", out, err)
		}
	})

	t.Run("readOnlyRootFilesystem", func(t *testing.T) {
		_, stderr, err := api.exec(ctx, "default", "sec", "ro", nil, "touch", "/x")
		var exitErr exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitStatus() == 0 || !strings.Contains(stderr, "Read-only file system") {
			t.Errorf("touch /x on a read-only root: %v, stderr %q", err, stderr)
		}
		if _, _, err := api.exec(ctx, "default", "sec", "default", nil, "touch", "/x"); err != nil {
			t.Errorf("touch /x on a writable root: %v", err)
		}
	})

	t.Run("capabilities, privileged and no_new_privs", func(t *testing.T) {
		const ociDefault = "00000000a80425fb"
		if got := procStatus(t, api, "default", "CapEff"); got != ociDefault {
			t.Errorf("default CapEff = %s, want the OCI default %s", got, ociDefault)
		}
		if got := procStatus(t, api, "caps", "CapEff"); got != "0000000000000400" {
			t.Errorf("drop ALL, add NET_BIND_SERVICE: CapEff = %s, want 0000000000000400", got)
		}
		if got := procStatus(t, api, "caps", "NoNewPrivs"); got != "1" {
			t.Errorf("allowPrivilegeEscalation false: NoNewPrivs = %s", got)
		}
		if got := procStatus(t, api, "default", "NoNewPrivs"); got != "0" {
			t.Errorf("default NoNewPrivs = %s, want 0 (upstream allows escalation by default)", got)
		}
		capEff, err := strconv.ParseUint(procStatus(t, api, "priv", "CapEff"), 16, 64)
		const capSysAdmin = 21
		if err != nil || capEff&(1<<capSysAdmin) == 0 {
			t.Errorf("privileged CapEff = %x, %v; want CAP_SYS_ADMIN", capEff, err)
		}
		out, _, err := api.exec(ctx, "default", "sec", "priv", nil, "ls", "/dev")
		if err != nil || !strings.Contains(out, "loop") {
			t.Errorf("privileged /dev lacks the host's devices: %q, %v", out, err)
		}
	})

	t.Run("OOMKilled", func(t *testing.T) {
		poll(t, 60*time.Second, "the memory hog to be OOM-killed", func() (bool, string) {
			p, err := e.client.CoreV1().Pods("default").Get(ctx, hog.Name, metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 {
				return false, fmt.Sprint(err)
			}
			term := p.Status.ContainerStatuses[0].State.Terminated
			return p.Status.Phase == corev1.PodFailed && term != nil, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses[0].State)
		})
		term := e.getPod(t, "hog").Status.ContainerStatuses[0].State.Terminated
		if term.Reason != "OOMKilled" || term.ExitCode != 137 {
			t.Errorf("terminated = %+v, want OOMKilled with exit code 137", term)
		}
	})
}

// enforcePrivileged labels the default namespace with the privileged Pod
// Security level and waits until admission sees it: the API server reads
// namespace labels from its watch of namespaces, as upstream's PodSecurity
// reads them from an informer, so a pod created at once may still meet the
// old level. A server-side dry run of a privileged pod shows when it does.
func (e *env) enforcePrivileged(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	patch := `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`
	if _, err := e.client.CoreV1().Namespaces().Patch(ctx, "default", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "privileged-level-probe"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}},
	}
	poll(t, 30*time.Second, "the privileged level to be enforced in default", func() (bool, string) {
		_, err := e.client.CoreV1().Pods("default").Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil, fmt.Sprint(err)
	})
}
