package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidatePodStatusUpdate(t *testing.T) {
	base := func() *corev1.Pod {
		p := validPod()
		p.ObjectMeta = storedMeta(p.ObjectMeta)
		p.Spec.NodeName = "node-1"
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Status.QOSClass = corev1.PodQOSBestEffort
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
		return p
	}
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{name: "ip and condition", mutate: func(p *corev1.Pod) {
			p.Status.PodIP = "10.244.0.5"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.0.5"}, {IP: "fd00::5"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}, {Type: "example.com/gate", Status: corev1.ConditionTrue}}
		}},
		{name: "bad pod ip", mutate: func(p *corev1.Pod) { p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.0.500"}} }, want: []want{inv("status.podIPs[0]")}},
		{name: "two ipv4 pod ips", mutate: func(p *corev1.Pod) {
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.0.5"}, {IP: "10.244.0.6"}}
		}, want: []want{inv("status.podIPs")}},
		{name: "node name change", mutate: func(p *corev1.Pod) { p.Spec.NodeName = "node-2" }, want: []want{forb("status.nodeName")}},
		{name: "qos change", mutate: func(p *corev1.Pod) { p.Status.QOSClass = corev1.PodQOSGuaranteed }, want: []want{inv("status.qosClass")}},
		{name: "terminated container restarted", mutate: func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		}, want: []want{forb("status.containerStatuses[0].state")}},
		{name: "bad condition type", mutate: func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: "bad type", Status: corev1.ConditionTrue}}
		}, want: []want{inv("metadata.conditions[0].Type")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := base()
			p := old.DeepCopy()
			tc.mutate(p)
			checkErrs(t, ValidatePodStatusUpdate(p, old), tc.want)
		})
	}
}

func TestValidatePodBinding(t *testing.T) {
	checkErrs(t, ValidatePodBinding(&corev1.Binding{ObjectMeta: meta("web"), Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}), nil)
	checkErrs(t, ValidatePodBinding(&corev1.Binding{ObjectMeta: meta("web")}), []want{req("target.name")})
	checkErrs(t, ValidatePodBinding(&corev1.Binding{ObjectMeta: meta("web"), Target: corev1.ObjectReference{Kind: "Pod", Name: "x"}}), []want{nsup("target.kind")})
}
