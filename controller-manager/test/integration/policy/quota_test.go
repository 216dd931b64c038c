package policy

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/pkg/controller/resourcequota"
)

const quotaNS = "quota"

func quotaPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "busybox",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
			},
		}}},
	}
}

// usedIs waits until the quota's status.used holds want (other names may
// be there too), reporting what it last saw.
func usedIs(t *testing.T, c kubernetes.Interface, what string, want map[string]string) {
	t.Helper()
	poll(t, what, func(ctx context.Context) (bool, string, error) {
		q, err := c.CoreV1().ResourceQuotas(quotaNS).Get(ctx, "compute", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return usedMatches(q.Status.Used, want), describe(q.Status.Used), nil
	})
}

func usedMatches(used corev1.ResourceList, want map[string]string) bool {
	for name, v := range want {
		got, ok := used[corev1.ResourceName(name)]
		if !ok || got.Cmp(resource.MustParse(v)) != 0 {
			return false
		}
	}
	return true
}

func describe(l corev1.ResourceList) string {
	var parts []string
	for k, v := range l {
		parts = append(parts, fmt.Sprintf("%s=%s", k, v.String()))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// count lists how many objects the namespace holds, to compare the
// quota's usage with.
func count(t *testing.T, c kubernetes.Interface, kind string) int {
	t.Helper()
	ctx := context.Background()
	var n int
	var err error
	switch kind {
	case "configmaps":
		l, e := c.CoreV1().ConfigMaps(quotaNS).List(ctx, metav1.ListOptions{})
		if e == nil {
			n = len(l.Items)
		}
		err = e
	case "secrets":
		l, e := c.CoreV1().Secrets(quotaNS).List(ctx, metav1.ListOptions{})
		if e == nil {
			n = len(l.Items)
		}
		err = e
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// status.used follows creates, deletes and terminations of pods and
// ConfigMaps within seconds, and the controller repairs a usage that is
// wrong (which the API server's admission, charging only deltas, never
// would) on its periodic resync.
func TestQuotaUsageFollowsObjects(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	cm := startCM(t, ts, func(o *cmapp.Options) {
		o.Controllers = []string{"resourcequota"}
		o.Controller.ResourceQuotaSyncPeriod = 2 * time.Second
	})
	c, ctx := ts.Client, context.Background()
	namespace(t, c, quotaNS)

	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourcePods:         resource.MustParse("10"),
			"count/pods":                resource.MustParse("10"),
			corev1.ResourceRequestsCPU:  resource.MustParse("2"),
			corev1.ResourceLimitsMemory: resource.MustParse("1Gi"),
			corev1.ResourceConfigMaps:   resource.MustParse("10"),
			corev1.ResourceSecrets:      resource.MustParse("10"),
			"count/deployments.apps":    resource.MustParse("5"),
		}},
	}
	if _, err := c.CoreV1().ResourceQuotas(quotaNS).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What follows must happen under the running controller, not only
	// under the API server's admission charges.
	controllerSynced(t, cm)
	base := count(t, c, "configmaps")
	secrets := count(t, c, "secrets")
	usedIs(t, c, "the initial usage", map[string]string{
		"pods": "0", "count/pods": "0", "requests.cpu": "0", "limits.memory": "0",
		"configmaps": fmt.Sprint(base), "secrets": fmt.Sprint(secrets), "count/deployments.apps": "0",
	})

	for _, name := range []string{"a", "b"} {
		if _, err := c.CoreV1().Pods(quotaNS).Create(ctx, quotaPod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cmObj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + name}}
		if _, err := c.CoreV1().ConfigMaps(quotaNS).Create(ctx, cmObj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       quotaPod("x").Spec,
			},
		},
	}
	if _, err := c.AppsV1().Deployments(quotaNS).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	usedIs(t, c, "two pods, two ConfigMaps and a Deployment counted", map[string]string{
		"pods": "2", "count/pods": "2", "requests.cpu": "200m", "limits.memory": "128Mi",
		"configmaps": fmt.Sprint(base + 2), "count/deployments.apps": "1",
	})

	zero := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	if err := c.CoreV1().Pods(quotaNS).Delete(ctx, "a", zero); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().ConfigMaps(quotaNS).Delete(ctx, "cm-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	usedIs(t, c, "a pod and a ConfigMap deleted", map[string]string{
		"pods": "1", "count/pods": "1", "requests.cpu": "100m", "limits.memory": "64Mi", "configmaps": fmt.Sprint(base + 1),
	})

	pod, err := c.CoreV1().Pods(quotaNS).Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setPodStatus(t, c, pod, corev1.PodFailed, false)
	usedIs(t, c, "a failed pod counted only as an object", map[string]string{
		"pods": "0", "count/pods": "1", "requests.cpu": "0", "limits.memory": "0",
	})

	// A usage that is wrong: only the controller, recomputing from the
	// objects, puts it right.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.CoreV1().ResourceQuotas(quotaNS).Get(ctx, "compute", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Used[corev1.ResourcePods] = resource.MustParse("7")
		cur.Status.Used[corev1.ResourceConfigMaps] = resource.MustParse("9")
		cur.Status.Used["count/deployments.apps"] = resource.MustParse("4")
		_, err = c.CoreV1().ResourceQuotas(quotaNS).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	usedIs(t, c, "the periodic resync to repair status.used", map[string]string{
		"pods": "0", "configmaps": fmt.Sprint(base + 1), "count/deployments.apps": "1",
	})

	if n := metricValue(t, cm, "workqueue_adds_total", map[string]string{"name": "resourcequota"}); n == 0 {
		t.Error("workqueue_adds_total has nothing for the resourcequota queue")
	}
}

