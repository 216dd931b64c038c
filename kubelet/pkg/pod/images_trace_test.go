package pod

import (
	"testing"

	"k8s.io/client-go/tools/record"
)

func (h *harness) imagesHook() *ImagesHook {
	for _, hk := range h.w.cfg.Lifecycle.Hooks {
		if ih, ok := hk.(*ImagesHook); ok {
			return ih
		}
	}
	return nil
}

// TestImageFoundEvent: an image already present gives upstream's Pulled
// event once per container start (skiffctl trace's "image found" step), and
// none with NoPresentEvent (--trace-pod-start=false).
func TestImageFoundEvent(t *testing.T) {
	for _, off := range []bool{false, true} {
		h := newHarness(testPod("Always", "busybox:1.0"))
		h.rt.images["docker.io/library/busybox:1.0"] = Image{Ref: "docker.io/library/busybox:1.0", ID: "sha256:2"}
		rec := record.NewFakeRecorder(10)
		ih := h.imagesHook()
		ih.Recorder, ih.NoPresentEvent = rec, off
		h.sync(t)
		h.sync(t)
		evs := events(rec)
		want := `Normal Pulled Container image "busybox:1.0" already present on machine`
		if off && len(evs) != 0 || !off && (len(evs) != 1 || evs[0] != want) {
			t.Errorf("NoPresentEvent=%v: events %q", off, evs)
		}
		if got := h.rt.callsWith("pull"); len(got) != 0 {
			t.Errorf("pulled a present image: %v", got)
		}
	}
}
