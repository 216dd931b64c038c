package pod

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestPodGracePeriod(t *testing.T) {
	tests := []struct {
		name string
		pod  corev1.Pod
		opts metav1.DeleteOptions
		want int64
	}{
		{name: "unscheduled", want: 0},
		{name: "scheduled default", pod: corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}}, want: 30},
		{name: "scheduled own", pod: corev1.Pod{Spec: corev1.PodSpec{NodeName: "n", TerminationGracePeriodSeconds: ptr.To[int64](5)}}, want: 5},
		{name: "requested", pod: corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}}, opts: metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, want: 0},
		{name: "finished", pod: corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := GracePeriod(&tc.pod, &tc.opts); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// ephemeralPod is a running pod with one container "app" and one ephemeral
// container "debug", defaulted as the store defaults what it decodes.
func ephemeralPod() *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1", ResourceVersion: "5", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{
			NodeName:   "n1",
			Containers: []corev1.Container{{Name: "app", Image: "busybox"}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", Command: []string{"sh"}}, TargetContainerName: "app"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	Default(p)
	return p
}

func addEphemeral(p *corev1.Pod, ec corev1.EphemeralContainer) {
	if ec.Image == "" {
		ec.Image = "busybox"
	}
	if ec.Name == "" {
		ec.Name = "debug2"
	}
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, ec)
	Default(p)
}

func TestEphemeralContainersStrategy(t *testing.T) {
	type wantErr struct {
		typ   field.ErrorType
		field string
	}
	tests := []struct {
		name   string
		old    func(*corev1.Pod)
		change func(*corev1.Pod)
		want   []wantErr
	}{
		{name: "add one", change: func(p *corev1.Pod) { addEphemeral(p, corev1.EphemeralContainer{}) }},
		{name: "add one targeting app", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{TargetContainerName: "app"})
		}},
		{name: "reordered, unchanged", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{})
			ecs := p.Spec.EphemeralContainers
			ecs[0], ecs[1] = ecs[1], ecs[0]
		}},
		{name: "remove", change: func(p *corev1.Pod) { p.Spec.EphemeralContainers = nil },
			want: []wantErr{{field.ErrorTypeForbidden, "spec.ephemeralContainers"}}},
		{name: "change image", change: func(p *corev1.Pod) { p.Spec.EphemeralContainers[0].Image = "other" },
			want: []wantErr{{field.ErrorTypeForbidden, "spec.ephemeralContainers"}}},
		{name: "ports", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Ports: []corev1.ContainerPort{{ContainerPort: 80}}}})
		}, want: []wantErr{{field.ErrorTypeForbidden, "spec.ephemeralContainers[1].ports"}}},
		{name: "probe", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}})
		}, want: []wantErr{{field.ErrorTypeForbidden, "spec.ephemeralContainers[1].readinessProbe"}}},
		{name: "lifecycle", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}})
		}, want: []wantErr{{field.ErrorTypeForbidden, "spec.ephemeralContainers[1].lifecycle"}}},
		{name: "resources", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}})
		}, want: []wantErr{{field.ErrorTypeForbidden, "spec.ephemeralContainers[1].resources"}}},
		{name: "name of a container", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "app"}})
		}, want: []wantErr{{field.ErrorTypeDuplicate, "spec.ephemeralContainers[1].name"}}},
		{name: "name of an ephemeral container", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}})
		}, want: []wantErr{{field.ErrorTypeDuplicate, "spec.ephemeralContainers[1].name"}, {field.ErrorTypeForbidden, "spec.ephemeralContainers"}}},
		{name: "unknown target", change: func(p *corev1.Pod) {
			addEphemeral(p, corev1.EphemeralContainer{TargetContainerName: "nope"})
		}, want: []wantErr{{field.ErrorTypeNotFound, "spec.ephemeralContainers[1].targetContainerName"}}},
		{name: "static pod", old: func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} },
			change: func(p *corev1.Pod) { addEphemeral(p, corev1.EphemeralContainer{}) },
			want:   []wantErr{{field.ErrorTypeForbidden, "[]"}}},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := ephemeralPod()
			if tc.old != nil {
				tc.old(old)
			}
			obj := old.DeepCopy()
			tc.change(obj)
			EphemeralContainersStrategy.PrepareForUpdate(ctx, obj, old)
			errs := EphemeralContainersStrategy.ValidateUpdate(ctx, obj, old)
			var got []wantErr
			for _, e := range errs {
				got = append(got, wantErr{e.Type, e.Field})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors %v, want %v (%v)", got, tc.want, errs)
			}
			if len(tc.want) > 0 {
				if err := apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), "p", errs); apierrors.ReasonForError(err) != metav1.StatusReasonInvalid || err.Status().Code != 422 {
					t.Errorf("status %v, want 422 Invalid", err.Status())
				}
			}
		})
	}
}

// TestEphemeralContainersStrategyKeepsTheRest: of an update through
// pods/ephemeralcontainers only spec.ephemeralContainers is taken; labels,
// other spec fields and the status stay as stored.
func TestEphemeralContainersStrategyKeepsTheRest(t *testing.T) {
	old := ephemeralPod()
	obj := old.DeepCopy()
	addEphemeral(obj, corev1.EphemeralContainer{})
	obj.Labels = map[string]string{"changed": "yes"}
	obj.Spec.Containers[0].Image = "changed"
	obj.Status.Phase = corev1.PodFailed
	obj.ResourceVersion = "6"
	EphemeralContainersStrategy.PrepareForUpdate(context.Background(), obj, old)
	if errs := EphemeralContainersStrategy.ValidateUpdate(context.Background(), obj, old); len(errs) != 0 {
		t.Fatalf("valid update refused: %v", errs)
	}
	if obj.Labels["a"] != "b" || obj.Labels["changed"] != "" || obj.Spec.Containers[0].Image != "busybox" || obj.Status.Phase != corev1.PodRunning {
		t.Errorf("the update changed more than ephemeral containers: labels %v, image %q, phase %q", obj.Labels, obj.Spec.Containers[0].Image, obj.Status.Phase)
	}
	if len(obj.Spec.EphemeralContainers) != 2 || obj.ResourceVersion != "6" {
		t.Errorf("ephemeral containers %d, resourceVersion %q; want 2 and the request's 6", len(obj.Spec.EphemeralContainers), obj.ResourceVersion)
	}
}

// TestPodUpdateRefusesEphemeralContainers: a plain update of the pod may
// carry the ephemeral containers unchanged, but not add one (upstream:
// "pod updates may not change fields other than ...").
func TestPodUpdateRefusesEphemeralContainers(t *testing.T) {
	ctx := context.Background()
	old := ephemeralPod()
	same := old.DeepCopy()
	same.Spec.Containers[0].Image = "busybox:2"
	Strategy.PrepareForUpdate(ctx, same, old)
	if errs := Strategy.ValidateUpdate(ctx, same, old); len(errs) != 0 {
		t.Errorf("update keeping the ephemeral containers refused: %v", errs)
	}
	added := old.DeepCopy()
	addEphemeral(added, corev1.EphemeralContainer{})
	Strategy.PrepareForUpdate(ctx, added, old)
	errs := Strategy.ValidateUpdate(ctx, added, old)
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeForbidden || errs[0].Field != "spec" {
		t.Errorf("adding an ephemeral container by a pod update: %v, want Forbidden spec", errs)
	}
}
