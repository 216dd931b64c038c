package podtopologyspread

import (
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/nodeaffinity"
	"skiff.dev/scheduler/pkg/plugins/tainttoleration"
)

// Name is the plugin's name.
const Name = "PodTopologySpread"

// Defaulting types, as upstream.
const (
	SystemDefaulting = "System"
	ListDefaulting   = "List"
)

// SystemDefaultConstraints are upstream's defaults for pods that belong to
// a Service, ReplicaSet, StatefulSet or ReplicationController.
var systemDefaultConstraints = []corev1.TopologySpreadConstraint{
	{TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
}

// SystemDefaultConstraints returns a copy of upstream's system defaults.
func SystemDefaultConstraints() []corev1.TopologySpreadConstraint {
	return append([]corev1.TopologySpreadConstraint(nil), systemDefaultConstraints...)
}

// Args are upstream's PodTopologySpreadArgs.
type Args struct {
	DefaultConstraints []corev1.TopologySpreadConstraint `json:"defaultConstraints,omitempty"`
	DefaultingType     string                            `json:"defaultingType,omitempty"`
}

// PodTopologySpread is the plugin.
type PodTopologySpread struct {
	handle             framework.Handle
	defaultConstraints []corev1.TopologySpreadConstraint
	systemDefaulted    bool
}

var (
	_ framework.PreFilterPlugin = (*PodTopologySpread)(nil)
	_ framework.FilterPlugin    = (*PodTopologySpread)(nil)
	_ framework.PreScorePlugin  = (*PodTopologySpread)(nil)
	_ framework.ScorePlugin     = (*PodTopologySpread)(nil)
)

// New builds the plugin.
func New(raw json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	var args Args
	if err := framework.DecodeArgs(raw, "PodTopologySpreadArgs", &args); err != nil {
		return nil, err
	}
	if args.DefaultingType == "" {
		args.DefaultingType = SystemDefaulting
	}
	if err := validateArgs(&args); err != nil {
		return nil, err
	}
	pl := &PodTopologySpread{handle: h, defaultConstraints: args.DefaultConstraints}
	if args.DefaultingType == SystemDefaulting {
		pl.defaultConstraints = SystemDefaultConstraints()
		pl.systemDefaulted = true
	}
	return pl, nil
}

func validateArgs(args *Args) error {
	var errs []error
	switch args.DefaultingType {
	case SystemDefaulting:
		if len(args.DefaultConstraints) > 0 {
			errs = append(errs, errors.New(`defaultConstraints: Invalid value: when .defaultingType is "System", .defaultConstraints must be empty`))
		}
	case ListDefaulting:
	default:
		errs = append(errs, fmt.Errorf("defaultingType: Unsupported value: %q: supported values: \"System\", \"List\"", args.DefaultingType))
	}
	seen := map[[2]string]bool{}
	for i, c := range args.DefaultConstraints {
		path := fmt.Sprintf("defaultConstraints[%d]", i)
		if c.MaxSkew <= 0 {
			errs = append(errs, fmt.Errorf("%s.maxSkew: Invalid value: %d: not in valid range (0, inf)", path, c.MaxSkew))
		}
		if c.TopologyKey == "" {
			errs = append(errs, fmt.Errorf("%s.topologyKey: Required value: can not be empty", path))
		} else if msgs := validation.IsQualifiedName(c.TopologyKey); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s.topologyKey: Invalid value: %q: %v", path, c.TopologyKey, msgs))
		}
		if c.WhenUnsatisfiable != corev1.DoNotSchedule && c.WhenUnsatisfiable != corev1.ScheduleAnyway {
			errs = append(errs, fmt.Errorf("%s.whenUnsatisfiable: Unsupported value: %q: supported values: \"DoNotSchedule\", \"ScheduleAnyway\"", path, c.WhenUnsatisfiable))
		}
		key := [2]string{c.TopologyKey, string(c.WhenUnsatisfiable)}
		if seen[key] {
			errs = append(errs, fmt.Errorf("%s: Duplicate value: {%q, %q}", path, c.TopologyKey, c.WhenUnsatisfiable))
		}
		seen[key] = true
		if c.LabelSelector != nil {
			errs = append(errs, fmt.Errorf("%s.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod", path))
		}
	}
	return errors.Join(errs...)
}

// Name returns Name.
func (*PodTopologySpread) Name() string { return Name }

// constraint is a parsed TopologySpreadConstraint.
type constraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy corev1.NodeInclusionPolicy
	NodeTaintsPolicy   corev1.NodeInclusionPolicy
}

// matchNodeInclusionPolicies is true when the node counts for the
// constraint: by default nodes the pod's node affinity/selector rejects
// do not count (Honor), nodes with taints it does not tolerate do (Ignore).
func (c *constraint) matchNodeInclusionPolicies(pod *corev1.Pod, node *corev1.Node) bool {
	if c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor && !nodeaffinity.Matches(pod, node) {
		return false
	}
	if c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor && hasUntoleratedDoNotScheduleTaint(pod, node) {
		return false
	}
	return true
}

func hasUntoleratedDoNotScheduleTaint(pod *corev1.Pod, node *corev1.Node) bool {
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, tainttoleration.DoNotScheduleTaintsFilter)
	return untolerated
}

// filterConstraints parses the constraints with the given action, merging
// matchLabelKeys (the pod's values for those keys) into the selector.
func filterConstraints(in []corev1.TopologySpreadConstraint, podLabels map[string]string, action corev1.UnsatisfiableConstraintAction) ([]constraint, error) {
	var out []constraint
	for _, c := range in {
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			match := labels.Set{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := podLabels[k]; ok {
					match[k] = v
				}
			}
			if len(match) > 0 {
				reqs, _ := labels.SelectorFromValidatedSet(match).Requirements()
				sel = sel.Add(reqs...)
			}
		}
		pc := constraint{MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey, Selector: sel, MinDomains: 1,
			NodeAffinityPolicy: corev1.NodeInclusionPolicyHonor, NodeTaintsPolicy: corev1.NodeInclusionPolicyIgnore}
		if c.MinDomains != nil {
			pc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			pc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			pc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, pc)
	}
	return out, nil
}

// constraints returns the pod's constraints with the action, or the
// default ones (with the pod's default selector) when it has none.
func (pl *PodTopologySpread) constraints(pod *corev1.Pod, action corev1.UnsatisfiableConstraintAction) ([]constraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return filterConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
	}
	cs, err := filterConstraints(pl.defaultConstraints, pod.Labels, action)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	sel := defaultSelector(pod, pl.handle.Listers())
	if sel.Empty() {
		return nil, nil
	}
	for i := range cs {
		cs[i].Selector = sel
	}
	return cs, nil
}

// nodeLabelsMatchConstraints is true when the node has every constraint's
// topology key.
func nodeLabelsMatchConstraints(nodeLabels map[string]string, cs []constraint) bool {
	for _, c := range cs {
		if _, ok := nodeLabels[c.TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// countPodsMatchSelector counts the pods in namespace ns the selector
// matches, leaving out terminating pods.
func countPodsMatchSelector(pods []*framework.PodInfo, sel labels.Selector, ns string) int {
	if sel.Empty() {
		return 0
	}
	n := 0
	for _, p := range pods {
		if p.Pod.DeletionTimestamp != nil || p.Pod.Namespace != ns {
			continue
		}
		if sel.Matches(labels.Set(p.Pod.Labels)) {
			n++
		}
	}
	return n
}
