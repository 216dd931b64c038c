package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/record"

	"skiff.dev/apiserver/pkg/testserver"
)

const timeout = 30 * time.Second

// env is an API server and the clients the controllers take.
type env struct {
	t         *testing.T
	ctx       context.Context
	ts        *testserver.TestServer
	client    kubernetes.Interface
	metadata  metadata.Interface
	informers informers.SharedInformerFactory
	recorder  record.EventRecorder
	wg        sync.WaitGroup
	cancel    context.CancelFunc
}

func start(t *testing.T) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	client, err := kubernetes.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	md, err := metadata.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	e := &env{
		t: t, ctx: ctx, ts: ts, client: client, metadata: md, cancel: cancel,
		informers: informers.NewSharedInformerFactory(client, 0),
		recorder:  broadcaster.NewRecorder(clientgoScheme(), corev1.EventSource{Component: "skiff-controller-manager"}),
	}
	t.Cleanup(func() {
		cancel()
		e.wg.Wait()
		broadcaster.Shutdown()
	})
	return e
}

// run starts a controller's Run and the informers it registered.
func (e *env) run(name string, run func(context.Context, int) error) {
	e.t.Helper()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if err := run(e.ctx, 2); err != nil {
			e.t.Errorf("%s: %v", name, err)
		}
	}()
	e.informers.Start(e.ctx.Done())
}

// poll waits for cond, failing the test with what after the timeout.
func (e *env) poll(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func (e *env) namespace(name string) {
	e.t.Helper()
	if _, err := e.client.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	// Pods need the namespace's default ServiceAccount when the API server
	// checks it; make sure it is there.
	_, err := e.client.CoreV1().ServiceAccounts(name).Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
}

func (e *env) caBundle() []byte {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.ts.PKIDir, "ca.crt"))
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func gone(err error) (bool, error) {
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

func timeoutChan() <-chan time.Time { return time.After(timeout) }

// requireMetadataWatch fails the test at once when the API server does not
// send PartialObjectMetadata on a metadata watch (the metadata informers
// the garbage collector uses depend on it).
func (e *env) requireMetadataWatch(t testing.TB, ns string) {
	t.Helper()
	w, err := e.metadata.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns).Watch(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := e.client.CoreV1().ConfigMaps(ns).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "metadata-watch-probe"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = e.client.CoreV1().ConfigMaps(ns).Delete(e.ctx, "metadata-watch-probe", metav1.DeleteOptions{})
	}()
	select {
	case ev := <-w.ResultChan():
		if _, ok := ev.Object.(*metav1.PartialObjectMetadata); !ok || ev.Type != "ADDED" {
			t.Fatalf("a metadata watch (Accept: as=PartialObjectMetadata) got %s %T %v, want ADDED PartialObjectMetadata: "+
				"the API server must negotiate a watch's media type per event, not as a list", ev.Type, ev.Object, ev.Object)
		}
	case <-time.After(timeout):
		t.Fatal("no event on the metadata watch")
	}
}
