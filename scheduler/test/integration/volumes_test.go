package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

func claimVolume(claim string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
}

// TestVolumeBinding, under the scheduler's own identity: a pod whose claim
// is bound to a volume with node affinity lands on that node; a pod whose
// WaitForFirstConsumer claim has a static volume on one node only gets that
// volume bound at PreBind (this test plays the binder) and lands there; a
// pod with an unbound Immediate claim is unschedulable with upstream's
// words.
func TestVolumeBinding(t *testing.T) {
	e := start(t)
	e.node("node-1", "4", "8Gi", 110, map[string]string{corev1.LabelHostname: "node-1"})
	e.node("node-2", "4", "8Gi", 110, map[string]string{corev1.LabelHostname: "node-2"})
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "manual"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)},
		{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "example.com/fast", VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)},
	} {
		if _, err := e.client.StorageV1().StorageClasses().Create(e.ctx, sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pvs, pvcs := e.client.CoreV1().PersistentVolumes(), e.client.CoreV1().PersistentVolumeClaims("default")
	volume := func(name, node string) {
		t.Helper()
		_, err := pvs.Create(e.ctx, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				StorageClassName: "manual", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/" + name}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := pvs.Get(e.ctx, name, metav1.GetOptions{})
		v.Status.Phase = corev1.VolumeAvailable
		if _, err := pvs.UpdateStatus(e.ctx, v, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(name, class, volumeName string) {
		t.Helper()
		c, err := pvcs.Create(e.ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), VolumeName: volumeName,
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if volumeName != "" {
			c.Status.Phase = corev1.ClaimBound
			if _, err := pvcs.UpdateStatus(e.ctx, c, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Bound to a volume of node-1.
	volume("pv-1", "node-1")
	claim("bound", "manual", "pv-1")
	e.pod("on-1", "", claimVolume("bound"))
	if got := e.waitBound("on-1"); got != "node-1" {
		t.Errorf("pod of a claim bound to node-1's volume went to %s", got)
	}

	// WaitForFirstConsumer with a static volume on node-2 only.
	volume("pv-2", "node-2")
	claim("wffc", "manual", "")
	e.pod("on-2", "", claimVolume("wffc"))
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		v, err := pvs.Get(ctx, "pv-2", metav1.GetOptions{})
		if err != nil || v.Spec.ClaimRef == nil {
			return false, nil
		}
		return v.Spec.ClaimRef.Name == "wffc" && v.Annotations["pv.kubernetes.io/bound-by-controller"] == "yes", nil
	})
	if err != nil {
		t.Fatalf("the scheduler did not bind pv-2 to the claim: %v", err)
	}
	// Play the binder: the claim's side.
	c, err := pvcs.Get(e.ctx, "wffc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.VolumeName = "pv-2"
	if c, err = pvcs.Update(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Status.Phase = corev1.ClaimBound
	if _, err := pvcs.UpdateStatus(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.waitBound("on-2"); got != "node-2" {
		t.Errorf("pod of a claim whose only volume is on node-2 went to %s", got)
	}

	// Unbound Immediate claim.
	claim("immediate", "fast", "")
	e.pod("stuck", "", claimVolume("immediate"))
	e.waitPod("stuck", "unbound immediate claims", func(p *corev1.Pod) bool {
		c := podScheduled(p)
		return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "pod has unbound immediate PersistentVolumeClaims")
	})
}
