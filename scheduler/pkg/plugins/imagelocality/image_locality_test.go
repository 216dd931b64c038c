package imagelocality

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func nodeWithImages(name string, images ...corev1.ContainerImage) *framework.NodeInfo {
	n := testutil.Node(name, "4", "8Gi", 110)
	n.Status.Images = images
	return testutil.NodeInfo(n)
}

func podWithImages(images ...string) *corev1.Pod {
	p := testutil.Pod("p")
	for _, img := range images {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: img, Image: img})
	}
	return p
}

func TestScore(t *testing.T) {
	const mb = 1024 * 1024
	img := func(size int64, names ...string) corev1.ContainerImage {
		return corev1.ContainerImage{Names: names, SizeBytes: size}
	}
	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*framework.NodeInfo
		want  []int64 // nil: PreScore skips
	}{
		{name: "no node has the image skips", pod: podWithImages("nginx"),
			nodes: []*framework.NodeInfo{nodeWithImages("a"), nodeWithImages("b", img(300*mb, "redis:latest"))}},
		{name: "untagged image matches :latest; spread by half the nodes",
			pod: podWithImages("nginx"),
			nodes: []*framework.NodeInfo{
				nodeWithImages("a", img(500*mb, "nginx:latest")),
				nodeWithImages("b"),
			},
			// 500MB * 1/2 = 250MB: 100*(250-23)/(1000-23) = 23.
			want: []int64{23, 0}},
		{name: "image on every node scores its full size",
			pod: podWithImages("registry.example.com:5000/app:v1"),
			nodes: []*framework.NodeInfo{
				nodeWithImages("a", img(500*mb, "registry.example.com:5000/app:v1")),
				nodeWithImages("b", img(500*mb, "registry.example.com:5000/app:v1")),
			},
			// 100*(500-23)/977 = 48.
			want: []int64{48, 48}},
		{name: "small images below 23MB score 0", pod: podWithImages("tiny:1"),
			nodes: []*framework.NodeInfo{nodeWithImages("a", img(20*mb, "tiny:1"))},
			want:  []int64{0}},
		{name: "capped at 1000MB per container", pod: podWithImages("huge:1"),
			nodes: []*framework.NodeInfo{nodeWithImages("a", img(3000*mb, "huge:1"))},
			want:  []int64{100}},
		{name: "two containers: threshold is 2000MB",
			pod: podWithImages("a:1", "b:1"),
			nodes: []*framework.NodeInfo{
				nodeWithImages("n1", img(1000*mb, "a:1"), img(1000*mb, "b:1")),
				nodeWithImages("n2", img(1000*mb, "a:1")),
			},
			// n1: 1000 + 1000*1/2 = 1500MB -> 100*(1500-23)/(2000-23) = 74;
			// n2: 1000 -> 100*977/1977 = 49.
			want: []int64{74, 49}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := New(nil, testutil.Handle(framework.Listers{}, tt.nodes...))
			if err != nil {
				t.Fatal(err)
			}
			p := pl.(*ImageLocality)
			state := framework.NewCycleState()
			st := p.PreScore(context.Background(), state, tt.pod, tt.nodes)
			if tt.want == nil {
				if !st.IsSkip() {
					t.Fatalf("PreScore = %v, want Skip", st.Code())
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			var got []int64
			for _, ni := range tt.nodes {
				s, st := p.Score(context.Background(), state, tt.pod, ni)
				if !st.IsSuccess() {
					t.Fatal(st.Message())
				}
				got = append(got, s)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("scores = %v, want %v", got, tt.want)
			}
		})
	}
}
