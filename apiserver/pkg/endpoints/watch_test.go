package endpoints

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func TestFrameCache(t *testing.T) {
	var c frameCache
	encodes := 0
	enc := func() ([]byte, error) { encodes++; return []byte{byte(encodes)}, nil }
	a := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	b := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}} // equal content, another object
	for i := 0; i < 100; i++ {
		if _, err := c.get(watch.Added, a, "application/json", enc); err != nil {
			t.Fatal(err)
		}
	}
	if encodes != 1 {
		t.Errorf("100 watchers of one event: %d encodes, want 1", encodes)
	}
	_, _ = c.get(watch.Added, b, "application/json", enc)
	_, _ = c.get(watch.Added, a, "application/vnd.kubernetes.protobuf", enc)
	_, _ = c.get(watch.Deleted, a, "application/json", enc)
	if encodes != 4 {
		t.Errorf("another object, media type or event type must be encoded anew: %d encodes, want 4", encodes)
	}
	for i := 0; i < frameCacheSize+10; i++ {
		_, _ = c.get(watch.Added, &corev1.Pod{}, "application/json", enc)
	}
	if len(c.entries) != frameCacheSize || len(c.ring) != frameCacheSize {
		t.Errorf("cache holds %d entries, ring %d; want at most %d", len(c.entries), len(c.ring), frameCacheSize)
	}
}
