package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
}

func start(t *testing.T) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	cmtest.Start(t, ts, func(o *cmapp.Options) {
		o.Controllers = []string{"persistentvolume-binder", "persistentvolumeclaim-protection", "persistentvolume-protection",
			"ephemeral-volume", "garbage-collector"}
	})
	return &env{t: t, ctx: context.Background(), client: ts.Client}
}

func (e *env) poll(what string, cond func() (bool, string)) {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v; last state: %s", what, err, last)
	}
}

func (e *env) volume(name, class, size string, policy corev1.PersistentVolumeReclaimPolicy) {
	e.t.Helper()
	_, err := e.client.CoreV1().PersistentVolumes().Create(e.ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: policy,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	// The binder binds only Available volumes (upstream's
	// FindMatchingVolume skips a Pending one), so a claim created before
	// its best fit is Available would be bound to a larger one.
	e.waitVolumePhase(name, corev1.VolumeAvailable)
}

func (e *env) claim(name string, class *string, size string) {
	e.t.Helper()
	_, err := e.client.CoreV1().PersistentVolumeClaims("default").Create(e.ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) waitClaimBound(name, volume string) {
	e.t.Helper()
	e.poll("claim "+name+" bound to "+volume, func() (bool, string) {
		c, err := e.client.CoreV1().PersistentVolumeClaims("default").Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return c.Status.Phase == corev1.ClaimBound && c.Spec.VolumeName == volume, fmt.Sprintf("%s %q", c.Status.Phase, c.Spec.VolumeName)
	})
}

func (e *env) waitVolumePhase(name string, phase corev1.PersistentVolumePhase) {
	e.t.Helper()
	e.poll("volume "+name+" "+string(phase), func() (bool, string) {
		v, err := e.client.CoreV1().PersistentVolumes().Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Phase == phase, string(v.Status.Phase)
	})
}

func (e *env) waitEvent(object, reason, message string) {
	e.t.Helper()
	e.poll(reason+" event on "+object, func() (bool, string) {
		evs, err := e.client.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + object})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range evs.Items {
			if ev.Reason == reason && ev.Message == message {
				return true, ""
			}
			seen = append(seen, ev.Reason+": "+ev.Message)
		}
		return false, fmt.Sprint(seen)
	})
}

