package e2e

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/component-base/tracing/tracingtest"
	cmapp "skiff.dev/controller-manager/app"
	kubeletapp "skiff.dev/kubelet/app"
	schedapp "skiff.dev/scheduler/app"
)

// TestTracing: with --tracing-endpoint on every daemon, a ReplicaSet's pod
// leaves its path in an OTLP collector: the API server's create span of
// the ReplicaSet in the client's trace, the controller manager's sync
// creating the pod (and the API server's span of that create, in the
// controller's trace), the scheduler's bind, and the kubelet's sandbox,
// pull, create and start, all naming the pod's uid, in that order.
func TestTracing(t *testing.T) {
	col := tracingtest.Start(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	endpoint := col.Endpoint()
	c := startClusterOpts(t, clusterOptions{
		apiserver:         func(o *server.Options) { o.Tracing.Endpoint = endpoint },
		controllerManager: func(o *cmapp.Options) { o.Tracing.Endpoint = endpoint },
		scheduler:         func(o *schedapp.Options) { o.Tracing.Endpoint = endpoint },
		kubelet:           func(o *kubeletapp.Options) { o.Tracing.Endpoint = endpoint },
	})
	ctx := context.Background()

	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	traced := kubernetes.NewForConfigOrDie(tracingtest.WithTraceparent(c.ts.AdminConfig, traceID, parentID))
	labels := map[string]string{"app": "traced"}
	rs, err := traced.AppsV1().ReplicaSets("default").Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "traced"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers:                    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"}}},
				},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := c.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=traced"})
		if err != nil || len(pods.Items) != 1 {
			return false, nil
		}
		pod = pods.Items[0]
		return pod.Status.Phase == corev1.PodRunning, nil
	}); err != nil {
		t.Fatalf("the ReplicaSet's pod is not Running: %v (last: %s %+v)", err, pod.Name, pod.Status)
	}
	uid := string(pod.UID)
	const spanWait = 30 * time.Second

	// The client's trace: the API server's span of the create, the child
	// of the client's traceparent.
	createRS := col.Wait(t, spanWait, "the API server's create of the ReplicaSet", tracingtest.And(
		tracingtest.Named("skiff-apiserver", "KubernetesAPI"), tracingtest.Attr("verb", "create"), tracingtest.Attr("resource", "replicasets"),
		func(s tracingtest.Span) bool { return s.TraceID == traceID }))
	if createRS.ParentSpanID != parentID || createRS.Attributes["code"] != "201" {
		t.Errorf("ReplicaSet create span %v: want the child of %s with code 201", createRS, parentID)
	}
	col.Wait(t, spanWait, "the etcd write of the ReplicaSet", tracingtest.And(tracingtest.Named("skiff-apiserver", "Create etcd3"),
		func(s tracingtest.Span) bool { return s.TraceID == traceID && s.ParentSpanID == createRS.SpanID }))

	// The controller manager's trace: its sync creates the pod, and the
	// API server's span of that create is in the same trace.
	createPod := col.Wait(t, spanWait, "the controller manager's Create pod", tracingtest.And(
		tracingtest.Named("skiff-controller-manager", "Create pod"), tracingtest.Attr("k8s.pod.uid", uid)))
	syncRS := col.Wait(t, spanWait, "the ReplicaSet sync that created the pod", func(s tracingtest.Span) bool {
		return s.Service == "skiff-controller-manager" && s.Name == "Sync ReplicaSet" && s.SpanID == createPod.ParentSpanID
	})
	if syncRS.Attributes["k8s.replicaset.uid"] != string(rs.UID) {
		t.Errorf("sync span %v: want the ReplicaSet's uid %s", syncRS, rs.UID)
	}
	servedPod := col.Wait(t, spanWait, "the API server's create of the pod, in the controller's trace", tracingtest.And(
		tracingtest.Named("skiff-apiserver", "KubernetesAPI"), tracingtest.Attr("verb", "create"), tracingtest.Attr("resource", "pods"),
		func(s tracingtest.Span) bool { return s.TraceID == createPod.TraceID }))

	// The scheduler's bind of the pod.
	bind := col.Wait(t, spanWait, "the scheduler's Bind", tracingtest.And(tracingtest.Named("skiff-scheduler", "Bind"), tracingtest.Attr("k8s.pod.uid", uid)))
	if bind.Attributes["k8s.node.name"] != nodeName {
		t.Errorf("bind span %v: want node %s", bind, nodeName)
	}

	// The kubelet's sync that started the pod, and its steps in order.
	var steps []tracingtest.Span
	for _, name := range []string{"RunPodSandbox", "PullImage", "CreateContainer", "StartContainer"} {
		name := name
		steps = append(steps, col.Wait(t, spanWait, "the kubelet's "+name, func(s tracingtest.Span) bool {
			if s.Service != "skiff-kubelet" || s.Name != name {
				return false
			}
			for _, p := range col.Spans() {
				if p.SpanID == s.ParentSpanID && p.Name == "SyncPod" && p.Attributes["k8s.pod.uid"] == uid {
					return true
				}
			}
			return false
		}))
	}
	if steps[0].Attributes["k8s.pod.uid"] != uid || steps[1].Attributes["image"] == "" || steps[2].Attributes["k8s.container.name"] != "c" {
		t.Errorf("kubelet spans %v", steps)
	}
	path := append([]tracingtest.Span{createRS, syncRS, servedPod, bind}, steps...)
	for i := 1; i < len(path); i++ {
		if path[i].Start.Before(path[i-1].Start) {
			t.Errorf("%s %q started %v, before %s %q at %v", path[i].Service, path[i].Name, path[i].Start,
				path[i-1].Service, path[i-1].Name, path[i-1].Start)
		}
	}
	for _, s := range path {
		t.Logf("%s %-16s %-28s %v", s.Start.Format("15:04:05.000000"), s.Service, s.Name, s.End.Sub(s.Start))
	}
}
