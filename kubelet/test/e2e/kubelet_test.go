package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/namespaces"
	"golang.org/x/sys/unix"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/kubelet/app"
	"skiff.dev/kubelet/pkg/cm"
	"skiff.dev/kubelet/pkg/pod"
)

const nodeName = "node-1"

// env is one node: a containerd, a registry with busybox, an API server and
// the kubelet's options.
type env struct {
	ctd       *Containerd
	registry  string
	ts        *testserver.TestServer
	client    kubernetes.Interface
	rootDir   string
	netnsDir  string
	bridge    string
	namespace string
	podCIDR   string
	regFile   string
	// logDriver, when set, is the kubelet's --log-driver (else the test
	// binary itself, see TestMain).
	logDriver string
	// tlsCert and tlsKey, when set, are the kubelet's serving certificate
	// (else a self-signed one).
	tlsCert, tlsKey string
	// customize, when set, changes the kubelet's options last.
	customize func(*app.Options)
}

func setup(t *testing.T) *env { return setupWith(t, nil) }

// setupWith is setup with the API server's options changed by customize.
func setupWith(t *testing.T, customize func(*server.Options)) *env {
	requireTools(t)
	e := &env{
		bridge:    "skt" + randHex(3),
		namespace: "skiff-e2e-" + randHex(3),
		podCIDR:   fmt.Sprintf("10.244.%d.0/24", 100+rand.IntN(150)),
	}
	e.ctd = startContainerd(t)
	e.registry = startRegistry(t)
	layout := buildBusyboxImage(t)
	pushImage(t, layout, e.registry, "library/busybox")
	e.ts = testserver.Start(t, customize)
	e.client = e.ts.Client

	dir, err := os.MkdirTemp("", "skkl")
	if err != nil {
		t.Fatal(err)
	}
	e.rootDir = filepath.Join(dir, "root")
	e.netnsDir = filepath.Join(dir, "netns")
	e.regFile = filepath.Join(dir, "registries.yaml")
	if err := os.WriteFile(e.regFile, []byte(fmt.Sprintf("mirrors:\n  docker.io:\n    endpoint:\n      - \"http://%s\"\n", e.registry)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The kubelet's network leftovers: the bridge, namespaces still
		// pinned (only after a failure), then the directories.
		_ = exec.Command("ip", "link", "del", e.bridge).Run()
		unmountUnder(t, dir)
		_ = os.RemoveAll(dir)
	})
	addBlackhole(t)
	return e
}

// addBlackhole makes sure nothing for the cluster CIDR leaves the machine
// by a default route: the node's /24 on the bridge is more specific.
func addBlackhole(t *testing.T) {
	out, _ := exec.Command("ip", "route", "show", "10.244.0.0/16").CombinedOutput()
	if strings.Contains(string(out), "10.244.0.0/16") {
		return
	}
	if err := exec.Command("ip", "route", "add", "blackhole", "10.244.0.0/16").Run(); err != nil {
		t.Logf("adding a blackhole route for 10.244.0.0/16: %v", err)
		return
	}
	t.Cleanup(func() { _ = exec.Command("ip", "route", "del", "blackhole", "10.244.0.0/16").Run() })
}

