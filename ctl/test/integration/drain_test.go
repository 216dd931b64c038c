package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
	"skiff.dev/ctl/app"
)

const drainNS = "drain"

// waitFor polls cond until it holds or 30s pass.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, state, err := cond(ctx)
		last = state
		return ok, err
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last state: %s", what, err, last)
	}
}

// runPod does the scheduler's and the kubelet's part: binds the pod to
// node and reports it Running and Ready.
func runPod(t *testing.T, c kubernetes.Interface, pod *corev1.Pod, node string) {
	t.Helper()
	ctx := context.Background()
	if pod.Spec.NodeName == "" {
		err := c.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("binding %s: %v", pod.Name, err)
		}
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase = corev1.PodRunning
		cur.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		_, err = c.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("reporting %s Ready: %v", pod.Name, err)
	}
}

// podsOn lists the pods bound to node that are not being deleted.
func podsOn(ctx context.Context, c kubernetes.Interface, node string) ([]string, error) {
	l, err := c.CoreV1().Pods(drainNS).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names, nil
}

// kubectlRun runs the real kubectl and returns stdout and stderr apart.
func kubectlRun(t *testing.T, ts *testserver.TestServer, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(kubectlPath, append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// stderrOf is what skiffctl's main would print on stderr for r.
func stderrOf(r result) string {
	var b bytes.Buffer
	b.WriteString(r.errOut)
	if r.err != nil {
		app.PrintError(&b, r.err)
	}
	return b.String()
}

// cordon and uncordon set and clear spec.unschedulable, say so as
// kubectl does, and change nothing the second time.
func TestCordon(t *testing.T) {
	ts := testserver.Start(t, nil)
	c, ctx := ts.Client, context.Background()
	for _, n := range []string{"node-1", "node-2"} {
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"pool": "a"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	unschedulable := func(name string) bool {
		t.Helper()
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n.Spec.Unschedulable
	}
	steps := []struct {
		args []string
		want string
		node bool
	}{
		{[]string{"cordon", "node-1", "--dry-run=client"}, "node/node-1 cordoned (dry run)\n", false},
		{[]string{"cordon", "node-1", "--dry-run=server"}, "node/node-1 cordoned (server dry run)\n", false},
		{[]string{"cordon", "node-1"}, "node/node-1 cordoned\n", true},
		{[]string{"cordon", "node/node-1"}, "node/node-1 already cordoned\n", true},
		{[]string{"uncordon", "node-1"}, "node/node-1 uncordoned\n", false},
		{[]string{"uncordon", "node-1"}, "node/node-1 already uncordoned\n", false},
		{[]string{"cordon", "-l", "pool=a"}, "node/node-1 cordoned\nnode/node-2 cordoned\n", true},
		{[]string{"uncordon", "-l", "pool=a"}, "node/node-1 uncordoned\nnode/node-2 uncordoned\n", false},
	}
	for _, s := range steps {
		if out := must(t, ts, "", s.args...); out != s.want {
			t.Errorf("skiffctl %v = %q, want %q", s.args, out, s.want)
		}
		if got := unschedulable("node-1"); got != s.node {
			t.Errorf("after skiffctl %v node-1 unschedulable = %v, want %v", s.args, got, s.node)
		}
	}
	r := skiffctl(t, ts, "", "cordon", "node-9")
	if r.err == nil || !strings.Contains(stderrOf(r), `nodes "node-9" not found`) {
		t.Errorf("cordon of a missing node: %v %q", r.err, stderrOf(r))
	}
	if r := skiffctl(t, ts, "", "cordon", "node-1", "-l", "pool=a"); r.err == nil || !strings.Contains(r.err.Error(), "cannot specify both a node name and a --selector option") {
		t.Errorf("a name and a selector: %v", r.err)
	}

	if _, err := os.Stat(kubectlPath); err != nil {
		return
	}
	// A bare --dry-run is a deprecated client dry run; a bad value is
	// refused with kubectl's words.
	r = skiffctl(t, ts, "", "cordon", "node-1", "--dry-run")
	if kout, _, err := kubectlRun(t, ts, "cordon", "node-1", "--dry-run"); r.err != nil || err != nil || r.out != kout || r.out != "node/node-1 cordoned (dry run)\n" {
		t.Errorf("a bare --dry-run: skiffctl %q %v, kubectl %q %v", r.out, r.err, kout, err)
	}
	r = skiffctl(t, ts, "", "cordon", "node-1", "--dry-run=maybe")
	if _, errOut, err := kubectlRun(t, ts, "cordon", "node-1", "--dry-run=maybe"); r.err == nil || err == nil || stderrOf(r) != errOut {
		t.Errorf("--dry-run=maybe: skiffctl %q, kubectl %q (%v)", stderrOf(r), errOut, err)
	}
	// The same steps with kubectl, on the same states.
	for _, s := range steps {
		if out, errOut, err := kubectlRun(t, ts, s.args...); err != nil || out != s.want {
			t.Errorf("kubectl %v = %q (%v %s), skiffctl printed %q", s.args, out, err, errOut, s.want)
		}
	}
}

// drain cordons the node and evicts its pods through pods/eviction with
// the real disruption and ReplicaSet controllers: it refuses DaemonSet
// and unmanaged pods unless told, leaves DaemonSet pods with
// --ignore-daemonsets, is held by a PodDisruptionBudget until --timeout,
// and proceeds once a replacement replica elsewhere is Ready.
func TestDrain(t *testing.T) {
	ts := testserver.Start(t, nil)
	cmtest.Start(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"replicaset", "disruption"} })
	c, ctx := ts.Client, context.Background()
	for _, n := range []string{"node-1", "node-2"} {
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: drainNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ServiceAccounts(drainNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	containers := []corev1.Container{{Name: "c", Image: "registry.local/pause:3.10"}}
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: containers}},
		},
	}
	if _, err := c.AppsV1().ReplicaSets(drainNS).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	if _, err := c.PolicyV1().PodDisruptionBudgets(drainNS).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var web []corev1.Pod
	waitFor(t, "the ReplicaSet's two pods", func(ctx context.Context) (bool, string, error) {
		l, err := c.CoreV1().Pods(drainNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, "", err
		}
		web = l.Items
		return len(web) == 2, fmt.Sprintf("%d pods", len(web)), nil
	})
	for i := range web {
		runPod(t, c, &web[i], "node-1")
	}
	// A DaemonSet's pod (the DaemonSet controller is not running: the pod
	// is made here with the DaemonSet as its controller) and a bare pod.
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}}, Spec: corev1.PodSpec{Containers: containers}},
		},
	}
	ds, err := c.AppsV1().DaemonSets(drainNS).Create(ctx, ds, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "agent-1", Labels: map[string]string{"app": "agent"}, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: ds.UID, Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: containers}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bare"}, Spec: corev1.PodSpec{NodeName: "node-1", Containers: containers}},
	} {
		created, err := c.CoreV1().Pods(drainNS).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		runPod(t, c, created, "node-1")
	}
	waitFor(t, "the budget to allow no disruption", func(ctx context.Context) (bool, string, error) {
		p, err := c.PolicyV1().PodDisruptionBudgets(drainNS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 2 && p.Status.DisruptionsAllowed == 0,
			fmt.Sprintf("%+v", p.Status), nil
	})

	// Refused: a DaemonSet pod and a pod with no controller. The node is
	// cordoned all the same, as kubectl does.
	refusal := func(r result) {
		t.Helper()
		if r.err == nil {
			t.Fatalf("drain with a DaemonSet pod and a bare pod succeeded:\n%s", r.out)
		}
		wantContains(t, "refusal", stderrOf(r),
			`error: unable to drain node "node-1" due to error: [cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): drain/agent-1, cannot delete cannot delete Pods that declare no controller (use --force to override): drain/bare], continuing command...`,
			"There are pending nodes to be drained:\n node-1\n")
		if r.out != "node/node-1 cordoned\n" {
			t.Errorf("stdout = %q", r.out)
		}
		if names, _ := podsOn(ctx, c, "node-1"); len(names) != 4 {
			t.Errorf("a refused drain removed pods: %v left", names)
		}
	}
	r := skiffctl(t, ts, "", "drain", "node-1", "--grace-period=0")
	refusal(r)
	if _, err := os.Stat(kubectlPath); err == nil {
		must(t, ts, "", "uncordon", "node-1")
		out, errOut, err := kubectlRun(t, ts, "drain", "node-1", "--grace-period=0")
		if err == nil || out != r.out || drainErrors(errOut) != drainErrors(stderrOf(r)) {
			t.Errorf("kubectl drain refused differently (%v):\nstdout %q\nstderr %q\nskiffctl:\nstdout %q\nstderr %q", err, out, errOut, r.out, stderrOf(r))
		}
	}

	// Client dry run: what would go, nothing sent; compared with kubectl.
	dry := []string{"drain", "node-1", "--ignore-daemonsets", "--force", "--dry-run=client"}
	r = skiffctl(t, ts, "", dry...)
	if r.err != nil {
		t.Fatalf("dry run: %v\n%s", r.err, stderrOf(r))
	}
	wantContains(t, "dry run", r.out, "node/node-1 already cordoned (dry run)\n", "evicting pod drain/bare (dry run)\n", "node/node-1 drained (dry run)\n")
	if strings.Contains(r.out, "agent-1") {
		t.Errorf("the DaemonSet pod would be evicted: %s", r.out)
	}
	wantContains(t, "dry-run warning", r.errOut, "Warning: deleting Pods that declare no controller: drain/bare; ignoring DaemonSet-managed Pods: drain/agent-1\n")
	if _, err := os.Stat(kubectlPath); err == nil {
		out, errOut, err := kubectlRun(t, ts, dry...)
		if err != nil || sortedLines(out) != sortedLines(r.out) || sortedWarning(errOut) != sortedWarning(r.errOut) {
			t.Errorf("kubectl's dry run differs (%v):\nstdout %q\nstderr %q\nskiffctl:\nstdout %q\nstderr %q", err, out, errOut, r.out, r.errOut)
		}
	}

	// The budget (minAvailable 2 of 2) holds the web pods until --timeout;
	// the bare pod, in no budget, goes.
	start := time.Now()
	r = skiffctl(t, ts, "", "drain", "node-1", "--ignore-daemonsets", "--force", "--grace-period=0", "--timeout=2s")
	if r.err == nil {
		t.Fatalf("drain under a budget that allows nothing succeeded:\n%s", r.out)
	}
	// The timeout ends drain although the budget never allows the
	// eviction (the bound is loose for a loaded machine).
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("a 2s timeout took %v", d)
	}
	wantContains(t, "timeout stdout", r.out, "evicting pod drain/bare\n", "pod/bare evicted\n", "evicting pod drain/"+web[0].Name+"\n")
	wantContains(t, "timeout stderr", stderrOf(r),
		fmt.Sprintf(`error when evicting pods/%q -n "drain" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`, web[0].Name),
		fmt.Sprintf(`error when evicting pods/%q -n "drain": global timeout reached: 2s`, web[1].Name),
		`There are pending pods in node "node-1" when an error occurred:`, "pod/"+web[0].Name+"\n",
		"There are pending nodes to be drained:\n node-1\n")
	names, _ := podsOn(ctx, c, "node-1")
	if len(names) != 3 {
		t.Fatalf("after the timeout node-1 has %v, want the two web pods and agent-1", names)
	}

	// Allow one disruption: drain evicts one web pod, retries the other
	// while its replacement is not Ready, and finishes once it is.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.PolicyV1().PodDisruptionBudgets(drainNS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.MinAvailable = ptr.To(intstr.FromInt32(1))
		_, err = c.PolicyV1().PodDisruptionBudgets(drainNS).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the budget to allow one disruption", func(ctx context.Context) (bool, string, error) {
		p, err := c.PolicyV1().PodDisruptionBudgets(drainNS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1, fmt.Sprintf("%+v", p.Status), nil
	})
	done := make(chan result, 1)
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	go func() {
		done <- skiffctlCtx(dctx, ts, "", "drain", "node-1", "--ignore-daemonsets", "--grace-period=0", "--timeout=45s")
	}()
	// One web pod is evicted, the other stays: the budget holds it.
	var replacement *corev1.Pod
	waitFor(t, "one web pod evicted and a replacement made", func(ctx context.Context) (bool, string, error) {
		l, err := c.CoreV1().Pods(drainNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, "", err
		}
		replacement = nil
		var state []string
		for i, p := range l.Items {
			state = append(state, p.Name+"@"+p.Spec.NodeName)
			if p.Spec.NodeName == "" {
				replacement = &l.Items[i]
			}
		}
		return replacement != nil && len(l.Items) == 2, strings.Join(state, " "), nil
	})
	select {
	case r := <-done:
		t.Fatalf("drain finished while the budget allowed nothing: %v\n%s\n%s", r.err, r.out, stderrOf(r))
	default:
	}
	if names, _ := podsOn(ctx, c, "node-1"); len(names) != 2 {
		t.Errorf("while the replacement is not Ready node-1 has %v, want one web pod and agent-1", names)
	}
	runPod(t, c, replacement, "node-2")
	select {
	case r = <-done:
	case <-dctx.Done():
		t.Fatal("drain did not finish once the replacement was Ready")
	}
	if r.err != nil {
		t.Fatalf("drain: %v\n%s\n%s", r.err, r.out, stderrOf(r))
	}
	wantContains(t, "drain stdout", r.out, "node/node-1 already cordoned\n", "node/node-1 drained\n")
	if n := strings.Count(r.out, " evicted\n"); n != 2 {
		t.Errorf("%d pods reported evicted, want 2:\n%s", n, r.out)
	}
	wantContains(t, "drain stderr", r.errOut, "Warning: ignoring DaemonSet-managed Pods: drain/agent-1\n", "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.")
	if names, _ := podsOn(ctx, c, "node-1"); len(names) != 1 || names[0] != "agent-1" {
		t.Errorf("after drain node-1 has %v, want agent-1 only", names)
	}
	if n, _ := c.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{}); !n.Spec.Unschedulable {
		t.Error("node-1 is not cordoned after drain")
	}
}

// sortedLines sorts s's lines: concurrent evictions print in any order.
func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// sortedWarning sorts the parts of kubectl's warning line, whose order
// comes from a Go map.
func sortedWarning(s string) string {
	parts := strings.Split(strings.TrimSpace(strings.TrimPrefix(s, "Warning: ")), "; ")
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// drainErrors is a refused drain's stderr with its errors in one order:
// kubectl gathers them in a map (kubectl/pkg/drain's PodDeleteList.errors),
// so it prints them in any order, within the brackets and line by line.
func drainErrors(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		a, b := strings.Index(l, "["), strings.LastIndex(l, "]")
		if a < 0 || b < a {
			continue
		}
		items := strings.Split(l[a+1:b], ", cannot delete ")
		for j := 1; j < len(items); j++ {
			items[j] = "cannot delete " + items[j]
		}
		slices.Sort(items)
		lines[i] = l[:a+1] + strings.Join(items, ", ") + l[b:]
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