// controllerSynced waits until the controller manager leads and its quota
// controller has synced a quota.
func controllerSynced(t *testing.T, cm *cmapp.Config) {
	t.Helper()
	poll(t, "a resourcequota-controller sync", func(context.Context) (bool, string, error) {
		n := metricValue(t, cm, "controller_sync_total", map[string]string{"controller": resourcequota.ControllerName, "result": "success"})
		return cm.Leading() && n > 0, fmt.Sprintf("leading %v, %v syncs", cm.Leading(), n), nil
	})
}

// A pod stuck terminating past its grace period (no kubelet finishes it)
// stops counting against compute resources, which admission never sees.
func TestQuotaReleasesPodStuckTerminating(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	cm := startCM(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"resourcequota"} })
	c, ctx := ts.Client, context.Background()
	namespace(t, c, quotaNS)
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourcePods:        resource.MustParse("10"),
			corev1.ResourceRequestsCPU: resource.MustParse("2"),
		}},
	}
	if _, err := c.CoreV1().ResourceQuotas(quotaNS).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllerSynced(t, cm)
	pod, err := c.CoreV1().Pods(quotaNS).Create(ctx, quotaPod("stuck"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Bound and running, so deletion is graceful and waits for a kubelet.
	setPodStatus(t, c, pod, corev1.PodRunning, true)
	usedIs(t, c, "the running pod counted", map[string]string{"pods": "1", "requests.cpu": "100m"})
	if err := c.CoreV1().Pods(quotaNS).Delete(ctx, "stuck", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}); err != nil {
		t.Fatal(err)
	}
	got, err := c.CoreV1().Pods(quotaNS).Get(ctx, "stuck", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the bound pod should wait for its kubelet: %v", err)
	}
	if got.DeletionTimestamp == nil {
		t.Fatal("the pod has no deletionTimestamp")
	}
	usedIs(t, c, "the pod stuck terminating released", map[string]string{"pods": "0", "requests.cpu": "0"})
	if _, err := c.CoreV1().Pods(quotaNS).Get(ctx, "stuck", metav1.GetOptions{}); err != nil {
		t.Fatalf("the pod went away, so the test proved nothing about stuck pods: %v", err)
	}
}