func (e *env) options() *app.Options {
	o := app.NewOptions()
	o.Kubeconfig = filepath.Join(e.ts.Dir, "kubelet-"+nodeName+".kubeconfig")
	o.NodeName = nodeName
	o.NodeIP = "127.0.0.1"
	o.ContainerdAddress = e.ctd.Address
	o.ContainerdNamespace = e.namespace
	o.RootDir = e.rootDir
	o.NetNSDir = e.netnsDir
	o.BridgeName = e.bridge
	// Its own cgroup root, which the containerd harness removes.
	o.CgroupRoot = "/" + e.namespace
	o.RegistriesConfig = e.regFile
	o.DisableDefaultRegistryEndpoint = true
	o.Address = "127.0.0.1"
	o.Port = 0
	o.NodeStatusUpdateFrequency = time.Second
	o.SyncFrequency = 300 * time.Millisecond
	o.ClientCAFile = filepath.Join(e.ts.PKIDir, "ca.crt")
	if e.logDriver != "" {
		o.LogDriver = e.logDriver
	}
	o.TLSCertFile, o.TLSKeyFile = e.tlsCert, e.tlsKey
	// Only the memory threshold: the tests must not depend on how full
	// this machine's disk is (the defaults would put a nearly full disk
	// under DiskPressure and refuse every pod).
	o.Eviction.Hard = "memory.available<100Mi"
	o.ContainerdRoot = e.ctd.Dir
	// The tests run in the host's network namespace: no host routes for
	// the nodes they make up (pkg/routes is tested in a namespace of its
	// own); the blackhole is added by addBlackhole.
	o.ManageNodeRoutes = false
	if e.customize != nil {
		e.customize(o)
	}
	return o
}

type runningKubelet struct {
	cfg    *app.Config
	cancel context.CancelFunc
	done   chan error
}

func (e *env) startKubelet(t *testing.T) *runningKubelet {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ctx = klog.NewContext(ctx, klog.Background().WithName("kubelet"))
	cfg, err := app.Setup(ctx, e.options())
	if err != nil {
		cancel()
		t.Fatalf("kubelet setup: %v", err)
	}
	k := &runningKubelet{cfg: cfg, cancel: cancel, done: make(chan error, 1)}
	go func() { k.done <- app.Run(ctx, cfg) }()
	t.Cleanup(k.stop)
	return k
}

func (k *runningKubelet) stop() {
	if k.cancel == nil {
		return
	}
	k.cancel()
	k.cancel = nil
	select {
	case <-k.done:
	case <-time.After(30 * time.Second):
	}
	k.cfg.Close()
}

func (e *env) getPod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	p, err := e.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting pod %s: %v", name, err)
	}
	return p
}

func (e *env) createPod(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	p.Namespace = "default"
	p.Spec.NodeName = nodeName
	out, err := e.client.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", p.Name, err)
	}
	return out
}

// podContainers lists the containerd containers of a pod in the
// kubelet's namespace.
func (e *env) podContainers(t *testing.T, uid types.UID) []string {
	t.Helper()
	ctx := namespaces.WithNamespace(context.Background(), e.namespace)
	list, err := e.ctd.Client.Containers(ctx, fmt.Sprintf("labels.%q==%s", pod.LabelPodUID, uid))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID())
	}
	return ids
}

func condition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func httpGet(url string) (string, error) {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("status %s", resp.Status)
	}
	return string(b), err
}

// webPod is busybox httpd serving a page that an init container writes
// into an emptyDir from its environment and from config map, secret and
// downward API volumes. A readiness probe (httpGet) and a liveness probe
// (exec) watch it.
func webPod(name string) *corev1.Pod {
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	mount := func(name, path string) corev1.VolumeMount { return corev1.VolumeMount{Name: name, MountPath: path} }
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			AutomountServiceAccountToken:  ptr.To(false),
			InitContainers: []corev1.Container{{
				Name:    "setup",
				Image:   "busybox",
				Command: []string{"sh", "-c", `echo "$GREETING from $POD_NAME ($APP) cm=$(cat /cfg/greeting) sec=$(cat /sec/password) labels=$(cat /info/labels)" > /www/index.html`},
				Env: []corev1.EnvVar{
					fieldEnv("POD_NAME", "metadata.name"),
					fieldEnv("APP", "metadata.labels['app']"),
					{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}, Key: "greeting"}}},
				},
				VolumeMounts: []corev1.VolumeMount{mount("www", "/www"), mount("cfg", "/cfg"), mount("sec", "/sec"), mount("info", "/info")},
			}},
			Containers: []corev1.Container{{
				Name:         "web",
				Image:        "busybox",
				Command:      []string{"httpd", "-f", "-p", "80", "-h", "/www"},
				Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
				VolumeMounts: []corev1.VolumeMount{mount("www", "/www")},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/index.html", Port: intstr.FromString("http")}},
					PeriodSeconds: 1,
				},
				LivenessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/www/index.html"}}},
					PeriodSeconds: 1,
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "www", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "web-secret"}}},
				{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
				}}}},
			},
		},
	}
}

