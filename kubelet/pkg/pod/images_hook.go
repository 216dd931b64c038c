package pod

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/images"
)

// Waiting reasons about images, as upstream's.
const (
	ReasonErrImagePull      = "ErrImagePull"
	ReasonImagePullBackOff  = "ImagePullBackOff"
	ReasonErrImageNeverPull = "ErrImageNeverPull"
	ReasonInvalidImageName  = "InvalidImageName"
)

// ImagesHook makes sure every container about to start has its image,
// following its imagePullPolicy, with back-off after failed pulls.
type ImagesHook struct {
	Runtime Runtime
	// Secrets reads the pod's image pull secrets; nil: none are used.
	Secrets  Objects
	Recorder record.EventRecorder
	// NoPresentEvent leaves out the Pulled event of an image already
	// present (the kubelet's --trace-pod-start=false).
	NoPresentEvent bool
	// Now is the clock that times pulls (time.Now when nil).
	Now func() time.Time
}

func (h *ImagesHook) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *ImagesHook) event(s *State, typ, reason, format string, args ...any) {
	if h.Recorder != nil {
		h.Recorder.Eventf(s.Pod, typ, reason, format, args...)
	}
}

// Name implements Hook.
func (h *ImagesHook) Name() string { return "images" }

// Run pulls the images of the containers that are about to (re)start.
func (h *ImagesHook) Run(ctx context.Context, s *State) error {
	for _, c := range containersToStart(s) {
		if interrupted(ctx) {
			// The pod is terminating: it pulls nothing more.
			return context.Cause(ctx)
		}
		if !NeedsStart(s, c.Name) {
			continue
		}
		h.ensure(ctx, s, *c)
	}
	return nil
}

// NeedsStart says whether the container has never run, or exited and is to
// be restarted (possibly after a back-off).
func NeedsStart(s *State, name string) bool {
	cur, _ := s.Latest(name)
	if cur == nil || cur.State == StateCreated {
		return true
	}
	return cur.State == StateExited && ShouldRestart(restartPolicyOf(s, name), cur.ExitCode)
}

// nextAttempt is the attempt number of the container's next start.
func nextAttempt(s *State, name string) int {
	cur, _ := s.Latest(name)
	if cur == nil {
		return 0
	}
	if cur.State == StateCreated {
		return cur.Attempt()
	}
	return cur.Attempt() + 1
}

// PullPolicy is the container's policy, defaulted as upstream does.
func PullPolicy(c corev1.Container) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	ref := c.Image
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		ref = ref[i+1:]
	}
	if strings.Contains(ref, "@") {
		return corev1.PullIfNotPresent
	}
	if i := strings.LastIndex(ref, ":"); i < 0 || ref[i+1:] == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func (h *ImagesHook) ensure(ctx context.Context, s *State, c corev1.Container) {
	st := s.Images[c.Name]
	if st == nil {
		st = &ImageState{}
		s.Images[c.Name] = st
	}
	attempt := nextAttempt(s, c.Name)
	policy := PullPolicy(c)
	if st.Ready && (policy != corev1.PullAlways || st.PulledFor == attempt) {
		return
	}
	ref, err := images.Normalize(c.Image)
	if err != nil {
		st.Ready, st.Reason, st.Message = false, ReasonInvalidImageName, err.Error()
		return
	}
	if policy != corev1.PullAlways {
		img, err := h.Runtime.GetImage(ctx, ref)
		if err == nil {
			// As upstream: the trace's "image found" step.
			if !h.NoPresentEvent {
				h.event(s, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
			}
			*st = ImageState{Image: img, Ready: true, PulledFor: attempt}
			return
		}
		if !errors.Is(err, ErrImageNotFound) {
			st.Ready, st.Reason, st.Message = false, ReasonErrImagePull, err.Error()
			return
		}
		if policy == corev1.PullNever {
			st.Ready, st.Reason = false, ReasonErrImageNeverPull
			st.Message = fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			return
		}
	}
	if st.Failures > 0 && s.Now.Before(st.RetryAt) {
		if st.Reason != ReasonImagePullBackOff {
			h.event(s, corev1.EventTypeNormal, "BackOff", "Back-off pulling image %q", c.Image)
		}
		st.Ready, st.Reason = false, ReasonImagePullBackOff
		st.Message = fmt.Sprintf("Back-off pulling image %q", c.Image)
		return
	}
	h.event(s, corev1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	start := h.now()
	if s.FirstPullStarted.IsZero() {
		s.FirstPullStarted = start
	}
	img, err := h.Runtime.PullImage(ctx, ref, h.pullCredentials(ctx, s))
	s.LastPullFinished = h.now()
	if interrupted(ctx) {
		// A pull cut short by the pod's termination did not fail: no
		// event, no back-off.
		return
	}
	if err != nil {
		st.Failures++
		st.RetryAt = s.Now.Add(BackOff(st.Failures))
		st.Ready, st.Reason = false, ReasonErrImagePull
		st.Message = fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		klog.FromContext(ctx).Info("Failed to pull image", "pod", klog.KObj(s.Pod), "container", c.Name, "image", c.Image, "err", err)
		h.event(s, corev1.EventTypeWarning, "Failed", "%s", st.Message)
		return
	}
	h.event(s, corev1.EventTypeNormal, "Pulled", "Successfully pulled image %q in %s", c.Image, s.LastPullFinished.Sub(start).Round(time.Millisecond))
	*st = ImageState{Image: img, Ready: true, PulledFor: attempt}
}

// pullCredentials reads the pod's image pull secrets. As upstream, a
// secret that is missing or malformed is reported in an event and the
// pull goes on without it.
func (h *ImagesHook) pullCredentials(ctx context.Context, s *State) []images.Credential {
	if h.Secrets == nil {
		return nil
	}
	var out []images.Credential
	for _, ref := range s.Pod.Spec.ImagePullSecrets {
		secret, err := h.Secrets.Secret(ctx, s.Pod.Namespace, ref.Name)
		if err == nil {
			var creds []images.Credential
			if creds, err = images.CredentialsFromSecret(secret); err == nil {
				out = append(out, creds...)
				continue
			}
		}
		h.event(s, corev1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed: %v", ref.Name, err)
	}
	return out
}
