package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"skiff.dev/apiserver/pkg/api"
)

// The ReplicaSet of seed 003, as kubectl sends it.
const seedReplicaSet = `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"my-replicaset","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"my-app"}},"template":{"metadata":{"labels":{"app":"my-app"}},"spec":{"containers":[{"image":"nginx","name":"my-container","ports":[{"containerPort":80}]}]}}}}`

// The spec seed 003's API server answered with: upstream's defaults.
const seedReplicaSetSpec = `{"replicas":2,"selector":{"matchLabels":{"app":"my-app"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"my-app"}},"spec":{"containers":[{"name":"my-container","image":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"Always"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}}}`

func TestSeedReplicaSetIsStoredAsUpstream(t *testing.T) {
	ts := start(t, nil)
	code, body := raw(t, ts, http.MethodPost, "/apis/apps/v1/namespaces/default/replicasets?fieldManager=kubectl-create&fieldValidation=Strict", "application/json", []byte(seedReplicaSet))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	var resp struct {
		Kind, APIVersion string
		Metadata         metav1.ObjectMeta
		Spec             json.RawMessage
		Status           json.RawMessage
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Kind != "ReplicaSet" || resp.APIVersion != "apps/v1" {
		t.Errorf("kind/apiVersion = %s/%s", resp.Kind, resp.APIVersion)
	}
	if string(resp.Spec) != seedReplicaSetSpec {
		t.Errorf("defaulted spec differs from seed 003:\n got %s\nwant %s", resp.Spec, seedReplicaSetSpec)
	}
	if string(resp.Status) != `{"replicas":0}` {
		t.Errorf("status = %s, want {\"replicas\":0}", resp.Status)
	}
	m := resp.Metadata
	if m.UID == "" || m.CreationTimestamp.IsZero() || m.Generation != 1 || m.ResourceVersion == "" {
		t.Errorf("system fields not set: %+v", m)
	}

	// The etcd key and value are upstream's: protobuf in the k8s\x00 envelope.
	kv, err := ts.Server.EtcdClient().Get(ctx(t), "/registry/replicasets/default/my-replicaset")
	if err != nil || len(kv.Kvs) != 1 {
		t.Fatalf("etcd get: %v %v", err, kv)
	}
	val := kv.Kvs[0].Value
	if !bytes.HasPrefix(val, []byte("k8s\x00")) {
		t.Fatalf("stored value does not start with the k8s\\x00 envelope: %q", val[:8])
	}
	if got := strconv.FormatInt(kv.Kvs[0].ModRevision, 10); got != m.ResourceVersion {
		t.Errorf("resourceVersion %s != etcd mod_revision %s", m.ResourceVersion, got)
	}
	codecs := api.NewCodecs()
	obj, _, err := protobuf.NewSerializer(codecs.Scheme, codecs.Scheme).Decode(val, nil, nil)
	if err != nil {
		t.Fatalf("decoding the stored value with upstream's protobuf serializer: %v", err)
	}
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok || rs.Name != "my-replicaset" || rs.UID != m.UID || rs.ResourceVersion != "" {
		t.Errorf("stored object: %T %+v", obj, rs.ObjectMeta)
	}
}

func TestUpdateIsCompareAndSwap(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client.CoreV1().ConfigMaps("default")
	cm, err := c.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cas"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := cm.DeepCopy()
	cm.Data["n"] = "1"
	if _, err := c.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Data["n"] = "stale"
	_, err = c.Update(ctx(t), stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion: %v, want 409 Conflict", err)
	}
	if !strings.Contains(err.Error(), "the object has been modified") {
		t.Errorf("conflict message: %v", err)
	}

	// Concurrent read-modify-write increments never lose an update.
	const workers, each = 8, 10
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for {
					cur, err := c.Get(ctx(t), "cas", metav1.GetOptions{})
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := strconv.Atoi(cur.Data["n"])
					cur.Data["n"] = strconv.Itoa(n + 1)
					_, err = c.Update(ctx(t), cur, metav1.UpdateOptions{})
					if err == nil {
						break
					}
					if !apierrors.IsConflict(err) {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	final, err := c.Get(ctx(t), "cas", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(1 + workers*each); final.Data["n"] != want {
		t.Errorf("after %d concurrent increments n = %s, want %s", workers*each, final.Data["n"], want)
	}
}

func TestGenerateName(t *testing.T) {
	ts := start(t, nil)
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		pod, err := ts.Client.CoreV1().Pods("default").Create(ctx(t), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "my-replicaset-"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		suffix := strings.TrimPrefix(pod.Name, "my-replicaset-")
		if len(suffix) != 5 || strings.ContainsAny(suffix, "aeiou013") {
			t.Errorf("generated name %q: want 5 characters of upstream's alphabet", pod.Name)
		}
		if seen[pod.Name] {
			t.Errorf("name %s generated twice", pod.Name)
		}
		seen[pod.Name] = true
		if pod.Status.Phase != corev1.PodPending || pod.Status.QOSClass != corev1.PodQOSBestEffort {
			t.Errorf("pod status = %+v", pod.Status)
		}
	}
}

func TestSystemObjectsExist(t *testing.T) {
	ts := start(t, nil)
	var svc *corev1.Service
	if err := waitFor(t, func() (err error) {
		svc, err = ts.Client.CoreV1().Services("default").Get(ctx(t), "kubernetes", metav1.GetOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "10.96.0.1" || svc.Spec.Ports[0].Port != 443 {
		t.Errorf("kubernetes service = %+v", svc.Spec)
	}
	// The endpoints point at the advertised address and the secure port.
	err := waitFor(t, func() error {
		ep, err := ts.Client.CoreV1().Endpoints("default").Get(ctx(t), "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(ep.Subsets) != 1 || ep.Subsets[0].Addresses[0].IP != svcEndpointIP(t) ||
			fmt.Sprint(ep.Subsets[0].Ports[0].Port) != strings.TrimPrefix(ts.URL[strings.LastIndex(ts.URL, ":"):], ":") {
			return fmt.Errorf("endpoints %+v", ep.Subsets)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// svcEndpointIP is what the server advertises: the host's first
// non-loopback IPv4 address.
func svcEndpointIP(t *testing.T) string {
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLinkLocalUnicast() {
				return ipn.IP.String()
			}
		}
	}
	t.Fatal("no non-loopback address")
	return ""
}
