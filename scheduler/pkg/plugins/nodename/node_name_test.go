package nodename

import (
	"context"
	"testing"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		nodeName string
		want     framework.Code
	}{
		{name: "no node name", nodeName: "", want: framework.Success},
		{name: "matching", nodeName: "n1", want: framework.Success},
		{name: "other node", nodeName: "n2", want: framework.UnschedulableAndUnresolvable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testutil.Pod("p")
			pod.Spec.NodeName = tt.nodeName
			st := (&NodeName{}).Filter(context.Background(), nil, pod, testutil.NodeInfo(testutil.Node("n1", "1", "1Gi", 10)))
			if st.Code() != tt.want {
				t.Fatalf("code = %v, want %v", st.Code(), tt.want)
			}
			if tt.want != framework.Success && st.Message() != ErrReason {
				t.Fatalf("message = %q", st.Message())
			}
		})
	}
}
