package admission

import (
	"context"
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TokenVolumeSource makes all its parts in one allocation; the volume must
// be upstream's, and two volumes must not share anything.
func TestTokenVolumeSource(t *testing.T) {
	want := &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](corev1.ProjectedVolumeSourceDefaultMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}
	a, b := TokenVolumeSource(), TokenVolumeSource()
	if !equality.Semantic.DeepEqual(a, want) {
		t.Fatalf("TokenVolumeSource() = %+v, want %+v", a, want)
	}
	*a.DefaultMode = 0o600
	*a.Sources[0].ServiceAccountToken.ExpirationSeconds = 1
	a.Sources[1].ConfigMap.Items[0].Key = "other"
	a.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath = "metadata.name"
	if !equality.Semantic.DeepEqual(b, want) {
		t.Errorf("changing one volume changed another: %+v", b)
	}
	if !equality.Semantic.DeepEqual(a.DeepCopy(), a) {
		t.Error("a deep copy differs from the volume")
	}
}

// Without a fixed Suffix the token volume is kube-api-access- and five
// characters of upstream's alphabet.
func TestServiceAccountRandomVolumeName(t *testing.T) {
	s := &ServiceAccount{}
	re := regexp.MustCompile(`^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	seen := map[string]bool{}
	for range 20 {
		n := s.volumeName()
		if !re.MatchString(n) {
			t.Fatalf("volume name %q", n)
		}
		seen[n] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 volume names, all %v", seen)
	}
}

// A pod tolerating neither taint gets both tolerations, each with its own
// seconds.
func TestDefaultTolerationSecondsBoth(t *testing.T) {
	pod := &corev1.Pod{}
	d := &DefaultTolerationSeconds{Seconds: 300}
	if err := d.Admit(context.Background(), &Attributes{Operation: Create, Object: pod}); err != nil {
		t.Fatal(err)
	}
	want := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	if !equality.Semantic.DeepEqual(pod.Spec.Tolerations, want) {
		t.Fatalf("tolerations = %+v", pod.Spec.Tolerations)
	}
	*pod.Spec.Tolerations[0].TolerationSeconds = 1
	if *pod.Spec.Tolerations[1].TolerationSeconds != 300 {
		t.Error("the two tolerations share their seconds")
	}
	// A pod tolerating every NoExecute taint gets none.
	all := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	if err := d.Admit(context.Background(), &Attributes{Operation: Create, Object: all}); err != nil || len(all.Spec.Tolerations) != 1 {
		t.Errorf("tolerate-everything pod: %v %+v", err, all.Spec.Tolerations)
	}
}

// LimitRanger reads the namespace's LimitRanges once per write, for Admit
// and Validate, and again for the next write.
func TestLimitRangerListsOncePerWrite(t *testing.T) {
	objs := newCacheObjects(&corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}})
	l := &LimitRanger{Objects: objs}
	for i := 1; i <= 2; i++ {
		a := podCreate(newPod("p"))
		if err := l.Admit(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if err := l.Validate(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if got := objs.lists.Load(); got != int64(i) {
			t.Fatalf("after %d writes: %d lists", i, got)
		}
		c := a.Object.(*corev1.Pod).Spec.Containers[0]
		if q := c.Resources.Limits[corev1.ResourceCPU]; q.String() != "1" {
			t.Errorf("write %d: the default limit was not applied: %+v", i, c.Resources)
		}
	}
}

// In a namespace without ResourceQuotas a create is admitted after one list
// and charges nothing; with one, it is charged.
func TestResourceQuotaWithoutQuotas(t *testing.T) {
	objs := newCacheObjects()
	r := &ResourceQuota{Objects: objs, Update: func(context.Context, string, string, func(*corev1.ResourceQuota) error) error {
		t.Fatal("a quota was charged in a namespace without quotas")
		return nil
	}}
	a := podCreate(newPod("p"))
	if err := r.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if objs.lists.Load() != 1 || len(a.rollbacks) != 0 {
		t.Errorf("lists %d, rollbacks %d", objs.lists.Load(), len(a.rollbacks))
	}
}