// TestKubelet runs one node end to end against real containerd, runc,
// CNI plugins, a registry and an API server.
func TestKubelet(t *testing.T) {
	e := setup(t)
	outer := t
	ctx := context.Background()
	k := e.startKubelet(t)

	t.Run("node registers NotReady until it has a pod CIDR", func(t *testing.T) {
		var node *corev1.Node
		poll(t, 30*time.Second, "the node to register", func() (bool, string) {
			n, err := e.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			node = n
			return true, ""
		})
		ready := nodeReady(node)
		if ready == nil || ready.Status != corev1.ConditionFalse || ready.Reason != "KubeletNotReady" || !strings.Contains(ready.Message, "network") {
			t.Errorf("Ready condition before the pod CIDR = %+v, want False/KubeletNotReady about the network", ready)
		}
		if got := node.Status.Capacity.Pods().Value(); got != 110 {
			t.Errorf("capacity pods = %d, want 110", got)
		}
		if node.Status.Capacity.Cpu().Value() < 1 || node.Status.Capacity.Memory().Value() < 1<<20 || node.Status.Allocatable.StorageEphemeral().Value() <= 0 {
			t.Errorf("capacity/allocatable not from the host: %v / %v", node.Status.Capacity, node.Status.Allocatable)
		}
		if v := node.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(v, "containerd://1.") {
			t.Errorf("containerRuntimeVersion = %q", v)
		}
		for k, want := range map[string]string{"kubernetes.io/hostname": nodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"} {
			if node.Labels[k] != want {
				t.Errorf("label %s = %q, want %q", k, node.Labels[k], want)
			}
		}
		var internal bool
		for _, a := range node.Status.Addresses {
			internal = internal || (a.Type == corev1.NodeInternalIP && a.Address == "127.0.0.1")
		}
		if !internal {
			t.Errorf("addresses = %v, want InternalIP 127.0.0.1", node.Status.Addresses)
		}
		poll(t, 20*time.Second, "the node lease", func() (bool, string) {
			l, err := e.client.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == nodeName && l.Spec.RenewTime != nil, fmt.Sprintf("%+v", l.Spec)
		})
	})

	t.Run("node turns Ready with a pod CIDR", func(t *testing.T) {
		patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, e.podCIDR, e.podCIDR)
		if _, err := e.client.CoreV1().Nodes().Patch(ctx, nodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, 30*time.Second, "the node to be Ready", func() (bool, string) {
			n, err := e.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			r := nodeReady(n)
			return r != nil && r.Status == corev1.ConditionTrue, fmt.Sprintf("%+v", r)
		})
	})

	if _, err := e.client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "web-config"}, Data: map[string]string{"greeting": "hello"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web-secret"}, Data: map[string][]byte{"password": []byte("s3cret")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := e.createPod(t, webPod("web"))
	var podIP, containerID string

	t.Run("pod runs and serves", func(t *testing.T) {
		var p *corev1.Pod
		poll(t, 90*time.Second, "pod web to run with an IP and be Ready", func() (bool, string) {
			p = e.getPod(t, "web")
			return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && condition(p, corev1.PodReady) == corev1.ConditionTrue,
				fmt.Sprintf("phase %s ip %q statuses %+v", p.Status.Phase, p.Status.PodIP, p.Status.ContainerStatuses)
		})
		podIP = p.Status.PodIP
		_, cidr, _ := net.ParseCIDR(e.podCIDR)
		if !cidr.Contains(net.ParseIP(podIP)) {
			t.Errorf("pod IP %s not in %s", podIP, e.podCIDR)
		}
		cs := p.Status.ContainerStatuses
		if len(cs) != 1 || !strings.HasPrefix(cs[0].ContainerID, "containerd://") || cs[0].State.Running == nil || !cs[0].Ready ||
			cs[0].RestartCount != 0 || !strings.HasPrefix(cs[0].ImageID, "docker.io/library/busybox@sha256:") || cs[0].Image != "docker.io/library/busybox:latest" {
			t.Errorf("container statuses = %+v", cs)
		}
		if p.Status.HostIP != "127.0.0.1" || p.Status.StartTime == nil {
			t.Errorf("hostIP %q startTime %v", p.Status.HostIP, p.Status.StartTime)
		}
		for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			if condition(p, c) != corev1.ConditionTrue {
				t.Errorf("condition %s = %q", c, condition(p, c))
			}
		}
		if ics := p.Status.InitContainerStatuses; len(ics) != 1 || ics[0].State.Terminated == nil || ics[0].State.Terminated.Reason != "Completed" {
			t.Errorf("init container statuses = %+v", ics)
		}
		containerID = cs[0].ContainerID
		e.assertCgroupLimits(t, strings.TrimPrefix(containerID, "containerd://"))
		e.assertPodCgroup(t, p, strings.TrimPrefix(containerID, "containerd://"))
		var body string
		poll(t, 20*time.Second, "httpd to answer", func() (bool, string) {
			var err error
			body, err = httpGet("http://" + podIP + "/")
			if err != nil {
				return false, err.Error()
			}
			return true, ""
		})
		if want := "hello from web (web) cm=hello sec=s3cret labels=app=\"web\"\n"; body != want {
			t.Errorf("GET / = %q, want %q", body, want)
		}
	})

	t.Run("healthz and metrics", func(t *testing.T) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second} //nolint:gosec // self-signed test cert
		body, err := getBody(c, "https://"+k.cfg.Addr()+"/healthz")
		if err != nil || body != "ok" {
			t.Errorf("/healthz = %q, %v", body, err)
		}
		// /metrics is nodes/metrics: the API server's client certificate.
		if code, body := e.apiClient(t, k, "").get(t, "/metrics"); code != http.StatusUnauthorized {
			t.Errorf("GET /metrics without a client certificate: %d %s, want 401", code, body)
		}
		code, body := e.apiClient(t, k, "apiserver-kubelet-client").get(t, "/metrics")
		if code != http.StatusOK {
			t.Fatalf("GET /metrics: %d %s", code, body)
		}
		for _, want := range []string{"kubelet_running_pods 1", "kubelet_pod_start_duration_seconds_count 1", "kubelet_pod_start_sli_duration_seconds_count 1", `kubelet_runtime_operations_duration_seconds_count{operation_type="pull_image"}`,
			"kubelet_pleg_relist_duration_seconds_count ", "kubelet_pleg_relist_interval_seconds_count ", "kubelet_pleg_last_seen_seconds "} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})

	t.Run("projected service account token", func(t *testing.T) {
		if _, err := e.client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		const dir = "/var/run/secrets/kubernetes.io/serviceaccount"
		p := e.createPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "token"},
			Spec: corev1.PodSpec{
				ServiceAccountName:            "default",
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{
					Name: "c", Image: "busybox", Command: []string{"sleep", "3600"},
					VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-test", MountPath: dir, ReadOnly: true}},
					ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
						Command: []string{"sh", "-c", "test -s " + dir + "/token && test \"$(cat " + dir + "/namespace)\" = default"}}}},
				}},
				Volumes: []corev1.Volume{{Name: "kube-api-access-test", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
				}}}}},
			},
		})
		// The Node authorizer lets the node ask for this token because a
		// pod bound to it uses the service account (once its graph has the
		// pod, from the API server's watch).
		poll(t, 10*time.Second, "the node to be allowed its pod's token", func() (bool, string) {
			sar, err := e.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: "system:node:" + nodeName, Groups: []string{"system:nodes", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: "default"},
			}}, metav1.CreateOptions{})
			if err != nil {
				return false, err.Error()
			}
			return sar.Status.Allowed, fmt.Sprintf("%+v", sar.Status)
		})
		poll(t, 60*time.Second, "pod token to be Ready", func() (bool, string) {
			got := e.getPod(t, "token")
			return condition(got, corev1.PodReady) == corev1.ConditionTrue, fmt.Sprintf("%+v", got.Status.ContainerStatuses)
		})
		tok, err := os.ReadFile(filepath.Join(e.rootDir, "pods", string(p.UID), "volumes", "projected", "kube-api-access-test", "token"))
		if err != nil || strings.Count(string(tok), ".") != 2 {
			t.Errorf("token file = %q, %v; want a JWT", tok, err)
		}
		if err := e.client.CoreV1().Pods("default").Delete(ctx, "token", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, 60*time.Second, "pod token to be gone", func() (bool, string) {
			_, err := e.client.CoreV1().Pods("default").Get(ctx, "token", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})

	t.Run("crashing container backs off", func(t *testing.T) {
		e.createPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "crash"},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers:                    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh", "-c", "exit 3"}}},
			},
		})
		poll(t, 60*time.Second, "CrashLoopBackOff", func() (bool, string) {
			p := e.getPod(t, "crash")
			if len(p.Status.ContainerStatuses) != 1 {
				return false, "no status"
			}
			cs := p.Status.ContainerStatuses[0]
			ok := cs.RestartCount >= 1 && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" &&
				cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.ExitCode == 3 &&
				cs.LastTerminationState.Terminated.Reason == "Error" && p.Status.Phase == corev1.PodRunning
			return ok, fmt.Sprintf("phase %s %+v", p.Status.Phase, cs)
		})
	})

	t.Run("missing image backs off", func(t *testing.T) {
		e.createPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "noimage"},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers:                    []corev1.Container{{Name: "c", Image: e.registry + "/nope:latest"}},
			},
		})
		seen := map[string]bool{}
		poll(t, 60*time.Second, "ErrImagePull then ImagePullBackOff", func() (bool, string) {
			p := e.getPod(t, "noimage")
			if len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil {
				seen[p.Status.ContainerStatuses[0].State.Waiting.Reason] = true
			}
			return seen["ImagePullBackOff"] && p.Status.Phase == corev1.PodPending, fmt.Sprintf("phase %s seen %v", p.Status.Phase, seen)
		})
	})

	t.Run("an image the mirror lacks is ErrImagePull naming the mirror", func(t *testing.T) {
		// docker.io is mirrored to the loopback registry and its default
		// endpoint is disabled: registry-1.docker.io is never asked.
		e.createPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "notmirrored"},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers:                    []corev1.Container{{Name: "c", Image: "nginx:1.27"}},
			},
		})
		want := "pulling docker.io/library/nginx:1.27 from mirror http://" + e.registry + "/v2; the default endpoint https://registry-1.docker.io/v2 is disabled"
		// The Failed event keeps the ErrImagePull message the status shows
		// until the back-off replaces it.
		poll(t, 60*time.Second, "a Failed pull naming the mirror", func() (bool, string) {
			evs, err := e.client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=notmirrored"})
			if err != nil {
				return false, err.Error()
			}
			var msgs []string
			for _, ev := range evs.Items {
				if ev.Reason == "Failed" && strings.Contains(ev.Message, want) {
					return true, ""
				}
				msgs = append(msgs, ev.Reason+": "+ev.Message)
			}
			return false, strings.Join(msgs, "; ")
		})
	})

	t.Run("a lost network namespace is re-created", func(t *testing.T) {
		p := e.createPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "netlost"},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Command: []string{"sh", "-c", "mkdir -p /www && echo netlost > /www/index.html && exec httpd -f -p 80 -h /www"}}},
			},
		})
		serves := func(ip string) {
			t.Helper()
			poll(t, 20*time.Second, "httpd at "+ip, func() (bool, string) {
				body, err := httpGet("http://" + ip + "/")
				if err != nil {
					return false, err.Error()
				}
				return body == "netlost\n", body
			})
		}
		var oldIP string
		poll(t, 60*time.Second, "pod netlost to run", func() (bool, string) {
			got := e.getPod(t, "netlost")
			oldIP = got.Status.PodIP
			return got.Status.Phase == corev1.PodRunning && oldIP != "" && condition(got, corev1.PodReady) == corev1.ConditionTrue,
				fmt.Sprintf("phase %s ip %q %+v", got.Status.Phase, oldIP, got.Status.ContainerStatuses)
		})
		serves(oldIP)
		// What `ip netns delete` does: the namespace's mount and file go;
		// the container keeps the namespace alive, cut off from the node.
		netns := filepath.Join(e.netnsDir, "skiff-"+string(p.UID))
		if err := unix.Unmount(netns, unix.MNT_DETACH); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(netns); err != nil {
			t.Fatal(err)
		}
		var got *corev1.Pod
		poll(t, 60*time.Second, "pod netlost to run again in a new sandbox", func() (bool, string) {
			got = e.getPod(t, "netlost")
			cs := got.Status.ContainerStatuses
			return got.Status.Phase == corev1.PodRunning && got.Status.PodIP != "" && got.Status.PodIP != oldIP &&
					len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil,
				fmt.Sprintf("phase %s ip %q %+v", got.Status.Phase, got.Status.PodIP, cs)
		})
		if last := got.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil {
			t.Errorf("last state = %+v, want the stopped container's", got.Status.ContainerStatuses[0].LastTerminationState)
		}
		serves(got.Status.PodIP)
		// The old address went back to the pool.
		if _, err := os.Stat(filepath.Join(e.rootDir, "cni", "networks", "skiff", oldIP)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("IPAM lease of the old address %s left (stat: %v)", oldIP, err)
		}
		ids := e.podContainers(t, p.UID)
		if err := e.client.CoreV1().Pods("default").Delete(ctx, "netlost", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, 60*time.Second, "pod netlost to be gone", func() (bool, string) {
			_, err := e.client.CoreV1().Pods("default").Get(ctx, "netlost", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		e.assertNothingLeft(t, p.UID, got.Status.PodIP, ids)
	})

	t.Run("restarted kubelet adopts running containers and removes orphans", func(t *testing.T) {
		k.stop()
		before := e.podContainers(t, web.UID)
		// While the kubelet is down, pod crash is force-deleted: its
		// containers and sandbox are orphans for the next kubelet.
		crash := e.getPod(t, "crash")
		crashIDs := e.podContainers(t, crash.UID)
		if err := e.client.CoreV1().Pods("default").Delete(ctx, "crash", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		k = e.startKubelet(outer) // it must outlive this subtest
		poll(t, 30*time.Second, "the new kubelet to sync", func() (bool, string) { return k.cfg.Kubelet.Synced(), "" })
		poll(t, 30*time.Second, "the orphans to be removed", func() (bool, string) {
			left := e.podContainers(t, crash.UID)
			return len(left) == 0, fmt.Sprint(left)
		})
		e.assertNothingLeft(t, crash.UID, crash.Status.PodIP, crashIDs)
		// Several pod syncs of the new kubelet (every 300 ms here) must leave
		// the container alone: the check is repeated over a 3 s window, the
		// window being what is tested, not a wait for something to happen.
		window := time.After(3 * time.Second)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
	observe:
		for {
			p := e.getPod(t, "web")
			cs := p.Status.ContainerStatuses
			if len(cs) != 1 || cs[0].ContainerID != containerID || cs[0].RestartCount != 0 || cs[0].State.Running == nil {
				t.Fatalf("after the restart: %+v, want %s running with 0 restarts", cs, containerID)
			}
			if p.Status.PodIP != podIP || p.Status.Phase != corev1.PodRunning {
				t.Fatalf("after the restart: phase %s pod IP %q, want Running %s", p.Status.Phase, p.Status.PodIP, podIP)
			}
			if after := e.podContainers(t, web.UID); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Fatalf("containers changed: %v -> %v", before, after)
			}
			select {
			case <-window:
				break observe
			case <-tick.C:
			}
		}
		if body, err := httpGet("http://" + podIP + "/"); err != nil || !strings.Contains(body, "hello") {
			t.Errorf("after the restart GET / = %q, %v", body, err)
		}
	})

	t.Run("deleting a pod leaves nothing behind", func(t *testing.T) {
		ids := e.podContainers(t, web.UID)
		if err := e.client.CoreV1().Pods("default").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](2)}); err != nil {
			t.Fatal(err)
		}
		poll(t, 60*time.Second, "pod web to be gone", func() (bool, string) {
			_, err := e.client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		e.assertNothingLeft(t, web.UID, podIP, ids)
	})

	t.Run("all pods deleted", func(t *testing.T) {
		for _, name := range []string{"noimage"} {
			p := e.getPod(t, name)
			ids := e.podContainers(t, p.UID)
			if name == "noimage" {
				ids = []string{"none"} // it never had a container
			}
			if err := e.client.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			poll(t, 60*time.Second, "pod "+name+" to be gone", func() (bool, string) {
				_, err := e.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			e.assertNothingLeft(t, p.UID, p.Status.PodIP, ids)
		}
	})
}

// assertNothingLeft checks that a deleted pod left no container, task,
// rootfs mount, network namespace or IPAM lease; ids are the containers it
// had before it was deleted.
func (e *env) assertNothingLeft(t *testing.T, uid types.UID, podIP string, ids []string) {
	t.Helper()
	if len(ids) == 0 {
		t.Errorf("no containers recorded for pod %s before deletion", uid)
	}
	if left := e.podContainers(t, uid); len(left) != 0 {
		t.Errorf("containers left: %v", left)
	}
	ctx := namespaces.WithNamespace(context.Background(), e.namespace)
	tasks, err := e.ctd.Client.TaskService().List(ctx, &tasks.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks.Tasks {
		for _, id := range ids {
			if task.ID == id {
				t.Errorf("task left: %s", task.ID)
			}
		}
	}
	for _, dir := range []string{filepath.Join(e.rootDir, "pods", string(uid)), filepath.Join(e.rootDir, "logs", string(uid))} {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left (stat: %v)", dir, err)
		}
		if m := mountsUnder(dir); len(m) != 0 {
			t.Errorf("mounts left: %v", m)
		}
	}
	for _, class := range []string{"", "burstable", "besteffort"} {
		if dir := e.podCgroupDir("memory", class, uid); !errors.Is(statErr(dir), os.ErrNotExist) {
			t.Errorf("pod cgroup %s left", dir)
		}
	}
	netns := filepath.Join(e.netnsDir, "skiff-"+string(uid))
	if _, err := os.Stat(netns); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("network namespace %s left (stat: %v)", netns, err)
	}
	if m := mountsUnder(netns); len(m) != 0 {
		t.Errorf("mounts left: %v", m)
	}
	if podIP != "" {
		lease := filepath.Join(e.rootDir, "cni", "networks", "skiff", podIP)
		if _, err := os.Stat(lease); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("IPAM lease %s left (stat: %v)", lease, err)
		}
	}
	for _, m := range mountsUnder(e.ctd.Dir) {
		for _, id := range ids {
			if strings.Contains(m, id) {
				t.Errorf("mount left: %s", m)
			}
		}
	}
}

