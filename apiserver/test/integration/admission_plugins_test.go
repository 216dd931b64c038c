package integration

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
)

func TestPriorityClassesAndAdmission(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	for name, value := range map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000} {
		err := waitFor(t, func() error {
			pc, err := c.SchedulingV1().PriorityClasses().Get(ctx(t), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if pc.Value != value {
				return fmt.Errorf("%s value %d, want %d", name, pc.Value, value)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("built-in class: %v", err)
		}
	}
	pcs := c.SchedulingV1().PriorityClasses()
	if _, err := pcs.Create(ctx(t), &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-mine"}, Value: 5}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "reserved for system use only") {
		t.Errorf("system- prefix: %v", err)
	}
	if _, err := pcs.Create(ctx(t), &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "huge"}, Value: 2000000001}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "maximum allowed value of a user defined priority is 1000000000") {
		t.Errorf("too high: %v", err)
	}
	never := corev1.PreemptNever
	if _, err := pcs.Create(ctx(t), &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000, PreemptionPolicy: &never}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := c.CoreV1().Pods("default")
	p := testPod("prio", "")
	p.Spec.PriorityClassName = "high"
	got, err := pods.Create(ctx(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Priority == nil || *got.Spec.Priority != 1000 || got.Spec.PreemptionPolicy == nil || *got.Spec.PreemptionPolicy != never {
		t.Errorf("priority %v preemption %v, want 1000 Never", got.Spec.Priority, got.Spec.PreemptionPolicy)
	}
	p = testPod("unknown-class", "")
	p.Spec.PriorityClassName = "nope"
	_, err = pods.Create(ctx(t), p, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no PriorityClass with name nope was found") {
		t.Errorf("unknown class: %v, want 403 no PriorityClass with name nope was found", err)
	}
	// No class named, no default: priority 0.
	got, err = pods.Create(ctx(t), testPod("plain", ""), metav1.CreateOptions{})
	if err != nil || got.Spec.Priority == nil || *got.Spec.Priority != 0 || got.Spec.PriorityClassName != "" {
		t.Errorf("no class: %v %v %q", err, got.Spec.Priority, got.Spec.PriorityClassName)
	}
	if _, err := pcs.Create(ctx(t), &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "fallback"}, Value: 7, GlobalDefault: true}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcs.Create(ctx(t), &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "second-default"}, Value: 8, GlobalDefault: true}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a second global default: %v, want 403", err)
	}
	got, err = pods.Create(ctx(t), testPod("defaulted", ""), metav1.CreateOptions{})
	if err != nil || got.Spec.PriorityClassName != "fallback" || got.Spec.Priority == nil || *got.Spec.Priority != 7 {
		t.Errorf("global default: %v %q %v", err, got.Spec.PriorityClassName, got.Spec.Priority)
	}
	// The value is immutable.
	pc, err := pcs.Get(ctx(t), "high", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pc.Value = 1001
	if _, err := pcs.Update(ctx(t), pc, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "may not be changed in an update") {
		t.Errorf("changing the value: %v", err)
	}
}

