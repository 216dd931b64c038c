package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func testPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func TestPodGracefulDeletionAndBinding(t *testing.T) {
	ts := start(t, nil)
	pods := ts.Client.CoreV1().Pods("default")

	// An unscheduled pod is deleted at once.
	if _, err := pods.Create(ctx(t), testPod("unscheduled", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx(t), "unscheduled", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx(t), "unscheduled", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unscheduled pod after delete: %v, want NotFound", err)
	}

	// Binding assigns the node once; a second binding conflicts.
	if _, err := pods.Create(ctx(t), testPod("bound", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "bound"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := pods.Bind(ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := pods.Get(ctx(t), "bound", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "node-1" || len(pod.Status.Conditions) != 1 || pod.Status.Conditions[0].Type != corev1.PodScheduled {
		t.Errorf("after binding: node %q conditions %+v", pod.Spec.NodeName, pod.Status.Conditions)
	}
	b.Target.Name = "node-2"
	if err := pods.Bind(ctx(t), b, metav1.CreateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("second binding: %v, want 409", err)
	}

	// A scheduled pod is only marked: the kubelet finishes the deletion.
	if err := pods.Delete(ctx(t), "bound", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err = pods.Get(ctx(t), "bound", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("scheduled pod vanished before its grace period: %v", err)
	}
	if pod.DeletionTimestamp == nil || pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds != 30 {
		t.Errorf("graceful deletion: deletionTimestamp %v grace %v", pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds)
	}
	// The kubelet's final delete, with grace 0 and the pod's UID.
	if err := pods.Delete(ctx(t), "bound", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx(t), "bound", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod after final delete: %v", err)
	}
	// Precondition on a wrong UID is a conflict.
	if _, err := pods.Create(ctx(t), testPod("uid", "node-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = pods.Delete(ctx(t), "uid", metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions("not-the-uid")})
	if !apierrors.IsConflict(err) {
		t.Errorf("delete with a wrong UID: %v, want 409", err)
	}
}

func TestFinalizersAndPropagationPolicy(t *testing.T) {
	ts := start(t, nil)
	cms := ts.Client.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx(t), "guarded", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err = cms.Get(ctx(t), "guarded", metav1.GetOptions{})
	if err != nil || cm.DeletionTimestamp == nil {
		t.Fatalf("object with a finalizer: %v %v", err, cm)
	}
	// No new finalizers while being deleted.
	cm.Finalizers = append(cm.Finalizers, "example.com/other")
	if _, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("adding a finalizer during deletion: %v, want 422", err)
	}
	cm, _ = cms.Get(ctx(t), "guarded", metav1.GetOptions{})
	cm.Finalizers = nil
	if _, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx(t), "guarded", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("removing the last finalizer did not delete: %v", err)
	}

	// propagationPolicy is recorded as the garbage collector's finalizer.
	rss := ts.Client.AppsV1().ReplicaSets("default")
	for _, tc := range []struct {
		policy metav1.DeletionPropagation
		want   string
	}{{metav1.DeletePropagationForeground, metav1.FinalizerDeleteDependents}, {metav1.DeletePropagationOrphan, metav1.FinalizerOrphanDependents}} {
		name := strings.ToLower(string(tc.policy))
		if _, err := rss.Create(ctx(t), testReplicaSet(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := rss.Delete(ctx(t), name, metav1.DeleteOptions{PropagationPolicy: &tc.policy}); err != nil {
			t.Fatal(err)
		}
		rs, err := rss.Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.policy, err)
		}
		if rs.DeletionTimestamp == nil || len(rs.Finalizers) != 1 || rs.Finalizers[0] != tc.want {
			t.Errorf("%s: finalizers %v deletionTimestamp %v", tc.policy, rs.Finalizers, rs.DeletionTimestamp)
		}
	}
	// Background: gone at once.
	bg := metav1.DeletePropagationBackground
	if _, err := rss.Create(ctx(t), testReplicaSet("bg"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rss.Delete(ctx(t), "bg", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	if _, err := rss.Get(ctx(t), "bg", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("background delete: %v", err)
	}
}

func testReplicaSet(name string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

func TestStatusAndScaleSubresources(t *testing.T) {
	ts := start(t, nil)
	rss := ts.Client.AppsV1().ReplicaSets("default")
	rs, err := rss.Create(ctx(t), testReplicaSet("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The main endpoint ignores status; the status endpoint ignores spec.
	rs.Status.Replicas = 9
	rs.Spec.Replicas = ptr.To[int32](3)
	rs, err = rss.Update(ctx(t), rs, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Status.Replicas != 0 || *rs.Spec.Replicas != 3 || rs.Generation != 2 {
		t.Errorf("main update: status %d spec %d generation %d", rs.Status.Replicas, *rs.Spec.Replicas, rs.Generation)
	}
	rs.Status.Replicas = 3
	rs.Status.ObservedGeneration = 2
	rs.Spec.Replicas = ptr.To[int32](100)
	rs, err = rss.UpdateStatus(ctx(t), rs, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Status.Replicas != 3 || *rs.Spec.Replicas != 3 || rs.Generation != 2 {
		t.Errorf("status update: status %d spec %d generation %d", rs.Status.Replicas, *rs.Spec.Replicas, rs.Generation)
	}

	sc, err := rss.GetScale(ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Spec.Replicas != 3 || sc.Status.Replicas != 3 || sc.Status.Selector != "app=web" {
		t.Errorf("scale = %+v", sc)
	}
	sc.Spec.Replicas = 5
	if _, err := rss.UpdateScale(ctx(t), "web", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A stale scale is a conflict.
	sc.Spec.Replicas = 6
	if _, err := rss.UpdateScale(ctx(t), "web", sc, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale scale update: %v, want 409", err)
	}
	if _, err := rss.Patch(ctx(t), "web", types.MergePatchType, []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	rs, _ = rss.Get(ctx(t), "web", metav1.GetOptions{})
	if *rs.Spec.Replicas != 7 {
		t.Errorf("replicas after scale patch = %d, want 7", *rs.Spec.Replicas)
	}
	_, err = ts.Client.AppsV1().Deployments("default").UpdateScale(ctx(t), "missing", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "missing"}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}, metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("scale of a missing deployment: %v, want 404", err)
	}
}

func TestServiceAllocation(t *testing.T) {
	ts := start(t, nil)
	svcs := ts.Client.CoreV1().Services("default")
	svc := func(name string, typ corev1.ServiceType, ip string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
			Type: typ, ClusterIP: ip, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Port: 80}},
		}}
	}
	seen := map[string]bool{"10.96.0.1": true}
	for i := 0; i < 20; i++ {
		s, err := svcs.Create(ctx(t), svc(fmt.Sprintf("s%d", i), corev1.ServiceTypeNodePort, ""), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if seen[s.Spec.ClusterIP] || !strings.HasPrefix(s.Spec.ClusterIP, "10.96.") {
			t.Errorf("cluster IP %s reused or outside 10.96.0.0/16", s.Spec.ClusterIP)
		}
		seen[s.Spec.ClusterIP] = true
		if np := s.Spec.Ports[0].NodePort; np < 30000 || np > 32767 {
			t.Errorf("nodePort %d outside 30000-32767", np)
		}
		if s.Spec.Ports[0].TargetPort.IntValue() != 80 || s.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
			t.Errorf("port defaults: %+v", s.Spec.Ports[0])
		}
	}
	// A requested IP that is taken is rejected and nothing is stored.
	taken := ""
	for ip := range seen {
		if ip != "10.96.0.1" {
			taken = ip
			break
		}
	}
	_, err := svcs.Create(ctx(t), svc("dup", corev1.ServiceTypeClusterIP, taken), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already allocated") {
		t.Errorf("taken IP: %v, want 422 already allocated", err)
	}
	// Deleting releases the IP for reuse.
	s0, _ := svcs.Get(ctx(t), "s0", metav1.GetOptions{})
	if err := svcs.Delete(ctx(t), "s0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx(t), svc("reuse", corev1.ServiceTypeClusterIP, s0.Spec.ClusterIP), metav1.CreateOptions{}); err != nil {
		t.Errorf("reusing a released IP: %v", err)
	}
	// Headless services get no IP; an update keeps the allocated one.
	h, err := svcs.Create(ctx(t), svc("headless", corev1.ServiceTypeClusterIP, "None"), metav1.CreateOptions{})
	if err != nil || h.Spec.ClusterIP != "None" {
		t.Errorf("headless: %v %v", err, h)
	}
	s1, _ := svcs.Get(ctx(t), "s1", metav1.GetOptions{})
	upd := s1.DeepCopy()
	upd.Spec.ClusterIP, upd.Spec.ClusterIPs = "", nil
	upd.Labels = map[string]string{"x": "y"}
	got, err := svcs.Update(ctx(t), upd, metav1.UpdateOptions{})
	if err != nil || got.Spec.ClusterIP != s1.Spec.ClusterIP || got.Spec.Ports[0].NodePort != s1.Spec.Ports[0].NodePort {
		t.Errorf("update without clusterIP: %v %+v", err, got)
	}
}

func TestNamespaceDeletionAndDryRun(t *testing.T) {
	ts := start(t, nil)
	nss := ts.Client.CoreV1().Namespaces()
	ns, err := nss.Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 || ns.Labels["kubernetes.io/metadata.name"] != "team-a" {
		t.Errorf("new namespace: %+v %+v %v", ns.Status, ns.Spec, ns.Labels)
	}
	if err := nss.Delete(ctx(t), "team-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err = nss.Get(ctx(t), "team-a", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("deleted namespace: %v %+v", err, ns)
	}
	// The namespace controller's last step: clearing spec.finalizers removes it.
	ns.Spec.Finalizers = nil
	if _, err := nss.Finalize(ctx(t), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := nss.Get(ctx(t), "team-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("finalized namespace: %v", err)
	}

	// dryRun=All validates and answers but stores nothing.
	cms := ts.Client.CoreV1().ConfigMaps("default")
	out, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || out.Name != "dry" {
		t.Fatalf("dry-run create: %v", err)
	}
	if _, err := cms.Get(ctx(t), "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run create stored the object: %v", err)
	}
	code, body := raw(t, ts, http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=Bogus", "application/json", []byte(`{"metadata":{"name":"x"}}`))
	if code != http.StatusBadRequest {
		t.Errorf("dryRun=Bogus: %d %s", code, body)
	}

	// deletecollection with a selector.
	for i := 0; i < 4; i++ {
		if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Labels: map[string]string{"del": fmt.Sprint(i%2 == 0)}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cms.DeleteCollection(ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "del=true"}); err != nil {
		t.Fatal(err)
	}
	left, _ := cms.List(ctx(t), metav1.ListOptions{LabelSelector: "del"})
	if len(left.Items) != 2 {
		t.Errorf("after deletecollection %d left, want 2", len(left.Items))
	}
	_ = time.Second
}

func TestNodeRegistersWithStatus(t *testing.T) {
	ts := start(t, nil)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}}
	got, err := ts.Client.CoreV1().Nodes().Create(ctx(t), node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := got.Status.Allocatable[corev1.ResourceCPU]; q.String() != "2" || len(got.Status.Conditions) != 1 {
		t.Errorf("a node's status on create was dropped: %+v", got.Status)
	}
	// A later update through the main endpoint still cannot change status.
	got.Status.Conditions = nil
	got.Labels = map[string]string{"a": "b"}
	upd, err := ts.Client.CoreV1().Nodes().Update(ctx(t), got, metav1.UpdateOptions{})
	if err != nil || len(upd.Status.Conditions) != 1 {
		t.Errorf("main-endpoint update changed a node's status: %v %+v", err, upd.Status)
	}
}

// TestLegacyBindings: a Binding posted to core v1's bindings resource binds
// the pod it names, as the pod's binding subresource does (upstream's
// LegacyBindingREST, which client libraries' create_namespaced_binding and
// older custom schedulers use); the scheduler's role may, a user without it
// may not; discovery lists it create-only.
func TestLegacyBindings(t *testing.T) {
	ts := start(t, nil)
	pods := ts.Client.CoreV1().Pods("default")
	post := func(c *kubernetes.Clientset, body string) (int, string) {
		res := c.CoreV1().RESTClient().Post().Namespace("default").Resource("bindings").Body([]byte(body)).Do(ctx(t))
		var code int
		res.StatusCode(&code)
		raw, _ := res.Raw()
		return code, string(raw)
	}
	binding := func(pod, node string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":%q},"target":{"kind":"Node","name":%q}}`, pod, node)
	}
	if _, err := pods.Create(ctx(t), testPod("legacy", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scheduler := clientAs(t, ts, "system:kube-scheduler")
	if code, body := post(scheduler, binding("legacy", "node-1")); code != 201 || !strings.Contains(body, `"status":"Success"`) {
		t.Fatalf("the scheduler's binding: %d %s", code, body)
	}
	pod, err := pods.Get(ctx(t), "legacy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "node-1" || len(pod.Status.Conditions) != 1 || pod.Status.Conditions[0].Type != corev1.PodScheduled {
		t.Errorf("after binding: node %q conditions %+v", pod.Spec.NodeName, pod.Status.Conditions)
	}
	for _, tc := range []struct {
		name   string
		client *kubernetes.Clientset
		body   string
		code   int
		want   string
	}{
		{"bound already", scheduler, binding("legacy", "node-2"), 409, `"reason":"Conflict"`},
		{"no such pod", scheduler, binding("missing", "node-1"), 404, `pods \"missing\" not found`},
		{"no name", scheduler, binding("", "node-1"), 422, `"field":"metadata.name"`},
		{"no node", scheduler, `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"legacy"}}`, 422, `"field":"target.name"`},
		{"a user without the role", clientAs(t, ts, "alice"), binding("legacy", "node-1"), 403, `cannot create resource \"bindings\" in API group \"\" in the namespace \"default\"`},
	} {
		if code, body := post(tc.client, tc.body); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, code, body, tc.code, tc.want)
		}
	}
	var code int
	ts.Client.CoreV1().RESTClient().Get().Namespace("default").Resource("bindings").Do(ctx(t)).StatusCode(&code)
	if code != 405 {
		t.Errorf("GET bindings: %d, want 405", code)
	}
	if r := discovered(t, ts, "v1", "bindings"); r.Kind != "Binding" || !r.Namespaced || strings.Join(r.Verbs, ",") != "create" {
		t.Errorf("discovery of v1 does not list bindings as a namespaced create-only Binding: %+v", r)
	}
}
