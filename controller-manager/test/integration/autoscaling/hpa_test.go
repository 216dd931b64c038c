package autoscaling

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	memory "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/pkg/controller/metrics"
	"skiff.dev/controller-manager/pkg/controller/podautoscaler"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

const ns = "hpa"

// load is the CPU the Deployment's pods use together, in millicores,
// shared evenly between the pods that are running.
type load struct{ total atomic.Int64 }

// metricsAPI is a metrics.k8s.io clientset whose PodMetrics are the
// running pods the API server holds, each using its share of the load.
func metricsAPI(client kubernetes.Interface, l *load) *metricsfake.Clientset {
	mc := &metricsfake.Clientset{}
	mc.AddReactor("list", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		sel := action.(k8stesting.ListAction).GetListRestrictions().Labels
		pods, err := client.CoreV1().Pods(action.GetNamespace()).List(context.Background(), metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return true, nil, err
		}
		var running []corev1.Pod
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running = append(running, p)
			}
		}
		out := &metricsv1beta1.PodMetricsList{}
		for _, p := range running {
			share := l.total.Load() / int64(len(running))
			out.Items = append(out.Items, metricsv1beta1.PodMetrics{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels},
				Timestamp:  metav1.Now(), Window: metav1.Duration{Duration: 15 * time.Second},
				Containers: []metricsv1beta1.ContainerMetrics{{Name: "app", Usage: corev1.ResourceList{
					corev1.ResourceCPU: *resource.NewMilliQuantity(share, resource.DecimalSI)}}},
			})
		}
		return true, out, nil
	})
	return mc
}

// kubelet reports each new pod of the namespace Running and Ready (started
// ten minutes ago, past the CPU initialization period) and finishes
// graceful deletions, until ctx ends.
func kubelet(ctx context.Context, client kubernetes.Interface) {
	for ctx.Err() == nil {
		w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			if pod.DeletionTimestamp != nil {
				_ = client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
				continue
			}
			if pod.Status.Phase == corev1.PodRunning {
				continue
			}
			_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				started := metav1.NewTime(time.Now().Add(-10 * time.Minute))
				cur.Status.Phase, cur.Status.StartTime = corev1.PodRunning, &started
				cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}
				_, err = client.CoreV1().Pods(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
				return err
			})
		}
		w.Stop()
	}
}

// startHPAController runs the HPA controller with the controller
// manager's identity and the fake metrics, syncing every 200 ms.
func startHPAController(t *testing.T, ts *testserver.TestServer, mc *metricsfake.Clientset) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(ts.Dir, "controller-manager.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	scales, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(client, time.Minute)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	opts := podautoscaler.DefaultOptions()
	opts.SyncPeriod = 200 * time.Millisecond
	c, err := podautoscaler.NewController(client, factory.Autoscaling().V2().HorizontalPodAutoscalers(), factory.Core().V1().Pods(), scales, mapper,
		podautoscaler.NewResourceMetricsClient(mc.MetricsV1beta1()),
		broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: podautoscaler.ControllerName}), metrics.New(prometheus.NewRegistry()), opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := c.Run(ctx, 2); err != nil {
			t.Errorf("hpa controller: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
		broadcaster.Shutdown()
	})
}

// startHPACluster starts an API server, the controller manager with
// controllers, the namespace with its default service account, the fake
// kubelet and the HPA controller on fake metrics whose load starts at 180%
// of one pod's 100m request. The context ends with the test (90 s at most).
func startHPACluster(t *testing.T, controllers ...string) (context.Context, kubernetes.Interface, *load) {
	t.Helper()
	ts := testserver.Start(t, nil)
	cmtest.Start(t, ts, func(o *cmapp.Options) { o.Controllers = controllers })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	client := ts.Client
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kctx, kcancel := context.WithCancel(context.Background())
	var kwg sync.WaitGroup
	kwg.Add(1)
	go func() { defer kwg.Done(); kubelet(kctx, client) }()
	t.Cleanup(func() { kcancel(); kwg.Wait() })
	l := &load{}
	l.total.Store(180)
	startHPAController(t, ts, metricsAPI(client, l))
	return ctx, client, l
}

