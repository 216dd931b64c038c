package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// TestStorage: a claim of the default class (local-path) is provisioned on
// the node its first pod is scheduled to; a pod writes to it, is deleted,
// and a new pod on the same claim reads the data back; the claim, deleted
// while that pod runs, waits on its protection finalizer; once the pod is
// gone the claim goes, its volume is reclaimed (Delete) and its directory
// removed; no mount is left. A claim of an Immediate class nothing
// provisions keeps its pod unschedulable with upstream's words, and a pod
// placed on the node by hand stays ContainerCreating with the kubelet's
// FailedMount. A second pod mounts the claim read-only and by subPath,
// with an fsGroup that comes to own the volume; the data stays readable
// and writable while the claim waits on its finalizer.
func TestStorage(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	storageDir := filepath.Join(c.dir, "storage")
	pvcs, pods := c.client.CoreV1().PersistentVolumeClaims("default"), c.client.CoreV1().Pods("default")

	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")}},
		},
	}
	created, err := pvcs.Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(created.Spec.StorageClassName, "") != "local-path" {
		t.Fatalf("the claim got class %v, want the default local-path", created.Spec.StorageClassName)
	}
	// WaitForFirstConsumer: nothing happens before a pod uses the claim.
	storageWait(t, "the WaitForFirstConsumer event", func() (bool, error) {
		evs, err := c.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=data"})
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(evs.Items, func(e corev1.Event) bool { return e.Reason == "WaitForFirstConsumer" }), nil
	})

	pod := func(name, script string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				RestartPolicy:                 corev1.RestartPolicyNever,
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh", "-c", script},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
			},
		}
	}
	if _, err := pods.Create(ctx, pod("writer", "echo hello-storage > /data/f"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	storageWaitPhase(t, c, "writer", corev1.PodSucceeded)
	bound, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bound.Status.Phase != corev1.ClaimBound || bound.Annotations["volume.kubernetes.io/selected-node"] != nodeName {
		t.Fatalf("claim: phase %s, annotations %v", bound.Status.Phase, bound.Annotations)
	}
	pv, err := c.client.CoreV1().PersistentVolumes().Get(ctx, bound.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.Local == nil || filepath.Dir(pv.Spec.Local.Path) != storageDir || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		pv.Spec.NodeAffinity == nil {
		t.Fatalf("volume %+v", pv.Spec)
	}
	if b, err := os.ReadFile(filepath.Join(pv.Spec.Local.Path, "f")); err != nil || string(b) != "hello-storage\n" {
		t.Fatalf("the writer's file on the node: %q, %v", b, err)
	}
	storageDeletePod(t, c, "writer")

	// The reader mounts the claim three times: whole, read-only, and its
	// subPath "sub" (made by the kubelet); its fsGroup owns the volume.
	reader := pod("reader", "cat /data/f; exec sleep 3600")
	reader.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2345)}
	reader.Spec.Containers[0].VolumeMounts = append(reader.Spec.Containers[0].VolumeMounts,
		corev1.VolumeMount{Name: "data", MountPath: "/ro", ReadOnly: true},
		corev1.VolumeMount{Name: "data", MountPath: "/sub", SubPath: "sub"})
	if _, err := pods.Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	storageWait(t, "the reader's log", func() (bool, error) {
		b, err := pods.GetLogs("reader", &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			return false, nil
		}
		return strings.Contains(string(b), "hello-storage"), nil
	})
	if got := c.execIn(t, "reader", "stat -c %g /data /data/f"); got != "2345\n2345" {
		t.Errorf("groups of the volume and its file under fsGroup 2345: %q", got)
	}
	if got := c.execIn(t, "reader", "cat /ro/f; touch /ro/x 2>/dev/null && echo writable || echo refused"); got != "hello-storage\nrefused" {
		t.Errorf("the read-only mount: %q", got)
	}
	c.execIn(t, "reader", "echo in-sub > /sub/g")
	if b, err := os.ReadFile(filepath.Join(pv.Spec.Local.Path, "sub", "g")); err != nil || string(b) != "in-sub\n" {
		t.Errorf("the subPath mount's file on the node: %q, %v", b, err)
	}

	// Grown while in use (local-path allows expansion; its size is not
	// enforced, so it is recorded).
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("128Mi")
		_, err = pvcs.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("growing the claim: %v", err)
	}
	storageWait(t, "the claim's capacity to grow", func() (bool, error) {
		cur, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		q := cur.Status.Capacity[corev1.ResourceStorage]
		return q.String() == "128Mi", nil
	})

	// Deleted while in use: the claim stays, on its finalizer.
	if err := pvcs.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	held, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("a claim in use went away: %v", err)
	}
	if held.DeletionTimestamp == nil || !slices.Contains(held.Finalizers, "kubernetes.io/pvc-protection") {
		t.Fatalf("claim in use: deletionTimestamp %v, finalizers %v", held.DeletionTimestamp, held.Finalizers)
	}
	// Nothing is lost while it waits: the pod still reads and writes it.
	if got := c.execIn(t, "reader", "cat /data/f && echo more >> /data/f && tail -n1 /data/f"); got != "hello-storage\nmore" {
		t.Errorf("the claim being deleted, as its pod sees it: %q", got)
	}
	storageDeletePod(t, c, "reader")
	storageWait(t, "the claim, its volume and its directory to go", func() (bool, error) {
		if _, err := pvcs.Get(ctx, "data", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, nil
		}
		if _, err := c.client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, nil
		}
		_, err := os.Stat(pv.Spec.Local.Path)
		return os.IsNotExist(err), nil
	})
	if m := storageMountsUnder(t, storageDir); len(m) > 0 {
		t.Errorf("mounts left under %s: %v", storageDir, m)
	}

	t.Run("ephemeral volume", func(t *testing.T) {
		eph := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "scratch"},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh", "-c", "echo x > /scratch/f && cat /scratch/f"},
					VolumeMounts: []corev1.VolumeMount{{Name: "s", MountPath: "/scratch"}}}},
				Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
					VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("8Mi")}},
					}}}}}},
			},
		}
		if _, err := pods.Create(ctx, eph, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		storageWaitPhase(t, c, "scratch", corev1.PodSucceeded)
		pvc, err := pvcs.Get(ctx, "scratch-s", metav1.GetOptions{})
		if err != nil || pvc.Status.Phase != corev1.ClaimBound || metav1.GetControllerOf(pvc) == nil {
			t.Fatalf("the ephemeral claim: %v %+v", err, pvc)
		}
		pv, err := c.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		storageDeletePod(t, c, "scratch")
		storageWait(t, "the ephemeral claim, its volume and directory to go with the pod", func() (bool, error) {
			if _, err := pvcs.Get(ctx, "scratch-s", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
			if _, err := c.client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
			_, err := os.Stat(pv.Spec.Local.Path)
			return os.IsNotExist(err), nil
		})
	})

	// docs/storage.md's static volumes: a class without provisioner, a
	// local volume on this node picked by the claim's selector (the
	// smaller one that fits lacks its label); Retain
	// keeps it Released, with its data, once the claim goes.
	t.Run("static volume", func(t *testing.T) {
		disk := filepath.Join(c.dir, "ssd")
		if err := os.MkdirAll(disk, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(disk, "f"), []byte("on-the-disk\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := c.client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: "manual"}, Provisioner: "kubernetes.io/no-provisioner",
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct{ name, path, size string }{{"disk-node1", disk, "20Gi"}, {"small", disk, "15Gi"}} {
			labels := map[string]string{"disk": "ssd"}
			if v.name == "small" {
				labels = map[string]string{"disk": "hdd"}
			}
			if _, err := c.client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: v.name, Labels: labels},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(v.size)},
					AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					StorageClassName:              "manual",
					PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: v.path}},
					NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName}}}}}}},
				},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		fast := claim.DeepCopy()
		fast.Name = "fast"
		fast.Spec.StorageClassName = ptr.To("manual")
		fast.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("10Gi")
		fast.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"disk": "ssd"}}
		if _, err := pvcs.Create(ctx, fast, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		user := pod("fast-user", "cat /data/f")
		user.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "fast"
		if _, err := pods.Create(ctx, user, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		storageWaitPhase(t, c, "fast-user", corev1.PodSucceeded)
		if b, err := pods.GetLogs("fast-user", &corev1.PodLogOptions{}).DoRaw(ctx); err != nil || string(b) != "on-the-disk\n" {
			t.Errorf("the pod read %q, %v", b, err)
		}
		if got, err := pvcs.Get(ctx, "fast", metav1.GetOptions{}); err != nil || got.Spec.VolumeName != "disk-node1" || got.Status.Phase != corev1.ClaimBound {
			t.Fatalf("claim fast: %v %+v", err, got)
		}
		storageDeletePod(t, c, "fast-user")
		if err := pvcs.Delete(ctx, "fast", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		storageWait(t, "disk-node1 Released", func() (bool, error) {
			pv, err := c.client.CoreV1().PersistentVolumes().Get(ctx, "disk-node1", metav1.GetOptions{})
			return err == nil && pv.Status.Phase == corev1.VolumeReleased, err
		})
		if b, err := os.ReadFile(filepath.Join(disk, "f")); err != nil || string(b) != "on-the-disk\n" {
			t.Errorf("Retain: the data after the claim went: %q, %v", b, err)
		}
	})

	// Claims nothing can satisfy stay Pending, with events that say why.
	t.Run("claims no class can satisfy", func(t *testing.T) {
		for _, tc := range []struct{ name, class, reason, message string }{
			{"no-class", "", "FailedBinding", "no persistent volumes available for this claim and no storage class is set"},
			{"no-such-class", "gold", "ProvisioningFailed", `storageclass.storage.k8s.io "gold" not found`},
		} {
			pvc := claim.DeepCopy()
			pvc.Name, pvc.Spec.StorageClassName = tc.name, ptr.To(tc.class)
			if _, err := pvcs.Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			storageWait(t, tc.reason+" on "+tc.name, func() (bool, error) {
				evs, err := c.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + tc.name})
				if err != nil {
					return false, err
				}
				return slices.ContainsFunc(evs.Items, func(e corev1.Event) bool { return e.Reason == tc.reason && e.Message == tc.message }), nil
			})
			if got, err := pvcs.Get(ctx, tc.name, metav1.GetOptions{}); err != nil || got.Status.Phase != corev1.ClaimPending {
				t.Errorf("claim %s: %v %+v", tc.name, err, got)
			}
		}
	})

	t.Run("unbound immediate claim", func(t *testing.T) {
		if _, err := c.client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: "nowhere"}, Provisioner: "example.com/nowhere",
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		imm := claim.DeepCopy()
		imm.Spec.StorageClassName = ptr.To("nowhere")
		if _, err := pvcs.Create(ctx, imm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Create(ctx, pod("stuck", "true"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		storageWait(t, "FailedScheduling with upstream's reason", func() (bool, error) {
			p, err := pods.Get(ctx, "stuck", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse &&
					strings.Contains(cond.Message, "pod has unbound immediate PersistentVolumeClaims") {
					return true, nil
				}
			}
			return false, nil
		})

		// Placed on the node without the scheduler, the pod stays
		// ContainerCreating: the kubelet reports the unbound claim as
		// upstream's does, in a FailedMount event and in
		// PodReadyToStartContainers.
		direct := pod("direct", "true")
		direct.Spec.NodeName = nodeName
		if _, err := pods.Create(ctx, direct, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		storageWait(t, "the kubelet's FailedMount", func() (bool, error) {
			evs, err := c.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=direct"})
			if err != nil {
				return false, err
			}
			return slices.ContainsFunc(evs.Items, func(e corev1.Event) bool {
				return e.Reason == "FailedMount" && e.Type == corev1.EventTypeWarning && e.Source.Component == "kubelet" && e.Message == "Unable to attach or mount volumes: unmounted volumes=[data], "+
					"unattached volumes=[], failed to process volumes=[data]: error processing PVC default/data: PVC is not bound"
			}), nil
		})
		storageWait(t, "the pod's status to say its volumes are not ready", func() (bool, error) {
			p, err := pods.Get(ctx, "direct", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			ready := slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
				return c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionFalse
			})
			return ready && p.Status.Phase == corev1.PodPending && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].State.Waiting != nil && p.Status.ContainerStatuses[0].State.Waiting.Reason == "ContainerCreating", nil
		})
	})
}