// assertCgroupLimits checks the container's OCI spec and, when the
// memory cgroup (v1) is where runc put it, the kernel's limit.
func (e *env) assertCgroupLimits(t *testing.T, id string) {
	t.Helper()
	ctx := namespaces.WithNamespace(context.Background(), e.namespace)
	c, err := e.ctd.Client.LoadContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := spec.Linux.Resources
	if r == nil || r.Memory == nil || r.Memory.Limit == nil || *r.Memory.Limit != 64<<20 {
		t.Errorf("memory limit in the spec = %+v", r)
	}
	if r == nil || r.CPU == nil || r.CPU.Quota == nil || *r.CPU.Quota != 50000 || r.CPU.Period == nil || *r.CPU.Period != 100000 ||
		r.CPU.Shares == nil || *r.CPU.Shares != 102 {
		t.Errorf("cpu in the spec = %+v", r.CPU)
	}
	if spec.Linux.CgroupsPath == "" {
		return
	}
	path := filepath.Join("/sys/fs/cgroup/memory", spec.Linux.CgroupsPath, "memory.limit_in_bytes")
	if b, err := os.ReadFile(path); err == nil {
		if got := strings.TrimSpace(string(b)); got != "67108864" {
			t.Errorf("%s = %s, want 67108864", path, got)
		}
	} else {
		t.Logf("not checking the kernel's memory limit: %v", err)
	}
}

