package admission

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func TestPodSecurityBaseline(t *testing.T) {
	base := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
		p.Name = "p"
		if mut != nil {
			mut(p)
		}
		return p
	}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		nsLabels  map[string]string
		wantError string
	}{
		{name: "plain pod", pod: base(nil)},
		{name: "privileged", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}),
			wantError: `privileged (container "app" must not set securityContext.privileged=true)`},
		{name: "privileged allowed by namespace", nsLabels: map[string]string{EnforceLabel: "privileged"},
			pod: base(func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			})},
		{name: "hostPath", pod: base(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}), wantError: `hostPath volume (volume "root")`},
		{name: "host network", pod: base(func(p *corev1.Pod) { p.Spec.HostNetwork = true }), wantError: "host namespaces (hostNetwork=true)"},
		{name: "hostPort", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		}),
			wantError: `hostPort (container "app" uses hostPort 8080)`},
		{name: "allowed capability", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}}}
		})},
		{name: "SYS_ADMIN", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
		}), wantError: `non-default capabilities (container "app" must not include "SYS_ADMIN" in securityContext.capabilities.add)`},
		{name: "unconfined seccomp", pod: base(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
		}), wantError: "seccompProfile (pod must not set"},
		{name: "seLinux type of pod and container", pod: base(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{User: "root"}}
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}}
		}), wantError: `seLinuxOptions (pod, container "app" set forbidden securityContext.seLinuxOptions)`},
		{name: "allowed seLinux type", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "container_t"}}
		})},
		{name: "unconfined AppArmor of a container", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
		}), wantError: `forbidden AppArmor profiles (container "app")`},
		{name: "unconfined AppArmor of the pod", pod: base(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
		}), wantError: `forbidden AppArmor profiles (pod)`},
		{name: "capabilities of two containers", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN", "NET_ADMIN"}}}
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}}}
		}), wantError: `non-default capabilities (containers "init", "app" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)`},
		{name: "unsafe sysctl", pod: base(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}}
		}), wantError: "forbidden sysctls (kernel.msgmax)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &PodSecurity{DefaultLevel: "baseline", Labels: func(context.Context, string) (map[string]string, error) { return tc.nsLabels, nil }}
			err := p.Validate(context.Background(), &Attributes{Operation: Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "ns", Object: tc.pod})
			if tc.wantError == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.wantError) || !strings.Contains(err.Error(), `violates PodSecurity "baseline:latest"`) {
				t.Errorf("got %v, want 403 mentioning %q", err, tc.wantError)
			}
		})
	}
}

func TestDefaultTolerationSeconds(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)}}}}
	d := &DefaultTolerationSeconds{Seconds: 300}
	if err := d.Admit(context.Background(), &Attributes{Operation: Create, Object: pod}); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Tolerations) != 2 || *pod.Spec.Tolerations[0].TolerationSeconds != 10 || pod.Spec.Tolerations[1].Key != corev1.TaintNodeNotReady || *pod.Spec.Tolerations[1].TolerationSeconds != 300 {
		t.Errorf("tolerations = %+v", pod.Spec.Tolerations)
	}
}