func storageWait(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 2*time.Minute, true,
		func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func storageWaitPhase(t *testing.T, c *cluster, name string, phase corev1.PodPhase) {
	t.Helper()
	storageWait(t, "pod "+name+" "+string(phase), func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase == corev1.PodFailed && phase != corev1.PodFailed {
			t.Fatalf("pod %s failed: %+v", name, p.Status)
		}
		return p.Status.Phase == phase, nil
	})
}

func storageDeletePod(t *testing.T, c *cluster, name string) {
	t.Helper()
	pods := c.client.CoreV1().Pods("default")
	if err := pods.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	storageWait(t, "pod "+name+" to go", func() (bool, error) {
		_, err := pods.Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// storageMountsUnder lists the mount points at or under dir.
func storageMountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			out = append(out, fields[4])
		}
	}
	return out
}

// TestStorageStatefulSet: a StatefulSet's three claims (volumeClaimTemplates
// of the default class) are provisioned and bound, each replica writes its
// own identity, and after a scale-down to one and back to three the claims
// are still there and each returning replica finds its own data.
func TestStorageStatefulSet(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	replicas, grace := int32(3), int64(1)
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Containers: []corev1.Container{{Name: "db", Image: "busybox",
						Command:      []string{"sh", "-c", "[ -f /data/id ] || hostname > /data/id; exec sleep 3600"},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}},
				},
			}},
		},
	}
	sets := c.client.AppsV1().StatefulSets("default")
	if _, err := sets.Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitStatefulSet(t, "db")
	volumes := map[string]string{}
	for i := range 3 {
		name := fmt.Sprintf("db-%d", i)
		if got := c.execIn(t, name, "cat /data/id"); got != name {
			t.Fatalf("%s's /data/id: %q", name, got)
		}
		pvc, err := c.client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-"+name, metav1.GetOptions{})
		if err != nil || pvc.Status.Phase != corev1.ClaimBound {
			t.Fatalf("claim data-%s: %v %v", name, err, pvc)
		}
		volumes[pvc.Name] = pvc.Spec.VolumeName
	}
	scale := func(n int32) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := sets.Get(ctx, "db", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Replicas = &n
			_, err = sets.Update(ctx, s, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		c.waitStatefulSet(t, "db")
	}
	scale(1)
	for claim, volume := range volumes {
		pvc, err := c.client.CoreV1().PersistentVolumeClaims("default").Get(ctx, claim, metav1.GetOptions{})
		if err != nil || pvc.Spec.VolumeName != volume || pvc.Status.Phase != corev1.ClaimBound {
			t.Fatalf("after the scale-down, claim %s: %v %+v", claim, err, pvc)
		}
	}
	scale(3)
	for i := range 3 {
		name := fmt.Sprintf("db-%d", i)
		if got := c.execIn(t, name, "cat /data/id"); got != name {
			t.Errorf("after the scale-up, %s's /data/id: %q", name, got)
		}
		pvc, err := c.client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-"+name, metav1.GetOptions{})
		if err != nil || pvc.Spec.VolumeName != volumes[pvc.Name] {
			t.Errorf("after the scale-up, claim data-%s: %v, volume %q (was %q)", name, err, pvc.Spec.VolumeName, volumes["data-"+name])
		}
	}
}

