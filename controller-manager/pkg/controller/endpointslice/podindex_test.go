package endpointslice

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestSelectedPods(t *testing.T) {
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, cache.Indexers{})
	if err := AddPodLabelIndex(inf); err != nil {
		t.Fatal(err)
	}
	if err := AddPodLabelIndex(inf); err != nil {
		t.Fatalf("second add: %v", err)
	}
	idx := inf.GetIndexer()
	pod := func(ns, name string, lbls map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
	}
	for _, p := range []*corev1.Pod{
		pod("a", "web-1", map[string]string{"app": "web", "tier": "front"}),
		pod("a", "web-2", map[string]string{"app": "web", "tier": "back"}),
		pod("a", "api-1", map[string]string{"app": "api", "tier": "front"}),
		pod("b", "web-3", map[string]string{"app": "web", "tier": "front"}),
		pod("a", "bare", nil),
	} {
		_ = idx.Add(p)
	}
	tests := []struct {
		name     string
		ns       string
		selector map[string]string
		want     []string
	}{
		{"one key", "a", map[string]string{"app": "web"}, []string{"web-1", "web-2"}},
		{"two keys", "a", map[string]string{"app": "web", "tier": "front"}, []string{"web-1"}},
		{"other namespace", "b", map[string]string{"app": "web"}, []string{"web-3"}},
		{"no match", "a", map[string]string{"app": "db"}, nil},
		{"a value matching another key's", "a", map[string]string{"tier": "web"}, nil},
		{"empty selects nothing", "a", map[string]string{}, nil},
		{"nil selects nothing", "a", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, err := SelectedPods(idx, tt.ns, tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pods {
				got = append(got, p.Name)
			}
			slices.Sort(got)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	// A relabelled pod moves in the index.
	_ = idx.Update(pod("a", "web-2", map[string]string{"app": "api"}))
	pods, _ := SelectedPods(idx, "a", map[string]string{"app": "web"})
	if len(pods) != 1 || pods[0].Name != "web-1" {
		t.Errorf("after relabel: %v", pods)
	}
}