func TestRuntimeClassAdmission(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	rc := &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{"sandbox": "gvisor"},
			Tolerations:  []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpEqual, Value: "gvisor", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	if _, err := c.NodeV1().RuntimeClasses().Create(ctx(t), rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := c.CoreV1().Pods("default")
	p := testPod("sandboxed", "")
	p.Spec.RuntimeClassName = ptr.To("gvisor")
	got, err := pods.Create(ctx(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := got.Spec.Overhead[corev1.ResourceCPU]; q.String() != "250m" {
		t.Errorf("overhead = %v, want cpu 250m", got.Spec.Overhead)
	}
	if got.Spec.NodeSelector["sandbox"] != "gvisor" {
		t.Errorf("nodeSelector = %v", got.Spec.NodeSelector)
	}
	found := false
	for _, tol := range got.Spec.Tolerations {
		if tol.Key == "sandbox" && tol.Value == "gvisor" {
			found = true
		}
	}
	if !found {
		t.Errorf("tolerations = %v, want the class's", got.Spec.Tolerations)
	}
	p = testPod("conflict", "")
	p.Spec.RuntimeClassName = ptr.To("gvisor")
	p.Spec.NodeSelector = map[string]string{"sandbox": "kata"}
	if _, err := pods.Create(ctx(t), p, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "conflict: runtimeClass.scheduling.nodeSelector[sandbox]") {
		t.Errorf("conflicting nodeSelector: %v", err)
	}
	p = testPod("missing-class", "")
	p.Spec.RuntimeClassName = ptr.To("nope")
	if _, err := pods.Create(ctx(t), p, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `RuntimeClass "nope" not found`) {
		t.Errorf("missing class: %v", err)
	}
}

func withServiceAccountAdmission(o *server.Options) { o.DisableAdmissionPlugins = nil }

func TestServiceAccountAdmission(t *testing.T) {
	ts := start(t, withServiceAccountAdmission)
	c := ts.Client
	pods := c.CoreV1().Pods("default")
	_, err := pods.Create(ctx(t), testPod("no-sa", ""), metav1.CreateOptions{})
	want := `error looking up service account default/default: serviceaccount "default" not found`
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("pod without a default service account: %v, want 403 %q", err, want)
	}
	if _, err := c.CoreV1().ServiceAccounts("default").Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := testPod("with-sa", "")
	p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	got, err := pods.Create(ctx(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "default" || got.Spec.DeprecatedServiceAccount != "default" {
		t.Errorf("serviceAccountName = %q, serviceAccount = %q", got.Spec.ServiceAccountName, got.Spec.DeprecatedServiceAccount)
	}
	var vol *corev1.Volume
	for i := range got.Spec.Volumes {
		if strings.HasPrefix(got.Spec.Volumes[i].Name, "kube-api-access-") {
			vol = &got.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.Projected == nil || len(vol.Projected.Sources) != 3 {
		t.Fatalf("no projected kube-api-access volume: %+v", got.Spec.Volumes)
	}
	src := vol.Projected.Sources
	if src[0].ServiceAccountToken == nil || src[0].ServiceAccountToken.Path != "token" || *src[0].ServiceAccountToken.ExpirationSeconds != 3607 ||
		src[1].ConfigMap == nil || src[1].ConfigMap.Name != "kube-root-ca.crt" ||
		src[2].DownwardAPI == nil || src[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("projected sources = %+v", src)
	}
	for _, ctr := range append(got.Spec.InitContainers, got.Spec.Containers...) {
		ok := false
		for _, m := range ctr.VolumeMounts {
			if m.Name == vol.Name && m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount" && m.ReadOnly {
				ok = true
			}
		}
		if !ok {
			t.Errorf("container %s does not mount the token: %+v", ctr.Name, ctr.VolumeMounts)
		}
	}
	// automountServiceAccountToken: false on the service account.
	if _, err := c.CoreV1().ServiceAccounts("default").Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "quiet"},
		AutomountServiceAccountToken: ptr.To(false)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = testPod("quiet", "")
	p.Spec.ServiceAccountName = "quiet"
	got, err = pods.Create(ctx(t), p, metav1.CreateOptions{})
	if err != nil || len(got.Spec.Volumes) != 0 || len(got.Spec.Containers[0].VolumeMounts) != 0 {
		t.Errorf("no automount: %v volumes=%v", err, got.Spec.Volumes)
	}
	p = testPod("missing-sa", "")
	p.Spec.ServiceAccountName = "ghost"
	if _, err := pods.Create(ctx(t), p, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `serviceaccount "ghost" not found`) {
		t.Errorf("missing named service account: %v", err)
	}
}

func TestLimitRanger(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer,
			Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			Max:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			Min:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}},
		{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
	}}}
	if _, err := c.CoreV1().LimitRanges("default").Create(ctx(t), lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := c.CoreV1().Pods("default")
	got, err := pods.Create(ctx(t), testPod("defaulted", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := got.Spec.Containers[0].Resources
	if res.Requests.Cpu().String() != "100m" || res.Limits.Cpu().String() != "500m" || res.Limits.Memory().String() != "128Mi" {
		t.Errorf("defaults = %+v", res)
	}
	// Upstream defaults memory's request from the default limit (defaultRequest takes default).
	if res.Requests.Memory().String() != "128Mi" {
		t.Errorf("memory request = %v, want 128Mi", res.Requests.Memory())
	}
	if a := got.Annotations["kubernetes.io/limit-ranger"]; a != "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c" {
		t.Errorf("annotation = %q", a)
	}
	p := testPod("greedy", "")
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	_, err = pods.Create(ctx(t), p, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "maximum cpu usage per Container is 1, but limit is 2") {
		t.Errorf("over max: %v", err)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
	}}
	_, err = c.CoreV1().PersistentVolumeClaims("default").Create(ctx(t), pvc, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi") {
		t.Errorf("pvc over max: %v", err)
	}
}

func TestResourceQuotaIsAtomic(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	const n = 12
	if _, err := c.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "quota"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourcePods: *resource.NewQuantity(n/2, resource.DecimalSI), "count/configmaps": resource.MustParse("1"),
	}}}
	created, err := c.CoreV1().ResourceQuotas("quota").Create(ctx(t), q, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used := created.Status.Used[corev1.ResourcePods]; used.Value() != 0 || created.Status.Hard.Pods().Value() != n/2 {
		t.Errorf("initial status = %+v", created.Status)
	}
	pods := c.CoreV1().Pods("quota")
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	var other []error
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := pods.Create(ctx(t), testPod(fmt.Sprintf("p%d", i), ""), metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: pods"):
				refused++
			default:
				other = append(other, err)
			}
		}(i)
	}
	wg.Wait()
	if ok != n/2 || refused != n/2 || len(other) > 0 {
		t.Fatalf("%d created, %d refused, other errors %v; want %d and %d", ok, refused, other, n/2, n/2)
	}
	_, err = pods.Create(ctx(t), testPod("one-more", ""), metav1.CreateOptions{})
	want := fmt.Sprintf(`pods "one-more" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=%d, limited: pods=%d`, n/2, n/2)
	if err == nil || err.Error() != want {
		t.Errorf("message:\n got %v\nwant %s", err, want)
	}
	got, err := c.CoreV1().ResourceQuotas("quota").Get(ctx(t), "pods", metav1.GetOptions{})
	if err != nil || got.Status.Used.Pods().Value() != n/2 {
		t.Fatalf("used after the race: %v %v", err, got.Status.Used)
	}
	// A deleted pod gives its usage back; a dry run takes none.
	var victim string
	list, _ := pods.List(ctx(t), metav1.ListOptions{})
	if len(list.Items) > 0 {
		victim = list.Items[0].Name
	}
	if err := pods.Delete(ctx(t), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = c.CoreV1().ResourceQuotas("quota").Get(ctx(t), "pods", metav1.GetOptions{})
	if got.Status.Used.Pods().Value() != n/2-1 {
		t.Errorf("used after a delete = %v, want %d", got.Status.Used.Pods(), n/2-1)
	}
	if _, err := pods.Create(ctx(t), testPod("dry", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	got, _ = c.CoreV1().ResourceQuotas("quota").Get(ctx(t), "pods", metav1.GetOptions{})
	if got.Status.Used.Pods().Value() != n/2-1 {
		t.Errorf("a dry run charged the quota: %v", got.Status.Used.Pods())
	}
	// count/<resource>: a failed create gives its charge back.
	cms := c.CoreV1().ConfigMaps("quota")
	if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "exceeded quota: pods, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1") {
		t.Errorf("count/configmaps: %v", err)
	}
	if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		t.Errorf("duplicate: %v", err)
	}
	got, _ = c.CoreV1().ResourceQuotas("quota").Get(ctx(t), "pods", metav1.GetOptions{})
	if v := got.Status.Used["count/configmaps"]; v.Value() != 1 {
		t.Errorf("count/configmaps used = %v, want 1", v.String())
	}
}

