package framework

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Code is the result kind of a plugin call.
type Code int

// The codes, as upstream names them.
const (
	// Success means the plugin ran and the node (or pod) passes.
	Success Code = iota
	// Error is an internal error; the pod is retried with back-off.
	Error
	// Unschedulable means the pod does not fit now; preemption or a change
	// in the cluster may help.
	Unschedulable
	// UnschedulableAndUnresolvable means the pod does not fit and removing
	// pods from the node would not help.
	UnschedulableAndUnresolvable
	// Skip means the plugin has nothing to do for this pod.
	Skip
)

var codeNames = []string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Skip"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// MaxNodeScore and MinNodeScore bound what a ScorePlugin returns after
// normalisation.
const (
	MaxNodeScore int64 = 100
	MinNodeScore int64 = 0
)

// Status is the result of a plugin call. A nil *Status is Success.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with a code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an error as an Error status.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons returns the reasons.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// Plugin is the plugin that returned the status, when set by the framework.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records the plugin name and returns s.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s.plugin = name
	}
	return s
}

// IsSuccess is true for nil and Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip is true for Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected is true for Unschedulable and UnschedulableAndUnresolvable.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable
}

// AsError returns the status as an error, nil for success.
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// Plugin is the parent of every plugin interface.
type Plugin interface {
	Name() string
}

// PreFilterPlugin runs once per pod before the filters; it may compute
// state that the filters read, or reject the pod outright.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *corev1.Pod) *Status
}

// FilterPlugin decides whether a pod may run on a node.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
}

// ScorePlugin ranks the feasible nodes.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions returns the normaliser, or nil when the plugin's raw
	// scores are already in 0..MaxNodeScore.
	ScoreExtensions() ScoreExtensions
}

// ScoreExtensions normalises one plugin's scores over all nodes.
type ScoreExtensions interface {
	NormalizeScore(ctx context.Context, state *CycleState, pod *corev1.Pod, scores NodeScoreList) *Status
}

// NodeScore is one node's score.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is a list of scores, one per node.
type NodeScoreList []NodeScore

// DefaultNormalizeScore scales scores to 0..maxPriority by the highest one,
// reversed when reverse is set (fewer is better), as upstream's helper does.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores NodeScoreList) *Status {
	var maxCount int64
	for i := range scores {
		if scores[i].Score > maxCount {
			maxCount = scores[i].Score
		}
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return nil
	}
	for i := range scores {
		score := maxPriority * scores[i].Score / maxCount
		if reverse {
			score = maxPriority - score
		}
		scores[i].Score = score
	}
	return nil
}

// PreScorePlugin runs once per pod with the feasible nodes before the
// Score plugins; it may compute state the scorers read. Returning Skip
// skips the plugin's Score for this pod (it scores 0 everywhere).
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status
}

// PreFilterExtensions is implemented by PreFilter plugins whose cycle
// state depends on the pods on the nodes: AddPod and RemovePod update that
// state when preemption considers removing pods from a node.
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// PostFilterResult is what a PostFilter plugin decided: the pod's
// status.nominatedNodeName is set to NominatedNodeName (cleared when
// empty), the node it may run on once the plugin's actions (preemption)
// took effect.
type PostFilterResult struct {
	NominatedNodeName string
}

// PostFilterPlugin runs when no node passed the filters, with each
// node's rejection (preemption).
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeStatus map[string]*Status) (*PostFilterResult, *Status)
}