// An HPA on a Deployment scales it up when its pods use three and a half
// times their CPU target, holds the size while usage stays within the
// tolerance, and after the load drops scales down only once its
// scale-down window (2 s here) has passed.
func TestHPAScalesDeploymentUpAndDown(t *testing.T) {
	ctx, client, l := startHPACluster(t, "deployment", "replicaset")

	labels := map[string]string{"app": "web"}
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](2)}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 180% of the request on one pod, against 50%: ceil(3.6) = 4 pods,
	// each then at 45%, within the tolerance.
	hpaIs(ctx, t, client, "scaled up to 4", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return h.Status.DesiredReplicas == 4 && h.Status.CurrentReplicas == 4 && currentUtilization(h) == 45
	})
	runningPods(ctx, t, client, 4)
	h, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for typ, reason := range map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{
		autoscalingv2.AbleToScale: "ReadyForNewScale", autoscalingv2.ScalingActive: "ValidMetricFound", autoscalingv2.ScalingLimited: "DesiredWithinRange",
	} {
		if c := condition(h, typ); c == nil || c.Reason != reason {
			t.Errorf("condition %s: %+v, want reason %s", typ, c, reason)
		}
	}
	if h.Status.LastScaleTime == nil {
		t.Error("no lastScaleTime")
	}
	if h.Spec.Behavior.ScaleUp == nil || h.Spec.MinReplicas == nil || *h.Spec.MinReplicas != 1 {
		t.Errorf("defaults not applied: minReplicas %v behavior %+v", h.Spec.MinReplicas, h.Spec.Behavior)
	}

	// The load drops to 5% a pod: one pod is enough, after the window.
	dropped := time.Now()
	l.total.Store(20)
	hpaIs(ctx, t, client, "scaled down to 1", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return h.Status.DesiredReplicas == 1 && h.Status.CurrentReplicas == 1
	})
	if waited := time.Since(dropped); waited < 2*time.Second {
		t.Errorf("scaled down %v after the load dropped, within the 2 s window", waited)
	}
	d, err := client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 1 {
		t.Fatalf("deployment replicas %v: %v", d.Spec.Replicas, err)
	}

	var reasons []string
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=HorizontalPodAutoscaler,reason=SuccessfulRescale"})
		if err != nil {
			return false, err
		}
		reasons = reasons[:0]
		for _, e := range evs.Items {
			reasons = append(reasons, e.Message)
		}
		return len(reasons) == 2, nil
	}); err != nil {
		t.Fatalf("SuccessfulRescale events %q: %v", reasons, err)
	}
	joined := strings.Join(reasons, "\n")
	for _, want := range []string{"New size: 4; reason: cpu resource utilization (percentage of request) above target", "New size: 1; reason: All metrics below target"} {
		if !strings.Contains(joined, want) {
			t.Errorf("events %q lack %q", reasons, want)
		}
	}
}

func condition(h *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == typ {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

func currentUtilization(h *autoscalingv2.HorizontalPodAutoscaler) int32 {
	if len(h.Status.CurrentMetrics) == 0 || h.Status.CurrentMetrics[0].Resource == nil {
		return -1
	}
	return ptr.Deref(h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization, -1)
}

// hpaIs waits until the HPA web's status satisfies ok.
func hpaIs(ctx context.Context, t *testing.T, client kubernetes.Interface, what string, ok func(*autoscalingv2.HorizontalPodAutoscaler) bool) {
	t.Helper()
	hpaNamedIs(ctx, t, client, "web", what, ok)
}

// hpaNamedIs waits until the status of the HPA name satisfies ok.
func hpaNamedIs(ctx context.Context, t *testing.T, client kubernetes.Interface, name, what string, ok func(*autoscalingv2.HorizontalPodAutoscaler) bool) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		h, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = fmt.Sprintf("current %d desired %d utilization %d conditions %+v", h.Status.CurrentReplicas, h.Status.DesiredReplicas, currentUtilization(h), h.Status.Conditions)
		return ok(h), nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last: %s", what, err, last)
	}
}

// runningPods waits until n pods of the Deployment run.
func runningPods(ctx context.Context, t *testing.T, client kubernetes.Interface, n int) {
	t.Helper()
	got := -1
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{"app": "web"}.String()})
		if err != nil {
			return false, err
		}
		got = 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				got++
			}
		}
		return got == n, nil
	})
	if err != nil {
		t.Fatalf("%d running pods, want %d: %v", got, n, err)
	}
}

// HPAs on a ReplicaSet and on a StatefulSet scale them through their /scale
// subresources as the one on a Deployment does: each target's pods share
// the load given for its selector (180% of one pod's request against a 50%
// target: 4 pods), and the targets' spec.replicas follow.
func TestHPAScalesReplicaSetAndStatefulSet(t *testing.T) {
	ctx, client, _ := startHPACluster(t, "replicaset", "statefulset")

	template := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
		}
	}
	if _, err := client.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs"},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rs"}}, Template: template("rs")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ss"},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), ServiceName: "ss", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ss"}}, Template: template("ss")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, target := range []struct{ kind, name string }{{"ReplicaSet", "rs"}, {"StatefulSet", "ss"}} {
		if _, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: target.name},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: target.kind, Name: target.name},
				MaxReplicas:    10,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"rs", "ss"} {
		hpaNamedIs(ctx, t, client, name, name+" scaled up to 4", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
			return h.Status.DesiredReplicas == 4 && h.Status.CurrentReplicas == 4 && currentUtilization(h) == 45
		})
	}
	rs, err := client.AppsV1().ReplicaSets(ns).Get(ctx, "rs", metav1.GetOptions{})
	if err != nil || *rs.Spec.Replicas != 4 {
		t.Fatalf("ReplicaSet replicas %v: %v", rs.Spec.Replicas, err)
	}
	ss, err := client.AppsV1().StatefulSets(ns).Get(ctx, "ss", metav1.GetOptions{})
	if err != nil || *ss.Spec.Replicas != 4 {
		t.Fatalf("StatefulSet replicas %v: %v", ss.Spec.Replicas, err)
	}
}