func (e *env) waitGone(what string, get func() error) {
	e.t.Helper()
	e.poll(what+" to go", func() (bool, string) {
		err := get()
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// Static volumes: the smallest that fits is bound both ways; Retain keeps
// the volume Released after its claim goes; a static Delete volume fails;
// a claim nothing can satisfy says why.
func TestStaticBinding(t *testing.T) {
	e := start(t)
	e.volume("small", "manual", "1Gi", corev1.PersistentVolumeReclaimRetain)
	e.volume("fit", "manual", "5Gi", corev1.PersistentVolumeReclaimRetain)
	e.volume("big", "manual", "10Gi", corev1.PersistentVolumeReclaimRetain)
	e.volume("deletable", "other", "1Gi", corev1.PersistentVolumeReclaimDelete)
	e.claim("data", ptr.To("manual"), "3Gi")
	e.waitClaimBound("data", "fit")
	e.waitVolumePhase("fit", corev1.VolumeBound)
	e.waitVolumePhase("small", corev1.VolumeAvailable)
	pv, err := e.client.CoreV1().PersistentVolumes().Get(e.ctx, "fit", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "data" || pv.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" {
		t.Fatalf("volume: %+v %v", pv.Spec.ClaimRef, pv.Annotations)
	}

	// Its class does not allow expansion: growing it is refused.
	claims := e.client.CoreV1().PersistentVolumeClaims("default")
	grown, err := claims.Get(e.ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	grown.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("4Gi")
	if _, err := claims.Update(e.ctx, grown, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("growing a claim whose class does not allow it: %v", err)
	}

	// Deleted (no pod uses it): the protection finalizer goes, then the claim.
	if err := claims.Delete(e.ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitGone("claim data", func() error { _, err := claims.Get(e.ctx, "data", metav1.GetOptions{}); return err })
	e.waitVolumePhase("fit", corev1.VolumeReleased)

	e.claim("other", ptr.To("other"), "1Gi")
	e.waitClaimBound("other", "deletable")
	if err := claims.Delete(e.ctx, "other", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitVolumePhase("deletable", corev1.VolumeFailed)
	e.waitEvent("deletable", "VolumeFailedDelete", `error getting deleter volume plugin for volume "deletable": no deletable volume plugin matched`)

	e.claim("none", ptr.To(""), "1Gi")
	e.waitEvent("none", "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
}

// The default class: a claim without a class gets local-path, waits for a
// consumer, and once the scheduler picked a node is handed to the
// provisioner; a volume the provisioner makes pre-bound to it is bound.
func TestDefaultClassHandOff(t *testing.T) {
	e := start(t)
	e.claim("data", nil, "1Gi")
	e.waitEvent("data", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
	claims := e.client.CoreV1().PersistentVolumeClaims("default")
	c, err := claims.Get(e.ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(c.Spec.StorageClassName, "") != "local-path" {
		t.Fatalf("class %v", c.Spec.StorageClassName)
	}
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, "volume.kubernetes.io/selected-node", "node-1")
	if _, err := claims.Update(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll("the storage-provisioner annotations", func() (bool, string) {
		c, err := claims.Get(e.ctx, "data", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return c.Annotations["volume.kubernetes.io/storage-provisioner"] == "skiff.dev/local-path" &&
			c.Annotations["volume.beta.kubernetes.io/storage-provisioner"] == "skiff.dev/local-path", fmt.Sprint(c.Annotations)
	})
	// Play the provisioner.
	_, err = e.client.CoreV1().PersistentVolumes().Create(e.ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(c.UID), Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "skiff.dev/local-path"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:              "local-path",
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			ClaimRef:                      &corev1.ObjectReference{Namespace: "default", Name: "data", UID: c.UID},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/x"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.waitClaimBound("data", "pvc-"+string(c.UID))
}

// Protection: a claim used by a running pod stays after its deletion until
// the pod goes; a Bound volume stays until its claim goes.
func TestProtection(t *testing.T) {
	e := start(t)
	e.volume("pv1", "manual", "1Gi", corev1.PersistentVolumeReclaimRetain)
	e.claim("data", ptr.To("manual"), "1Gi")
	e.waitClaimBound("data", "pv1")
	e.waitVolumePhase("pv1", corev1.VolumeBound)
	pods := e.client.CoreV1().Pods("default")
	pod, err := pods.Create(e.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "user"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvs, claims := e.client.CoreV1().PersistentVolumes(), e.client.CoreV1().PersistentVolumeClaims("default")
	if err := pvs.Delete(e.ctx, "pv1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := claims.Delete(e.ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The protection controllers saw both deletions (the claim's
	// deletionTimestamp is an update they act on) and kept them.
	e.poll("the claim's deletion to be seen", func() (bool, string) {
		c, err := claims.Get(e.ctx, "data", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return c.DeletionTimestamp != nil, ""
	})
	for _, check := range []func() error{
		func() error { _, err := claims.Get(e.ctx, "data", metav1.GetOptions{}); return err },
		func() error { _, err := pvs.Get(e.ctx, "pv1", metav1.GetOptions{}); return err },
	} {
		if err := check(); err != nil {
			t.Fatalf("an object in use went away: %v", err)
		}
	}
	c, _ := claims.Get(e.ctx, "data", metav1.GetOptions{})
	if !slices.Contains(c.Finalizers, "kubernetes.io/pvc-protection") {
		t.Fatalf("claim finalizers %v", c.Finalizers)
	}
	if err := pods.Delete(e.ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	e.waitGone("claim data", func() error { _, err := claims.Get(e.ctx, "data", metav1.GetOptions{}); return err })
	e.waitGone("volume pv1", func() error { _, err := pvs.Get(e.ctx, "pv1", metav1.GetOptions{}); return err })
}

// A pod's ephemeral volume becomes a claim <pod>-<volume> owned by the pod,
// deleted with it.
func TestEphemeralVolume(t *testing.T) {
	e := start(t)
	pods := e.client.CoreV1().Pods("default")
	pod, err := pods.Create(e.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				}}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claims := e.client.CoreV1().PersistentVolumeClaims("default")
	e.poll("claim web-scratch", func() (bool, string) {
		c, err := claims.Get(e.ctx, "web-scratch", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ref := metav1.GetControllerOf(c)
		return ref != nil && ref.UID == pod.UID && ptr.Deref(c.Spec.StorageClassName, "") == "local-path", fmt.Sprint(c.OwnerReferences)
	})
	if err := pods.Delete(e.ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	e.waitGone("claim web-scratch", func() error { _, err := claims.Get(e.ctx, "web-scratch", metav1.GetOptions{}); return err })
}
