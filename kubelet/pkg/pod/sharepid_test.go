package pod

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The PID namespace each container of a pod asks for: the pod sandbox's
// for every container (ephemeral ones too, with or without a target) with
// shareProcessNamespace; the node's with hostPID; else its own, or its
// target's for an ephemeral container.
func TestPIDNamespaceOfContainers(t *testing.T) {
	type want struct {
		share, host bool
		target      bool
	}
	tests := []struct {
		name  string
		share *bool
		host  bool
		want  map[string]want
	}{
		{name: "shareProcessNamespace", share: ptr.To(true), want: map[string]want{
			"c": {share: true}, "d": {share: true}, "loner": {share: true}, "debug": {share: true},
		}},
		{name: "default", want: map[string]want{
			"c": {}, "d": {}, "loner": {}, "debug": {target: true},
		}},
		{name: "shareProcessNamespace false", share: ptr.To(false), want: map[string]want{
			"c": {}, "d": {}, "loner": {}, "debug": {target: true},
		}},
		{name: "hostPID", host: true, want: map[string]want{
			"c": {host: true}, "d": {host: true}, "loner": {host: true}, "debug": {host: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod(corev1.RestartPolicyAlways, "busybox")
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "d", Image: "busybox"})
			pod.Spec.ShareProcessNamespace, pod.Spec.HostPID = tt.share, tt.host
			h := newHarness(pod)
			specs := map[string]ContainerSpec{}
			h.rt.onCreate = func(s ContainerSpec) { specs[s.Labels[LabelContainerName]] = s }
			h.sync(t)
			target, _ := h.w.state.Latest("c")
			h.w.Update(withEphemeral(withEphemeral(pod, "loner", ""), "debug", "c"))
			h.sync(t)
			if len(specs) != 4 {
				t.Fatalf("created %v, want c, d, loner and debug", h.rt.calls)
			}
			for name, w := range tt.want {
				s := specs[name]
				if s.SharePID != w.share || s.HostPID != w.host || (s.TargetID != "") != w.target {
					t.Errorf("%s: SharePID %v HostPID %v TargetID %q, want %+v", name, s.SharePID, s.HostPID, s.TargetID, w)
				}
				if w.target && s.TargetID != target.ID {
					t.Errorf("%s: target %q, want %q", name, s.TargetID, target.ID)
				}
			}
		})
	}
}

// removals records the container IDs removed.
type removals struct {
	Runtime
	ids []string
}

func (r *removals) RemoveContainer(ctx context.Context, id string) error {
	r.ids = append(r.ids, id)
	return r.Runtime.RemoveContainer(ctx, id)
}

// A pod with shareProcessNamespace loses its sandbox container when it is
// torn down and when it finishes, after its containers were stopped; other
// pods leave the runtime's sandbox alone.
func TestSandboxRemovedWithPod(t *testing.T) {
	for _, share := range []bool{true, false} {
		pod := testPod(corev1.RestartPolicyAlways, "busybox")
		pod.Spec.ShareProcessNamespace = ptr.To(share)
		rt := &removals{Runtime: newFakeRuntime(time.Now)}
		h := &ContainersHook{Runtime: rt}
		s := NewState(pod)
		if err := h.Release(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		if err := h.Destroy(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		var want []string
		if share {
			want = []string{SandboxID(pod.UID), SandboxID(pod.UID)}
		}
		if !reflect.DeepEqual(rt.ids, want) {
			t.Errorf("shareProcessNamespace %v: removed %v, want %v", share, rt.ids, want)
		}
	}
}
