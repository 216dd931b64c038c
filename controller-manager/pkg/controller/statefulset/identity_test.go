package statefulset

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// TestClaimOwnerRefs: the references a claim gets for each retention
// policy, for a pod in range and one scaled away, and claims left alone
// (another controller, a stale reference).
func TestClaimOwnerRefs(t *testing.T) {
	set := newSet("web", 2) // ordinals 0 and 1
	inRange := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: "pod-1"}}
	scaled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "default", UID: "pod-2"}}
	other := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Thing", Name: "x", UID: "thing", Controller: ptr(true)}
	stalePod := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "web-2", UID: "old-pod", Controller: ptr(true)}
	tests := []struct {
		name                string
		whenDeleted, scaled appsv1.PersistentVolumeClaimRetentionPolicyType
		pod                 *corev1.Pod
		refs                []metav1.OwnerReference
		want                string // the references after the update
		wantUpToDate        bool   // before the update
	}{
		{name: "retain/retain", whenDeleted: retain, scaled: retain, pod: scaled, want: "", wantUpToDate: true},
		{name: "retain/retain drops our refs", whenDeleted: retain, scaled: retain, pod: inRange,
			refs: []metav1.OwnerReference{*metav1.NewControllerRef(set, controllerKind)}, want: ""},
		{name: "whenDeleted Delete", whenDeleted: del, scaled: retain, pod: inRange, want: "StatefulSet/web"},
		{name: "whenScaled Delete, in range", whenDeleted: retain, scaled: del, pod: inRange, want: "", wantUpToDate: true},
		{name: "whenScaled Delete, scaled away", whenDeleted: retain, scaled: del, pod: scaled, want: "Pod/web-2"},
		{name: "both, in range", whenDeleted: del, scaled: del, pod: inRange, want: "StatefulSet/web"},
		{name: "both, scaled away: the set's ref goes", whenDeleted: del, scaled: del, pod: scaled,
			refs: []metav1.OwnerReference{*metav1.NewControllerRef(set, controllerKind)}, want: "Pod/web-2"},
		{name: "another controller: left alone", whenDeleted: del, scaled: del, pod: inRange,
			refs: []metav1.OwnerReference{other}, want: "Thing/x", wantUpToDate: true},
		{name: "a stale pod reference: left alone", whenDeleted: retain, scaled: del, pod: scaled,
			refs: []metav1.OwnerReference{stalePod}, want: "Pod/web-2", wantUpToDate: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := set.DeepCopy()
			s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: tt.whenDeleted, WhenScaled: tt.scaled}
			claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-" + tt.pod.Name, OwnerReferences: tt.refs}}
			if got := isClaimOwnerUpToDate(klog.Background(), claim, s, tt.pod); got != tt.wantUpToDate {
				t.Errorf("up to date = %v, want %v", got, tt.wantUpToDate)
			}
			if !tt.wantUpToDate {
				updateClaimOwnerRefForSetAndPod(claim, s, tt.pod)
			}
			var got []string
			for _, r := range claim.OwnerReferences {
				got = append(got, r.Kind+"/"+r.Name)
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("refs %v, want %q", got, tt.want)
			}
			if !isClaimOwnerUpToDate(klog.Background(), claim, s, tt.pod) {
				t.Error("not up to date after the update")
			}
		})
	}
}

// TestNewStatefulSetPod: name, identity, hostname, subdomain, the claims'
// volumes (other volumes kept), the controller reference and the revision
// chosen by the partition.
func TestNewStatefulSetPod(t *testing.T) {
	set := withClaims(newSet("web", 3), "data", "logs")
	set.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod := newStatefulSetPod(set, 2)
	if pod.Name != "web-2" || pod.Namespace != "default" || pod.Spec.Hostname != "web-2" || pod.Spec.Subdomain != "web-svc" {
		t.Errorf("pod %s/%s hostname %q subdomain %q", pod.Namespace, pod.Name, pod.Spec.Hostname, pod.Spec.Subdomain)
	}
	var vols []string
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			vols = append(vols, v.Name+"="+v.PersistentVolumeClaim.ClaimName)
		} else {
			vols = append(vols, v.Name)
		}
	}
	if got := strings.Join(vols, ","); got != "data=data-web-2,logs=logs-web-2,cfg" {
		t.Errorf("volumes %s", got)
	}
	if !identityMatches(set, pod) || !storageMatches(set, pod) {
		t.Error("a new pod does not match its identity or storage")
	}
	set.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(2))}
	if got := getPodRevision(newVersionedStatefulSetPod(set, set, "cur", "upd", 1)); got != "cur" {
		t.Errorf("below the partition: revision %s, want cur", got)
	}
	if got := getPodRevision(newVersionedStatefulSetPod(set, set, "cur", "upd", 2)); got != "upd" {
		t.Errorf("at the partition: revision %s, want upd", got)
	}
}