// TestStorageStartTiming (skipped unless SKIFF_STORAGE_ROUNDS is set, for
// docs/benchmarks.md): the time from a one-replica StatefulSet created to
// its pod Running, with a volumeClaimTemplate of the default class (the
// claim made, provisioned on the node, bound, mounted) and, as the floor,
// the same set without one; SKIFF_STORAGE_ROUNDS rounds of each,
// alternating, each set and claim deleted before the next. The pod and
// claim are polled every 10 ms.
func TestStorageStartTiming(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("SKIFF_STORAGE_ROUNDS"))
	if rounds <= 0 {
		t.Skip("SKIFF_STORAGE_ROUNDS not set")
	}
	c := startCluster(t)
	ctx := context.Background()
	sets, pods, pvcs := c.client.AppsV1().StatefulSets("default"), c.client.CoreV1().Pods("default"), c.client.CoreV1().PersistentVolumeClaims("default")
	one, grace := int32(1), int64(0)
	run := func(name string, withClaim bool) time.Duration {
		set := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.StatefulSetSpec{
				Replicas: &one, ServiceName: name,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace,
						Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"}}}},
				},
			},
		}
		if withClaim {
			set.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}},
				},
			}}
		}
		start := time.Now()
		if _, err := sets.Create(ctx, set, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var took time.Duration
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
			p, err := pods.Get(ctx, name+"-0", metav1.GetOptions{})
			if err != nil || p.Status.Phase != corev1.PodRunning {
				return false, nil
			}
			took = time.Since(start)
			return true, nil
		})
		if err != nil {
			t.Fatalf("%s-0 Running: %v", name, err)
		}
		if withClaim {
			if pvc, err := pvcs.Get(ctx, "data-"+name+"-0", metav1.GetOptions{}); err != nil || pvc.Status.Phase != corev1.ClaimBound {
				t.Fatalf("claim of %s-0 with its pod Running: %v %+v", name, err, pvc)
			}
		}
		if err := sets.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		storageWait(t, name+"-0 to go", func() (bool, error) {
			_, err := pods.Get(ctx, name+"-0", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if withClaim {
			if err := pvcs.Delete(ctx, "data-"+name+"-0", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			storageWait(t, "claim of "+name+" to go", func() (bool, error) {
				_, err := pvcs.Get(ctx, "data-"+name+"-0", metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			})
		}
		return took
	}
	run("warm", false) // the image is pulled once, before the rounds
	var with, without []time.Duration
	for i := range rounds {
		with = append(with, run(fmt.Sprintf("vol%d", i), true))
		without = append(without, run(fmt.Sprintf("plain%d", i), false))
	}
	for _, r := range []struct {
		what string
		d    []time.Duration
	}{{"with a volumeClaimTemplate", with}, {"without", without}} {
		slices.Sort(r.d)
		t.Logf("StatefulSet created to pod Running, %s, %d rounds: p50 %v, min %v, max %v",
			r.what, len(r.d), r.d[len(r.d)/2].Round(time.Millisecond), r.d[0].Round(time.Millisecond), r.d[len(r.d)-1].Round(time.Millisecond))
	}
}
