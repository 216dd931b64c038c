package imagelocality

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "ImageLocality"

// Upstream's thresholds: below minThreshold the images are too small to
// matter; maxContainerThreshold per container caps the score.
const (
	mb                    int64 = 1024 * 1024
	minThreshold          int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

// ImageLocality is the plugin.
type ImageLocality struct {
	handle framework.Handle
}

var (
	_ framework.PreScorePlugin = (*ImageLocality)(nil)
	_ framework.ScorePlugin    = (*ImageLocality)(nil)
)

// New builds the plugin.
func New(args json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("the plugin takes no arguments")
	}
	return &ImageLocality{handle: h}, nil
}

// Name returns Name.
func (*ImageLocality) Name() string { return Name }

const stateKey framework.StateKey = "PreScore" + Name

// preScoreState is, for each of the pod's images present somewhere, the
// number of nodes that have it, and the number of nodes in the cluster.
type preScoreState struct {
	numNodes   map[string]int
	totalNodes int
}

// normalizedImageName adds ":latest" to an image without a tag, as upstream.
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}

func podImages(pod *corev1.Pod) []string {
	out := make([]string, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, c := range pod.Spec.InitContainers {
		out = append(out, normalizedImageName(c.Image))
	}
	for _, c := range pod.Spec.Containers {
		out = append(out, normalizedImageName(c.Image))
	}
	return out
}

// PreScore counts, once a cycle, the nodes holding each of the pod's
// images; Skip when no node has any (every node would score 0).
func (pl *ImageLocality) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	all := pl.handle.SnapshotSharedLister().List()
	s := &preScoreState{numNodes: map[string]int{}, totalNodes: len(all)}
	images := unique(podImages(pod))
	for _, ni := range all {
		if len(ni.ImageSizes) == 0 {
			continue
		}
		for _, img := range images {
			if _, ok := ni.ImageSizes[img]; ok {
				s.numNodes[img]++
			}
		}
	}
	if len(s.numNodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, s)
	return nil
}

func unique(list []string) []string {
	seen := map[string]bool{}
	out := list[:0:0]
	for _, x := range list {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Score is 100*(sum-min)/(max-min), where sum adds, for each container
// whose image the node has, its size times the fraction of nodes that
// have it, clamped to [23MB, 1000MB * containers].
func (pl *ImageLocality) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	v, err := state.Read(stateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", stateKey, err))
	}
	s := v.(*preScoreState)
	var sum int64
	for _, img := range podImages(pod) {
		if size, ok := ni.ImageSizes[img]; ok {
			spread := float64(s.numNodes[img]) / float64(s.totalNodes)
			sum += int64(float64(size) * spread)
		}
	}
	return calculatePriority(sum, len(pod.Spec.InitContainers)+len(pod.Spec.Containers)), nil
}

func calculatePriority(sum int64, containers int) int64 {
	maxThreshold := maxContainerThreshold * int64(containers)
	if sum < minThreshold {
		sum = minThreshold
	} else if sum > maxThreshold {
		sum = maxThreshold
	}
	return framework.MaxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
}

// ScoreExtensions is nil: scores are already 0..100.
func (*ImageLocality) ScoreExtensions() framework.ScoreExtensions { return nil }
