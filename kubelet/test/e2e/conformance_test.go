package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/namespaces"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// TestConformanceBehaviours checks, on one node, kubelet behaviours that
// upstream's conformance suite relies on: a finished pod's logs stay
// readable (across a kubelet restart) until the pod is deleted; lifecycle
// hooks (exec and httpGet postStart and preStop, a failing postStart, a
// postStart its pod's deletion cuts short);
// termination messages (the file, as a non-root user, and the log's end
// under FallbackToLogsOnError); emptyDir modes; service environment
// variables; activeDeadlineSeconds; subPathExpr checks; the Initialized
// condition's reason and message. Its subtests share one kubelet and run
// in order (the first restarts the kubelet).
func TestConformanceBehaviours(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	outer := t
	k := e.startKubelet(t)
	e.makeReady(t)

	done := imagePod("done", "busybox", corev1.RestartPolicyNever, "sh", "-c", "echo hello from done; echo oops")
	done = e.createPod(t, done)

	t.Run("finished pod keeps its containers and logs until deleted", func(t *testing.T) {
		var p *corev1.Pod
		poll(t, 60*time.Second, "pod done to succeed", func() (bool, string) {
			p = e.getPod(t, "done")
			return p.Status.Phase == corev1.PodSucceeded, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
		})
		api := e.apiClient(t, k, "apiserver-kubelet-client")
		logs := "/containerLogs/default/done/c"
		poll(t, 10*time.Second, "the finished pod's log", func() (bool, string) {
			code, body := api.get(t, logs)
			return code == http.StatusOK && body == "hello from done\noops\n", fmt.Sprintf("%d %q", code, body)
		})
		ids := e.podContainers(t, p.UID)
		if len(ids) != 1 {
			t.Fatalf("containers of the finished pod: %v, want its one exited container", ids)
		}
		// What it held is released: network namespace and pod cgroup.
		poll(t, 10*time.Second, "the finished pod's namespace and cgroup to go", func() (bool, string) {
			netns := filepath.Join(e.netnsDir, "skiff-"+string(p.UID))
			_, err := os.Stat(netns)
			cg := e.podCgroupDir("memory", "besteffort", p.UID)
			return errors.Is(err, os.ErrNotExist) && errors.Is(statErr(cg), os.ErrNotExist), fmt.Sprintf("netns: %v, cgroup %s: %v", err, cg, statErr(cg))
		})
		// A restarted kubelet adopts the finished pod: the log stays.
		k.stop()
		k = e.startKubelet(outer)
		poll(t, 30*time.Second, "the new kubelet to sync", func() (bool, string) { return k.cfg.Kubelet.Synced(), "" })
		api = e.apiClient(t, k, "apiserver-kubelet-client")
		if code, body := api.get(t, logs); code != http.StatusOK || body != "hello from done\noops\n" {
			t.Errorf("after a kubelet restart: %d %q", code, body)
		}
		if got := e.podContainers(t, p.UID); strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Errorf("containers after a kubelet restart: %v, want %v", got, ids)
		}
		if err := e.client.CoreV1().Pods("default").Delete(ctx, "done", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, 30*time.Second, "pod done to be gone", func() (bool, string) {
			_, err := e.client.CoreV1().Pods("default").Get(ctx, "done", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		// A finished pod is removed at once (grace period 0); the kubelet
		// then removes its containers and logs.
		poll(t, 30*time.Second, "pod done's containers to go", func() (bool, string) {
			left := e.podContainers(t, p.UID)
			return len(left) == 0, fmt.Sprint(left)
		})
		e.assertNothingLeft(t, p.UID, p.Status.PodIP, ids)
	})

	t.Run("lifecycle hooks", func(t *testing.T) {
		// A hostPath volume (where the exec hooks write) needs the
		// privileged Pod Security level.
		e.enforcePrivileged(t)
		var mu sync.Mutex
		var requests []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests = append(requests, r.URL.RequestURI())
			mu.Unlock()
		}))
		defer srv.Close()
		u, _ := url.Parse(srv.URL)
		port, _ := strconv.Atoi(u.Port())
		hostDir := t.TempDir()
		httpHook := func(msg string) *corev1.LifecycleHandler {
			return &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt(port), Path: "/echo?msg=" + msg}}
		}
		execHook := func(script string) *corev1.LifecycleHandler {
			return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", script}}}
		}
		hooks := imagePod("hooks", "busybox", corev1.RestartPolicyAlways, "sleep", "3600")
		hooks.Spec.TerminationGracePeriodSeconds = ptr.To[int64](10)
		// The httpGet hooks name the host: the kubelet sends them from
		// the node, to the test's server on loopback.
		hooks.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}}}
		hooks.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/host"}}
		hooks.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{
			PostStart: execHook("echo poststart > /host/poststart"),
			PreStop:   execHook("echo prestop > /host/prestop"),
		}
		web := hooks.Spec.Containers[0]
		web.Name, web.VolumeMounts = "web", nil
		web.Lifecycle = &corev1.Lifecycle{PostStart: httpHook("poststart"), PreStop: httpHook("prestop")}
		hooks.Spec.Containers = append(hooks.Spec.Containers, web)
		e.createPod(t, hooks)
		failing := imagePod("failing-hook", "busybox", corev1.RestartPolicyNever, "sleep", "3600")
		failing.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: execHook("exit 3")}
		e.createPod(t, failing)

		poll(t, 60*time.Second, "pod hooks to run with its postStart hooks done", func() (bool, string) {
			p := e.getPod(t, "hooks")
			_, err := os.Stat(filepath.Join(hostDir, "poststart"))
			mu.Lock()
			defer mu.Unlock()
			return p.Status.Phase == corev1.PodRunning && err == nil && slices.Contains(requests, "/echo?msg=poststart"),
				fmt.Sprintf("%s, exec hook: %v, requests %v", p.Status.Phase, err, requests)
		})
		poll(t, 60*time.Second, "the failing postStart hook to fail its pod", func() (bool, string) {
			p := e.getPod(t, "failing-hook")
			return p.Status.Phase == corev1.PodFailed, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
		})
		poll(t, 10*time.Second, "a FailedPostStartHook event", func() (bool, string) {
			evs, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, ev := range evs.Items {
				if ev.InvolvedObject.Name == "failing-hook" && ev.Reason == "FailedPostStartHook" && ev.Type == corev1.EventTypeWarning {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d events", len(evs.Items))
		})
		if err := e.client.CoreV1().Pods("default").Delete(ctx, "hooks", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, 30*time.Second, "pod hooks to be gone", func() (bool, string) {
			_, err := e.client.CoreV1().Pods("default").Get(ctx, "hooks", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		if b, err := os.ReadFile(filepath.Join(hostDir, "prestop")); err != nil || string(b) != "prestop\n" {
			t.Errorf("the exec preStop hook wrote %q, %v", b, err)
		}
		mu.Lock()
		if !slices.Contains(requests, "/echo?msg=prestop") {
			t.Errorf("requests = %v, want the httpGet preStop hook's", requests)
		}
		mu.Unlock()
	})

	t.Run("a pod deleted during its postStart hook", func(t *testing.T) {
		// As upstream's kubelet: the deletion cuts the hook (a sleep, an
		// exec that hangs) short instead of waiting ten minutes for it;
		// the container is killed within the grace period; the cut is no
		// FailedPostStartHook; the pod ends Failed, its container killed.
		cutSleep := imagePod("cut-sleep", "busybox", corev1.RestartPolicyAlways, "sleep", "3600")
		cutSleep.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 600}}}
		cutExec := imagePod("cut-exec", "busybox", corev1.RestartPolicyAlways, "sleep", "3600")
		cutExec.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 600"}}}}
		cctx := namespaces.WithNamespace(ctx, e.namespace)
		for _, p := range []*corev1.Pod{cutSleep, cutExec} {
			// A sleep hook must be shorter than the spec's grace period
			// (API validation); the deletion asks for 2 s.
			p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](601)
			p = e.createPod(t, p)
			// The hook is in flight once the container runs (and, for
			// the exec, once the exec's process runs beside it).
			minPids := map[string]int{"cut-sleep": 1, "cut-exec": 2}[p.Name]
			poll(t, 60*time.Second, "pod "+p.Name+"'s postStart hook to run", func() (bool, string) {
				ids := e.podContainers(t, p.UID)
				if len(ids) != 1 {
					return false, fmt.Sprintf("containers %v", ids)
				}
				c, err := e.ctd.Client.LoadContainer(cctx, ids[0])
				if err != nil {
					return false, err.Error()
				}
				task, err := c.Task(cctx, nil)
				if err != nil {
					return false, err.Error()
				}
				pids, err := task.Pids(cctx)
				return err == nil && len(pids) >= minPids, fmt.Sprintf("pids %v, %v", pids, err)
			})
			w, err := e.client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + p.Name, ResourceVersion: p.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			if err := e.client.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](2)}); err != nil {
				w.Stop()
				t.Fatal(err)
			}
			// Well within the hook's ten minutes: the grace period (2 s)
			// and the teardown.
			last := untilDeleted(t, w, 30*time.Second, "pod "+p.Name+" still there 30 s after its deletion (its postStart hook was waited for?)")
			w.Stop()
			t.Logf("pod %s gone %v after its deletion", p.Name, time.Since(began))
			if last == nil || last.Status.Phase != corev1.PodFailed || len(last.Status.ContainerStatuses) != 1 {
				t.Fatalf("pod %s's last status: %+v, want Failed", p.Name, last)
			}
			cs := last.Status.ContainerStatuses[0]
			if term := cs.State.Terminated; term == nil || term.ExitCode != 137 || cs.RestartCount != 0 {
				t.Errorf("pod %s's container's last status %+v, want killed (137) and never restarted", p.Name, cs)
			}
			evs, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(p.UID)})
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs.Items {
				if ev.Reason == "FailedPostStartHook" {
					t.Errorf("pod %s: a %s event for a hook its deletion cut short", p.Name, ev.Reason)
				}
			}
			poll(t, 30*time.Second, "pod "+p.Name+"'s containers to go", func() (bool, string) {
				left := e.podContainers(t, p.UID)
				return len(left) == 0, fmt.Sprint(left)
			})
		}
	})

	t.Run("a second deletion with a shorter grace period", func(t *testing.T) {
		// As upstream's kubelet: a pod being deleted with a long grace
		// period, deleted again with a shorter one, stops within the
		// shorter one. Its container (sleep as PID 1, which no SIGTERM
		// ends) would otherwise hold the pod for ten minutes.
		p := imagePod("regrace", "busybox", corev1.RestartPolicyAlways, "sleep", "3600")
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](600)
		p = e.createPod(t, p)
		poll(t, 60*time.Second, "pod regrace to run", func() (bool, string) {
			got := e.getPod(t, "regrace")
			return got.Status.Phase == corev1.PodRunning, string(got.Status.Phase)
		})
		if err := e.client.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The kubelet is stopping the container with the 600 s period.
		poll(t, 30*time.Second, "the kubelet to begin stopping pod regrace", func() (bool, string) {
			evs, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(p.UID)})
			if err != nil {
				return false, err.Error()
			}
			for _, ev := range evs.Items {
				if ev.Reason == "Killing" {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d events", len(evs.Items))
		})
		w, err := e.client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + p.Name, ResourceVersion: p.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		began := time.Now()
		if err := e.client.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}); err != nil {
			t.Fatal(err)
		}
		last := untilDeleted(t, w, 30*time.Second, "pod regrace still there 30 s after its deletion with a 1 s grace period")
		t.Logf("pod regrace gone %v after its second deletion", time.Since(began))
		if last == nil || last.Status.Phase != corev1.PodFailed || len(last.Status.ContainerStatuses) != 1 {
			t.Fatalf("pod regrace's last status: %+v, want Failed", last)
		}
		if term := last.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 137 {
			t.Errorf("pod regrace's container's last status %+v, want killed (137)", last.Status.ContainerStatuses[0])
		}
		poll(t, 30*time.Second, "pod regrace's containers to go", func() (bool, string) {
			left := e.podContainers(t, p.UID)
			return len(left) == 0, fmt.Sprint(left)
		})
	})

	t.Run("termination messages", func(t *testing.T) {
		msg := imagePod("messages", "busybox", corev1.RestartPolicyNever, "sh", "-c", "printf 'all done' > /dev/termination-log; exit 1")
		msg.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
		logs := msg.Spec.Containers[0]
		logs.Name, logs.Command = "logs", []string{"sh", "-c", "printf 'last words'; exit 2"}
		logs.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		msg.Spec.Containers = append(msg.Spec.Containers, logs)
		for i := range msg.Spec.Containers {
			// What the API server defaults.
			msg.Spec.Containers[i].TerminationMessagePath = corev1.TerminationMessagePathDefault
		}
		e.createPod(t, msg)
		var p *corev1.Pod
		poll(t, 60*time.Second, "pod messages to fail", func() (bool, string) {
			p = e.getPod(t, "messages")
			return p.Status.Phase == corev1.PodFailed, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
		})
		want := map[string]string{"c": "all done", "logs": "last words"}
		for _, cs := range p.Status.ContainerStatuses {
			if term := cs.State.Terminated; term == nil || term.Message != want[cs.Name] {
				t.Errorf("container %s: %+v, want message %q", cs.Name, cs.State, want[cs.Name])
			}
		}
	})

	t.Run("emptyDir is writable by any user", func(t *testing.T) {
		p := imagePod("scratch", "busybox", corev1.RestartPolicyNever, "sh", "-c",
			"stat -c '%a %u' /disk /mem && touch /disk/f /mem/f && grep ' /mem ' /proc/mounts | cut -d' ' -f3")
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
		p.Spec.Volumes = []corev1.Volume{
			{Name: "disk", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "disk", MountPath: "/disk"}, {Name: "mem", MountPath: "/mem"}}
		e.createPod(t, p)
		poll(t, 60*time.Second, "pod scratch to succeed", func() (bool, string) {
			p := e.getPod(t, "scratch")
			return p.Status.Phase == corev1.PodSucceeded, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
		})
		api := e.apiClient(t, k, "apiserver-kubelet-client")
		if code, body := api.get(t, "/containerLogs/default/scratch/c"); code != http.StatusOK || body != "777 0\n1777 0\ntmpfs\n" {
			t.Errorf("emptyDir modes and owners: %d %q, want 777 (disk) and 1777 (tmpfs), root's, and writable by user 1000", code, body)
		}
	})

	t.Run("service environment variables", func(t *testing.T) {
		mk := func(name, clusterIP string) {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
				ClusterIP: clusterIP, Selector: map[string]string{"app": name},
				Ports: []corev1.ServicePort{{Name: "http-port", Port: 8765, TargetPort: intstr.FromInt(8080)}},
			}}
			if _, err := e.client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		mk("fooservice", "")
		mk("headless", corev1.ClusterIPNone)
		foo, err := e.client.CoreV1().Services("default").Get(ctx, "fooservice", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		master, err := e.client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		env := func(name string, links bool) string {
			p := imagePod(name, "busybox", corev1.RestartPolicyNever, "sh", "-c", "env | grep -E '^(FOOSERVICE|HEADLESS|KUBERNETES)_' | sort")
			p.Spec.EnableServiceLinks = ptr.To(links)
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "FOOSERVICE_SERVICE_PORT_HTTP_PORT", Value: "mine"}}
			e.createPod(t, p)
			poll(t, 60*time.Second, "pod "+name+" to succeed", func() (bool, string) {
				p := e.getPod(t, name)
				return p.Status.Phase == corev1.PodSucceeded, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
			})
			code, body := e.apiClient(t, k, "apiserver-kubelet-client").get(t, "/containerLogs/default/"+name+"/c")
			if code != http.StatusOK {
				t.Fatalf("logs of %s: %d %s", name, code, body)
			}
			return body
		}
		ip, mip := foo.Spec.ClusterIP, master.Spec.ClusterIP
		mport := strconv.Itoa(int(master.Spec.Ports[0].Port))
		masterVars := fmt.Sprintf("KUBERNETES_PORT=tcp://%[1]s:%[2]s\nKUBERNETES_PORT_%[2]s_TCP=tcp://%[1]s:%[2]s\nKUBERNETES_PORT_%[2]s_TCP_ADDR=%[1]s\n"+
			"KUBERNETES_PORT_%[2]s_TCP_PORT=%[2]s\nKUBERNETES_PORT_%[2]s_TCP_PROTO=tcp\nKUBERNETES_SERVICE_HOST=%[1]s\nKUBERNETES_SERVICE_PORT=%[2]s\n"+
			"KUBERNETES_SERVICE_PORT_HTTPS=%[2]s\n", mip, mport)
		want := fmt.Sprintf("FOOSERVICE_PORT=tcp://%[1]s:8765\nFOOSERVICE_PORT_8765_TCP=tcp://%[1]s:8765\nFOOSERVICE_PORT_8765_TCP_ADDR=%[1]s\n"+
			"FOOSERVICE_PORT_8765_TCP_PORT=8765\nFOOSERVICE_PORT_8765_TCP_PROTO=tcp\nFOOSERVICE_SERVICE_HOST=%[1]s\nFOOSERVICE_SERVICE_PORT=8765\n"+
			"FOOSERVICE_SERVICE_PORT_HTTP_PORT=mine\n", ip) + masterVars
		if got := env("links", true); got != want {
			t.Errorf("with service links:\n%s\nwant\n%s", got, want)
		}
		if got := env("nolinks", false); got != "FOOSERVICE_SERVICE_PORT_HTTP_PORT=mine\n"+masterVars {
			t.Errorf("without service links:\n%s\nwant the kubernetes Service's only", got)
		}
	})

	t.Run("activeDeadlineSeconds", func(t *testing.T) {
		p := imagePod("deadline", "busybox", corev1.RestartPolicyAlways, "sh", "-c", "echo started; exec sleep 3600")
		p.Spec.ActiveDeadlineSeconds = ptr.To[int64](2)
		e.createPod(t, p)
		poll(t, 60*time.Second, "pod deadline to fail with DeadlineExceeded", func() (bool, string) {
			p = e.getPod(t, "deadline")
			return p.Status.Phase == corev1.PodFailed, fmt.Sprintf("%s %q %+v", p.Status.Phase, p.Status.Reason, p.Status.ContainerStatuses)
		})
		if p.Status.Reason != "DeadlineExceeded" || p.Status.Message != "Pod was active on the node longer than the specified deadline" {
			t.Errorf("status: %q %q", p.Status.Reason, p.Status.Message)
		}
		if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].Ready {
			t.Errorf("container statuses: %+v", cs)
		}
		if left := e.podContainers(t, p.UID); len(left) != 1 {
			t.Errorf("containers: %v, want the killed one kept", left)
		}
		ctx := namespaces.WithNamespace(ctx, e.namespace)
		tasks, err := e.ctd.Client.TaskService().List(ctx, &tasks.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks.Tasks {
			if slices.Contains(e.podContainers(t, p.UID), task.ID) {
				t.Errorf("the container's task is left: %s", task.ID)
			}
		}
		if code, body := e.apiClient(t, k, "apiserver-kubelet-client").get(t, "/containerLogs/default/deadline/c"); code != http.StatusOK || body != "started\n" {
			t.Errorf("log of the killed container: %d %q", code, body)
		}
	})

	t.Run("subPathExpr", func(t *testing.T) {
		mk := func(name, value string, cmd ...string) {
			p := imagePod(name, "busybox", corev1.RestartPolicyNever, cmd...)
			p.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			c := &p.Spec.Containers[0]
			c.Env = []corev1.EnvVar{{Name: "SUB", Value: value}}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/sub", SubPathExpr: "logs/$(SUB)"}, {Name: "work", MountPath: "/all"}}
			e.createPod(t, p)
		}
		mk("subpath-ok", "x", "sh", "-c", "echo hi > /sub/f && cat /all/logs/x/f")
		mk("subpath-up", "..", "true")
		mk("subpath-abs", "/../../etc", "true")
		poll(t, 60*time.Second, "pod subpath-ok to succeed", func() (bool, string) {
			p := e.getPod(t, "subpath-ok")
			return p.Status.Phase == corev1.PodSucceeded, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
		})
		for _, name := range []string{"subpath-up", "subpath-abs"} {
			poll(t, 30*time.Second, "pod "+name+" to fail with CreateContainerConfigError", func() (bool, string) {
				p := e.getPod(t, name)
				cs := p.Status.ContainerStatuses
				return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CreateContainerConfigError" &&
					strings.Contains(cs[0].State.Waiting.Message, "must not contain '..'"), fmt.Sprintf("%+v", cs)
			})
		}
	})

	t.Run("init container status details", func(t *testing.T) {
		p := imagePod("initfail", "busybox", corev1.RestartPolicyAlways, "sleep", "3600")
		p.Spec.InitContainers = []corev1.Container{
			{Name: "init1", Image: "busybox", Command: []string{"false"}},
			{Name: "init2", Image: "busybox", Command: []string{"true"}},
		}
		e.createPod(t, p)
		poll(t, 60*time.Second, "init1 to have failed twice", func() (bool, string) {
			p = e.getPod(t, "initfail")
			ics := p.Status.InitContainerStatuses
			return len(ics) == 2 && ics[0].RestartCount >= 1, fmt.Sprintf("%+v", ics)
		})
		var init corev1.PodCondition
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodInitialized {
				init = c
			}
		}
		if init.Status != corev1.ConditionFalse || init.Reason != "ContainersNotInitialized" || init.Message != "containers with incomplete status: [init1 init2]" {
			t.Errorf("Initialized = %+v", init)
		}
		if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Waiting == nil || cs[0].State.Waiting.Reason != "PodInitializing" {
			t.Errorf("app container statuses = %+v, want waiting PodInitializing", cs)
		}
		if p.Status.Phase != corev1.PodPending {
			t.Errorf("phase = %s, want Pending", p.Status.Phase)
		}
	})
}

// untilDeleted reads a watch of one pod until its DELETED event and
// returns the pod as last seen (nil if no event came before the watch
// closed); it fails the test with failure when that takes over timeout.
func untilDeleted(t *testing.T, w watch.Interface, timeout time.Duration, failure string) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return last
			}
			if got, isPod := ev.Object.(*corev1.Pod); isPod {
				last = got
			}
			if ev.Type == watch.Deleted {
				return last
			}
		case <-deadline:
			w.Stop()
			t.Fatal(failure)
		}
	}
}
