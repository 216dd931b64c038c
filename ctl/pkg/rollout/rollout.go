package rollout

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations and labels of the deployment controller and kubectl.
const (
	RevisionAnnotation    = "deployment.kubernetes.io/revision"
	ChangeCauseAnnotation = "kubernetes.io/change-cause"
	RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
	// timedOutReason is the Progressing condition's reason when the
	// deadline passed.
	timedOutReason = "ProgressDeadlineExceeded"
)

// annotationsToSkip are the Deployment annotations that a rollback keeps
// from the Deployment rather than taking from the ReplicaSet.
var annotationsToSkip = map[string]bool{
	corev1.LastAppliedConfigAnnotation:          true,
	RevisionAnnotation:                          true,
	"deployment.kubernetes.io/revision-history": true,
	"deployment.kubernetes.io/desired-replicas": true,
	"deployment.kubernetes.io/max-replicas":     true,
	"deprecated.deployment.rollback.to":         true,
}

// Status reports the rollout of d as kubectl rollout status words it. done
// is true once the rollout finished; err is set when it failed.
func Status(d *appsv1.Deployment) (msg string, done bool, err error) {
	if d.Generation > d.Status.ObservedGeneration {
		return "Waiting for deployment spec update to be observed...", false, nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == timedOutReason {
			return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
		}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	switch {
	case st.UpdatedReplicas < want:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...",
			d.Name, st.UpdatedReplicas, want), false, nil
	case st.Replicas > st.UpdatedReplicas:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...",
			d.Name, st.Replicas-st.UpdatedReplicas), false, nil
	case st.AvailableReplicas < st.UpdatedReplicas:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...",
			d.Name, st.AvailableReplicas, st.UpdatedReplicas), false, nil
	}
	return fmt.Sprintf("deployment %q successfully rolled out", d.Name), true, nil
}

// Revision returns the revision number of a ReplicaSet, 0 if it has none.
func Revision(rs *appsv1.ReplicaSet) int64 {
	v, err := strconv.ParseInt(rs.Annotations[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// Owned returns the ReplicaSets that d controls, oldest revision first.
func Owned(d *appsv1.Deployment, all []appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for i := range all {
		if ref := metav1.GetControllerOf(&all[i]); ref != nil && ref.UID == d.UID {
			out = append(out, &all[i])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return Revision(out[i]) < Revision(out[j]) })
	return out
}

// HistoryEntry is one revision.
type HistoryEntry struct {
	Revision    int64
	ChangeCause string
	Template    corev1.PodTemplateSpec
}

// History returns the revisions of d from its ReplicaSets.
func History(owned []*appsv1.ReplicaSet) []HistoryEntry {
	var out []HistoryEntry
	for _, rs := range owned {
		r := Revision(rs)
		if r == 0 {
			continue
		}
		out = append(out, HistoryEntry{Revision: r, ChangeCause: rs.Annotations[ChangeCauseAnnotation], Template: rs.Spec.Template})
	}
	return out
}

// ForRevision returns the ReplicaSet of revision, or with 0 the one of
// the revision before the latest.
func ForRevision(owned []*appsv1.ReplicaSet, revision int64) (*appsv1.ReplicaSet, error) {
	if len(owned) == 0 {
		return nil, fmt.Errorf("no rollout history found")
	}
	if revision > 0 {
		for _, rs := range owned {
			if Revision(rs) == revision {
				return rs, nil
			}
		}
		return nil, fmt.Errorf("unable to find the specified revision %d", revision)
	}
	var latest, previous *appsv1.ReplicaSet
	var maxRev, prevRev int64 = -1, -1
	for _, rs := range owned {
		v := Revision(rs)
		switch {
		case v > maxRev:
			previous, prevRev = latest, maxRev
			latest, maxRev = rs, v
		case v > prevRev:
			previous, prevRev = rs, v
		}
	}
	if previous == nil {
		return nil, fmt.Errorf("no previous revision to roll back to")
	}
	return previous, nil
}

// EqualIgnoreHash compares pod templates without the pod-template-hash
// label the deployment controller adds.
func EqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

// UndoPatch returns the JSON patch that sets d's template to rs's (without
// the hash label) and its annotations to rs's, keeping the Deployment's own
// bookkeeping annotations, as kubectl v1.32 does.
func UndoPatch(d *appsv1.Deployment, rs *appsv1.ReplicaSet) ([]byte, error) {
	tmpl := rs.Spec.Template.DeepCopy()
	delete(tmpl.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	annotations := map[string]string{}
	for k := range annotationsToSkip {
		if v, ok := d.Annotations[k]; ok {
			annotations[k] = v
		}
	}
	for k, v := range rs.Annotations {
		if !annotationsToSkip[k] {
			annotations[k] = v
		}
	}
	return json.Marshal([]any{
		map[string]any{"op": "replace", "path": "/spec/template", "value": tmpl},
		map[string]any{"op": "replace", "path": "/metadata/annotations", "value": annotations},
	})
}

// RestartPatch returns the strategic merge patch that stamps the pod
// template with the restart time, which makes the controller roll out new
// pods.
func RestartPatch(now time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{RestartedAtAnnotation: now.Format(time.RFC3339)}},
	}}})
	return b
}
