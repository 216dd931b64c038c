package admission

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psadmissionapi "k8s.io/pod-security-admission/admission/api"

	"k8s.io/utils/ptr"
	"skiff.dev/apiserver/pkg/authn"
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
		}), wantError: `hostPath volumes (volume "root")`},
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
		}), wantError: `seLinuxOptions (pod and container "app" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)`},
		{name: "allowed seLinux type", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "container_t"}}
		})},
		{name: "unconfined AppArmor of a container", pod: base(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
		}), wantError: `forbidden AppArmor profile (container "app" must not set AppArmor profile type to "Unconfined")`},
		{name: "unconfined AppArmor of the pod", pod: base(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
		}), wantError: `forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")`},
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
			p := newTestPodSecurity(t, PodSecurityConfig{Enforce: "baseline"}, tc.nsLabels)
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

func newTestPodSecurity(t *testing.T, cfg PodSecurityConfig, nsLabels map[string]string, pods ...runtime.Object) *PodSecurity {
	t.Helper()
	p, err := NewPodSecurity(cfg, func(context.Context, string) (map[string]string, error) { return nsLabels, nil }, newCacheObjects(pods...), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// plainPod sets no seccomp profile, leaves runAsNonRoot unset and drops no
// capabilities: baseline admits it, restricted does not.
func plainPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
}

// upstream's words for plainPod under restricted:latest.
const plainPodRestricted = `allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), ` +
	`unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), ` +
	`runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), ` +
	`seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

func podSecurityCreate(pod *corev1.Pod) *Attributes {
	return &Attributes{Operation: Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: pod.Namespace, Name: pod.Name, Object: pod,
		User: &authn.User{Name: "alice"}}
}

func TestPodSecurityRestricted(t *testing.T) {
	t.Run("enforce", func(t *testing.T) {
		p := newTestPodSecurity(t, PodSecurityConfig{}, map[string]string{EnforceLabel: "restricted"})
		ctx, notes := WithNotes(context.Background())
		err := p.Validate(ctx, podSecurityCreate(plainPod("plain")))
		want := `pods "plain" is forbidden: violates PodSecurity "restricted:latest": ` + plainPodRestricted
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("got %v\nwant 403 %s", err, want)
		}
		if got := notes.AuditAnnotations()["pod-security.kubernetes.io/enforce-policy"]; got != "restricted:latest" {
			t.Errorf("enforce-policy annotation = %q", got)
		}
	})
	t.Run("a pod that meets restricted", func(t *testing.T) {
		p := newTestPodSecurity(t, PodSecurityConfig{}, map[string]string{EnforceLabel: "restricted"})
		pod := plainPod("good")
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		if err := p.Validate(context.Background(), podSecurityCreate(pod)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("warn", func(t *testing.T) {
		p := newTestPodSecurity(t, PodSecurityConfig{}, map[string]string{"pod-security.kubernetes.io/warn": "restricted"})
		ctx, notes := WithNotes(context.Background())
		if err := p.Validate(ctx, podSecurityCreate(plainPod("plain"))); err != nil {
			t.Fatal(err)
		}
		want := []string{`would violate PodSecurity "restricted:latest": ` + plainPodRestricted}
		if got := notes.TakeWarnings(); !reflect.DeepEqual(got, want) {
			t.Errorf("warnings = %q\nwant %q", got, want)
		}
	})
	t.Run("audit", func(t *testing.T) {
		p := newTestPodSecurity(t, PodSecurityConfig{}, map[string]string{"pod-security.kubernetes.io/audit": "restricted"})
		ctx, notes := WithNotes(context.Background())
		if err := p.Validate(ctx, podSecurityCreate(plainPod("plain"))); err != nil {
			t.Fatal(err)
		}
		if w := notes.TakeWarnings(); len(w) != 0 {
			t.Errorf("warnings under audit: %q", w)
		}
		want := `would violate PodSecurity "restricted:latest": ` + plainPodRestricted
		if got := notes.AuditAnnotations()["pod-security.kubernetes.io/audit-violations"]; got != want {
			t.Errorf("audit-violations = %q\nwant %q", got, want)
		}
	})
	t.Run("warn on a pod template", func(t *testing.T) {
		p := newTestPodSecurity(t, PodSecurityConfig{}, map[string]string{EnforceLabel: "restricted", "pod-security.kubernetes.io/warn": "restricted"})
		pod := plainPod("")
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: pod.Spec}}}
		ctx, notes := WithNotes(context.Background())
		err := p.Validate(ctx, &Attributes{Operation: Create, Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			Namespace: "ns", Name: "web", Object: d})
		if err != nil {
			t.Fatalf("a workload is not refused, only warned about: %v", err)
		}
		if w := notes.TakeWarnings(); len(w) != 1 || !strings.HasPrefix(w[0], `would violate PodSecurity "restricted:latest"`) {
			t.Errorf("warnings = %q", w)
		}
	})
}

func TestPodSecurityLevelsVersionsExemptions(t *testing.T) {
	priv := plainPod("priv")
	priv.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	for _, tc := range []struct {
		name      string
		cfg       PodSecurityConfig
		labels    map[string]string
		attrs     func(*Attributes)
		wantError string
	}{
		{name: "privileged admits everything", labels: map[string]string{EnforceLabel: "privileged"}},
		{name: "baseline refuses privileged", labels: map[string]string{EnforceLabel: "baseline"},
			wantError: `violates PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)`},
		{name: "pinned version", labels: map[string]string{EnforceLabel: "baseline", "pod-security.kubernetes.io/enforce-version": "v1.25"},
			wantError: `violates PodSecurity "baseline:v1.25"`},
		{name: "default level where the namespace sets none", cfg: PodSecurityConfig{Enforce: "restricted"},
			wantError: `violates PodSecurity "restricted:latest"`},
		{name: "exempt user", labels: map[string]string{EnforceLabel: "baseline"},
			cfg: PodSecurityConfig{Exemptions: psadmissionapi.PodSecurityExemptions{Usernames: []string{"alice"}}}},
		{name: "exempt namespace", labels: map[string]string{EnforceLabel: "baseline"},
			cfg: PodSecurityConfig{Exemptions: psadmissionapi.PodSecurityExemptions{Namespaces: []string{"ns"}}}},
		{name: "exempt runtime class", labels: map[string]string{EnforceLabel: "baseline"},
			cfg: PodSecurityConfig{Exemptions: psadmissionapi.PodSecurityExemptions{RuntimeClasses: []string{"kata"}}},
			attrs: func(a *Attributes) {
				pod := a.Object.(*corev1.Pod).DeepCopy()
				pod.Spec.RuntimeClassName = ptr.To("kata")
				a.Object = pod
			}},
		{name: "status updates are not evaluated", labels: map[string]string{EnforceLabel: "baseline"},
			attrs: func(a *Attributes) { a.Operation, a.Subresource, a.OldObject = Update, "status", a.Object }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPodSecurity(t, tc.cfg, tc.labels)
			a := podSecurityCreate(priv)
			if tc.attrs != nil {
				tc.attrs(a)
			}
			ctx, notes := WithNotes(context.Background())
			err := p.Validate(ctx, a)
			if tc.wantError == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if strings.HasPrefix(tc.name, "exempt") && notes.AuditAnnotations()["pod-security.kubernetes.io/exempt"] == "" {
					t.Errorf("no exempt audit annotation: %v", notes.AuditAnnotations())
				}
				return
			}
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.wantError) {
				t.Errorf("got %v, want 403 containing %q", err, tc.wantError)
			}
		})
	}
}

func TestPodSecurityNamespaceLabels(t *testing.T) {
	nsAttrs := func(op Operation, labels, oldLabels map[string]string) *Attributes {
		a := &Attributes{Operation: op, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Name: "ns",
			Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: labels}}}
		if op == Update {
			a.OldObject = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: oldLabels}}
		}
		return a
	}
	p := newTestPodSecurity(t, PodSecurityConfig{}, nil, plainPod("plain"))
	err := p.Validate(context.Background(), nsAttrs(Create, map[string]string{EnforceLabel: "strict"}, nil))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`) {
		t.Errorf("invalid level: %v, want 422 naming the label", err)
	}
	err = p.Validate(context.Background(), nsAttrs(Update, map[string]string{"pod-security.kubernetes.io/enforce-version": "one"}, nil))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "pod-security.kubernetes.io/enforce-version") {
		t.Errorf("invalid version: %v, want 422 naming the label", err)
	}
	// Tightening enforce dry-runs the namespace's pods and warns, without refusing.
	ctx, notes := WithNotes(context.Background())
	if err := p.Validate(ctx, nsAttrs(Update, map[string]string{EnforceLabel: "restricted"}, nil)); err != nil {
		t.Fatal(err)
	}
	want := []string{`existing pods in namespace "ns" violate the new PodSecurity enforce level "restricted:latest"`,
		`plain: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile`}
	if got := notes.TakeWarnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q\nwant %q", got, want)
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