// podCgroupDir is the pod's cgroup in the v1 hierarchy of controller.
func (e *env) podCgroupDir(controller, class string, uid types.UID) string {
	return filepath.Join("/sys/fs/cgroup", controller, e.namespace, "kubepods", class, "pod"+string(uid))
}

// assertPodCgroup checks that the container runs in its pod's cgroup
// under the pod's QoS class, which carries the pod's CPU shares and limits
// (cgroup v1, the hierarchy of these machines).
func (e *env) assertPodCgroup(t *testing.T, p *corev1.Pod, id string) {
	t.Helper()
	if p.Status.QOSClass != corev1.PodQOSBurstable {
		t.Fatalf("the test pod's QoS class is %q, want Burstable", p.Status.QOSClass)
	}
	ctx := namespaces.WithNamespace(context.Background(), e.namespace)
	c, err := e.ctd.Client.LoadContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := path.Join("/"+e.namespace, "kubepods", "burstable", "pod"+string(p.UID), id)
	if spec.Linux.CgroupsPath != want {
		t.Errorf("container cgroup %q, want %q", spec.Linux.CgroupsPath, want)
	}
	r := cm.PodResources(p)
	memLimit := "9223372036854771712" // the kernel's "no limit"
	if r.MemoryLimit > 0 {
		memLimit = strconv.FormatInt(r.MemoryLimit, 10)
	}
	quota := "-1"
	if r.CPUQuota > 0 {
		quota = strconv.FormatInt(r.CPUQuota, 10)
	}
	for file, want := range map[string]string{
		filepath.Join(e.podCgroupDir("cpu", "burstable", p.UID), "cpu.shares"):               strconv.FormatUint(r.CPUShares, 10),
		filepath.Join(e.podCgroupDir("cpu", "burstable", p.UID), "cpu.cfs_quota_us"):         quota,
		filepath.Join(e.podCgroupDir("memory", "burstable", p.UID), "memory.limit_in_bytes"): memLimit,
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("pod cgroup: %v", err)
			continue
		}
		if got := strings.TrimSpace(string(b)); got != want {
			t.Errorf("%s = %s, want %s", file, got, want)
		}
	}
	// The container's own cgroup is below the pod's.
	if _, err := os.Stat(filepath.Join(e.podCgroupDir("memory", "burstable", p.UID), id)); err != nil {
		t.Errorf("the container's memory cgroup is not under its pod's: %v", err)
	}
}

func nodeReady(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func statErr(path string) error {
	_, err := os.Stat(path)
	return err
}

func getBody(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