func TestResourceQuotaComputeResources(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "compute"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourceRequestsCPU: resource.MustParse("1"), corev1.ResourceLimitsMemory: resource.MustParse("1Gi"),
	}}}
	if _, err := c.CoreV1().ResourceQuotas("default").Create(ctx(t), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := c.CoreV1().Pods("default")
	_, err := pods.Create(ctx(t), testPod("bare", ""), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "failed quota: compute: must specify limits.memory for: c; requests.cpu for: c") {
		t.Errorf("unspecified resources: %v", err)
	}
	p := testPod("sized", "")
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
	if _, err := pods.Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p2 := p.DeepCopy()
	p2.Name = "sized-2"
	_, err = pods.Create(ctx(t), p2, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1") {
		t.Errorf("over requests.cpu: %v", err)
	}
	// A pod that finishes gives back its compute usage.
	cur, err := pods.Get(ctx(t), "sized", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx(t), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := c.CoreV1().ResourceQuotas("default").Get(ctx(t), "compute", metav1.GetOptions{})
	if v := got.Status.Used[corev1.ResourceRequestsCPU]; !v.IsZero() {
		t.Errorf("requests.cpu used after the pod succeeded = %v, want 0", v.String())
	}
	if _, err := pods.Create(ctx(t), p2, metav1.CreateOptions{}); err != nil {
		t.Errorf("create after release: %v", err)
	}
}

// A status update or patch of a quota stores status as written (the
// conformance test patches status.hard); a change of spec.hard carries
// into status.hard.
func TestResourceQuotaStatusWrites(t *testing.T) {
	ts := start(t, nil)
	quotas := ts.Client.CoreV1().ResourceQuotas("default")
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "rq"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("500Mi"),
	}}}
	if _, err := quotas.Create(ctx(t), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hard := func(what string, q *corev1.ResourceQuota, want string) {
		t.Helper()
		if v := q.Status.Hard[corev1.ResourceCPU]; v.String() != want {
			t.Errorf("%s: status.hard cpu = %s, want %s", what, v.String(), want)
		}
	}
	patched, err := quotas.Patch(ctx(t), "rq", types.MergePatchType, []byte(`{"status":{"hard":{"cpu":"2","memory":"1Gi"}}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	hard("the patch's answer", patched, "2")
	got, err := quotas.Get(ctx(t), "rq", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hard("read back", got, "2")
	got.Status.Hard[corev1.ResourceCPU] = resource.MustParse("3")
	updated, err := quotas.UpdateStatus(ctx(t), got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hard("UpdateStatus's answer", updated, "3")
	updated.Spec.Hard[corev1.ResourceCPU] = resource.MustParse("4")
	updated, err = quotas.Update(ctx(t), updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hard("after spec.hard changed", updated, "4")
}
