package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// matchPodFailurePolicy applies the first rule of policy that matches the
// failed pod, as upstream does. It returns the message with which the job
// fails (FailJob), whether the failure counts towards the back-off limit
// (false for Ignore) and the action of the matching rule (nil: no rule
// matched, which counts the failure).
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) (*string, bool, *batchv1.PodFailurePolicyAction) {
	if policy == nil {
		return nil, true, nil
	}
	for i, rule := range policy.Rules {
		action := rule.Action
		var failMsg string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(&pod.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			failMsg = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, action, i)
		case len(rule.OnPodConditions) > 0:
			cond := matchOnPodConditions(&pod.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			failMsg = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d", pod.Namespace, pod.Name, cond.Type, action, i)
		default:
			continue
		}
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return nil, false, &action
		case batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount:
			return nil, true, &action
		case batchv1.PodFailurePolicyActionFailJob:
			return &failMsg, true, &action
		}
		// An action this version does not know: the rule is skipped, as
		// upstream does.
	}
	return nil, true, nil
}

// matchOnExitCodes returns the first terminated container (regular, then
// init) with a non-zero exit code that req matches.
func matchOnExitCodes(status *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{status.ContainerStatuses, status.InitContainerStatuses} {
		for i := range list {
			cs := &list[i]
			t := cs.State.Terminated
			if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
				continue
			}
			in := slices.Contains(req.Values, t.ExitCode)
			if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) ||
				(req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
				return cs
			}
		}
	}
	return nil
}

// matchOnPodConditions returns the first condition of the pod that one of
// the patterns matches (an empty status in a pattern means True, its
// default).
func matchOnPodConditions(status *corev1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range status.Conditions {
		c := &status.Conditions[i]
		for _, p := range patterns {
			want := p.Status
			if want == "" {
				want = corev1.ConditionTrue
			}
			if c.Type == p.Type && c.Status == want {
				return c
			}
		}
	}
	return nil
}
