package statefulset

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"skiff.dev/controller-manager/pkg/controller/history"
)

// getPatch returns the strategic merge patch that restores set's pod
// template: {"spec":{"template":{...,"$patch":"replace"}}}. It is the data
// of the set's ControllerRevisions, as upstream's.
func getPatch(set *appsv1.StatefulSet) ([]byte, error) {
	data, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	spec, _ := raw["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		return nil, fmt.Errorf("StatefulSet %s/%s has no template", set.Namespace, set.Name)
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// newRevision is the (not yet created) revision of set's current template,
// numbered revision, carrying the set's annotations.
func newRevision(set *appsv1.StatefulSet, revision int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	patch, err := getPatch(set)
	if err != nil {
		return nil, err
	}
	cr := history.NewControllerRevision(set, controllerKind, set.Spec.Template.Labels, runtime.RawExtension{Raw: patch}, revision, collisionCount)
	if cr.Annotations == nil {
		cr.Annotations = map[string]string{}
	}
	for k, v := range set.Annotations {
		cr.Annotations[k] = v
	}
	return cr, nil
}

// applyRevision returns a copy of set with the template of revision.
func applyRevision(set *appsv1.StatefulSet, revision *appsv1.ControllerRevision) (*appsv1.StatefulSet, error) {
	original, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	patched, err := strategicpatch.StrategicMergePatch(original, revision.Data.Raw, &appsv1.StatefulSet{})
	if err != nil {
		return nil, fmt.Errorf("applying revision %s: %w", revision.Name, err)
	}
	restored := &appsv1.StatefulSet{}
	if err := json.Unmarshal(patched, restored); err != nil {
		return nil, err
	}
	return restored, nil
}

// getStatefulSetRevisions returns the current and update revisions of set
// and the collision count to record. revisions must be sorted. The update
// revision is the last revision when it holds the set's template; an
// older revision holding it (a rollback) is renumbered to be the newest;
// otherwise a new revision is created. The current revision is the one
// named by status.currentRevision, or the update revision when there is
// none.
func (c *Controller) getStatefulSetRevisions(ctx context.Context, set *appsv1.StatefulSet, revisions []*appsv1.ControllerRevision) (current, update *appsv1.ControllerRevision, collisionCount int32, err error) {
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	update, err = newRevision(set, history.NextRevision(revisions), &collisionCount)
	if err != nil {
		return nil, nil, collisionCount, err
	}
	equal := history.FindEqualRevisions(revisions, update)
	switch n := len(equal); {
	case n > 0 && history.EqualRevision(revisions[len(revisions)-1], equal[n-1]):
		// The newest revision holds the template: nothing changed.
		update = revisions[len(revisions)-1]
	case n > 0:
		// An older template again (a rollback): reuse its revision.
		update, err = c.history.UpdateControllerRevision(ctx, equal[n-1], update.Revision)
		if err != nil {
			return nil, nil, collisionCount, err
		}
	default:
		update, err = c.history.CreateControllerRevision(ctx, set, update, &collisionCount)
		if err != nil {
			return nil, nil, collisionCount, err
		}
	}
	for _, r := range revisions {
		if r.Name == set.Status.CurrentRevision {
			current = r
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// truncateHistory deletes the oldest revisions that no pod uses and that
// are neither current nor update, keeping spec.revisionHistoryLimit of
// them. revisions must be sorted.
func (c *Controller) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, revisions []*appsv1.ControllerRevision, current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{}
	if current != nil {
		live[current.Name] = true
	}
	if update != nil {
		live[update.Name] = true
	}
	for _, p := range pods {
		live[getPodRevision(p)] = true
	}
	var old []*appsv1.ControllerRevision
	for _, r := range revisions {
		if !live[r.Name] {
			old = append(old, r)
		}
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	if len(old) <= limit {
		return nil
	}
	for _, r := range old[:len(old)-limit] {
		if err := c.history.DeleteControllerRevision(ctx, r); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
