package nodeports

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func withPorts(name string, ports ...corev1.ContainerPort) *corev1.Pod {
	p := testutil.Pod(name, [2]string{"", ""})
	p.Spec.Containers[0].Ports = ports
	return p
}

func TestFilter(t *testing.T) {
	tcp := func(ip string, port int32) corev1.ContainerPort {
		return corev1.ContainerPort{HostIP: ip, HostPort: port, ContainerPort: 80, Protocol: corev1.ProtocolTCP}
	}
	udp := func(ip string, port int32) corev1.ContainerPort {
		return corev1.ContainerPort{HostIP: ip, HostPort: port, ContainerPort: 80, Protocol: corev1.ProtocolUDP}
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     framework.Code
	}{
		{name: "no ports", pod: withPorts("p"), existing: []*corev1.Pod{withPorts("e", tcp("", 80))}, want: framework.Success},
		{name: "container port only", pod: withPorts("p", corev1.ContainerPort{ContainerPort: 80}), existing: []*corev1.Pod{withPorts("e", tcp("", 80))}, want: framework.Success},
		{name: "free", pod: withPorts("p", tcp("", 8080)), existing: []*corev1.Pod{withPorts("e", tcp("", 80))}, want: framework.Success},
		{name: "same port", pod: withPorts("p", tcp("", 80)), existing: []*corev1.Pod{withPorts("e", tcp("", 80))}, want: framework.Unschedulable},
		{name: "other protocol", pod: withPorts("p", udp("", 80)), existing: []*corev1.Pod{withPorts("e", tcp("", 80))}, want: framework.Success},
		{name: "different IPs", pod: withPorts("p", tcp("127.0.0.1", 80)), existing: []*corev1.Pod{withPorts("e", tcp("127.0.0.2", 80))}, want: framework.Success},
		{name: "wildcard vs IP", pod: withPorts("p", tcp("0.0.0.0", 80)), existing: []*corev1.Pod{withPorts("e", tcp("127.0.0.2", 80))}, want: framework.Unschedulable},
		{name: "IP vs wildcard", pod: withPorts("p", tcp("127.0.0.1", 80)), existing: []*corev1.Pod{withPorts("e", tcp("", 80))}, want: framework.Unschedulable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ni := testutil.NodeInfo(testutil.Node("n", "1", "1Gi", 10), tt.existing...)
			st := (&NodePorts{}).Filter(context.Background(), nil, tt.pod, ni)
			if st.Code() != tt.want {
				t.Fatalf("code = %v, want %v", st.Code(), tt.want)
			}
			if tt.want != framework.Success && st.Message() != ErrReason {
				t.Fatalf("message = %q", st.Message())
			}
		})
	}
}
