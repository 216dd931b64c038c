package integration

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"skiff.dev/apiserver/pkg/testserver"
)

var (
	hostsV1 = schema.GroupVersionResource{Group: "hosts.skiff.dev", Version: "v1", Resource: "hosts"}
	hostsV2 = schema.GroupVersionResource{Group: "hosts.skiff.dev", Version: "v2", Resource: "hosts"}
)

// hostField is the field that holds the host in each version of Hosts.
func hostField(version string) string {
	if version == "v1" {
		return "host"
	}
	return "hostname"
}

// startHosts starts a server with the Hosts CRD (changed first by
// customize) and its conversion webhook on loopback.
func startHosts(t *testing.T, customize func(*apiextensionsv1.CustomResourceDefinition)) (*testserver.TestServer, *hostWebhook, *apiextensionsclient.Clientset, *dynamic.DynamicClient) {
	t.Helper()
	ts := start(t, nil)
	hook := &hostWebhook{}
	srv := httptest.NewTLSServer(hook)
	t.Cleanup(srv.Close)
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ext, dyn := crdClients(t, ts)
	crd := hostCRD(srv.URL, caBundle)
	if customize != nil {
		customize(crd)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx(t), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, dyn, crd.Name, hostsV1)
	return ts, hook, ext, dyn
}

func hostObject(version, name, host string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hosts.skiff.dev/" + version, "kind": "Host", "metadata": map[string]any{"name": name},
		"spec": map[string]any{hostField(version): host},
	}}
}

// checkHostShape fails unless u is at version, in that version's shape,
// with host as its host.
func checkHostShape(t *testing.T, what, version string, u *unstructured.Unstructured, host string) {
	t.Helper()
	spec, _ := u.Object["spec"].(map[string]any)
	other := hostField("v1")
	if version == "v1" {
		other = hostField("v2")
	}
	if _, found := spec[other]; u.GetAPIVersion() != "hosts.skiff.dev/"+version || spec[hostField(version)] != host || found {
		t.Errorf("%s: want %s with %s=%s, got %v", what, version, hostField(version), host, u.Object)
	}
}

// nextEvent is the watch's next event, within a deadline.
func nextEvent(t *testing.T, what string, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("%s: the watch closed", what)
		}
		if _, isObj := ev.Object.(*unstructured.Unstructured); !isObj {
			t.Fatalf("%s: %s event of %T", what, ev.Type, ev.Object)
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no event", what)
	}
	return watch.Event{}
}

// storedAPIVersion is the apiVersion a Host is stored with in etcd.
func storedAPIVersion(t *testing.T, ts *testserver.TestServer, name string) string {
	t.Helper()
	resp, err := ts.Server.EtcdClient().Get(ctx(t), "/registry/hosts.skiff.dev/hosts/default/"+name)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading %s from etcd: %v", name, err)
	}
	var obj struct{ APIVersion string }
	if err := json.Unmarshal(resp.Kvs[0].Value, &obj); err != nil {
		t.Fatal(err)
	}
	return obj.APIVersion
}

// TestCustomResourceConversionMixedStorageVersions: objects stored at
// different versions (a at v1, b at v2 after the storage version changed,
// as upstream's conformance test "should be able to convert a non
// homogeneous list of CRs" does) are each listed, got and watched at v1
// and at v2 in the requested version's shape.
func TestCustomResourceConversionMixedStorageVersions(t *testing.T) {
	ts, _, ext, dyn := startHosts(t, nil)
	hosts := func(gvr schema.GroupVersionResource) dynamic.ResourceInterface {
		return dyn.Resource(gvr).Namespace("default")
	}
	if _, err := hosts(hostsV1).Create(ctx(t), hostObject("v1", "a", "a.example"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx(t), "hosts.hosts.skiff.dev", metav1.GetOptions{})
		if err != nil {
			return err
		}
		crd.Spec.Versions[0].Storage, crd.Spec.Versions[1].Storage = false, true
		_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx(t), crd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("making v2 the storage version: %v", err)
	}
	// b is written at v1 until the new storage version is in use.
	if _, err := hosts(hostsV1).Create(ctx(t), hostObject("v1", "b", "b.example"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = wait.PollUntilContextTimeout(ctx(t), 20*time.Millisecond, 30*time.Second, true, func(c context.Context) (bool, error) {
		if storedAPIVersion(t, ts, "b") == "hosts.skiff.dev/v2" {
			return true, nil
		}
		n++
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"write":"%d"}}}`, n)
		_, err := hosts(hostsV1).Patch(c, "b", "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
		return false, err
	})
	if err != nil {
		t.Fatalf("b never stored at v2: %v", err)
	}
	if v := storedAPIVersion(t, ts, "a"); v != "hosts.skiff.dev/v1" {
		t.Fatalf("a is stored at %s, want v1", v)
	}

	for _, version := range []string{"v1", "v2"} {
		gvr := hostsV1
		if version == "v2" {
			gvr = hostsV2
		}
		list, err := hosts(gvr).List(ctx(t), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list at %s: %v", version, err)
		}
		if len(list.Items) != 2 {
			t.Fatalf("list at %s: %d items", version, len(list.Items))
		}
		for i := range list.Items {
			u := &list.Items[i]
			checkHostShape(t, "list at "+version, version, u, u.GetName()+".example")
		}
		for _, name := range []string{"a", "b"} {
			u, err := hosts(gvr).Get(ctx(t), name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get %s at %s: %v", name, version, err)
			}
			checkHostShape(t, "get at "+version, version, u, name+".example")
		}
		w, err := hosts(gvr).Watch(ctx(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			ev := nextEvent(t, "watch at "+version, w)
			u := ev.Object.(*unstructured.Unstructured)
			if ev.Type != watch.Added {
				t.Errorf("watch at %s: %s event", version, ev.Type)
			}
			checkHostShape(t, "watch at "+version, version, u, u.GetName()+".example")
		}
		w.Stop()
	}
}

// watchEvents reads the next len(want) events of w and compares them
// ("ADDED w1") with want; the objects must be at version with their host.
func watchEvents(t *testing.T, what, version string, w watch.Interface, hosts map[string]string, want ...string) {
	t.Helper()
	var got []string
	for range want {
		ev := nextEvent(t, what, w)
		u := ev.Object.(*unstructured.Unstructured)
		got = append(got, string(ev.Type)+" "+u.GetName())
		checkHostShape(t, what, version, u, hosts[string(ev.Type)+" "+u.GetName()])
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: events %q, want %q", what, got, want)
	}
}

// TestCustomResourceFieldSelectorsAfterConversion: a field selector on a
// field only a non-storage version has (v2's spec.hostname; the objects are
// stored at v1, which has spec.host) selects the objects converted to that
// version, in lists (paged too) and watches: their initial events, and
// updates that move an object into or out of the selection, for a watch
// that saw the object enter and one started at a list's resourceVersion;
// and deletecollection, as upstream's conformance test "CustomResourceFieldSelectors MUST list
// and watch custom resources matching the field selector" does.
func TestCustomResourceFieldSelectorsAfterConversion(t *testing.T) {
	_, hook, _, dyn := startHosts(t, func(crd *apiextensionsv1.CustomResourceDefinition) {
		crd.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.host"}}
		crd.Spec.Versions[1].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.hostname"}}
	})
	hosts := func(gvr schema.GroupVersionResource) dynamic.ResourceInterface {
		return dyn.Resource(gvr).Namespace("default")
	}
	const web, db = "web.example", "db.example"
	webV2 := metav1.ListOptions{FieldSelector: "spec.hostname=" + web}
	webV1 := metav1.ListOptions{FieldSelector: "spec.host=" + web}
	names := func(l *unstructured.UnstructuredList) []string {
		var out []string
		for _, u := range l.Items {
			out = append(out, u.GetName())
		}
		return out
	}
	watchV2, err := hosts(hostsV2).Watch(ctx(t), webV2)
	if err != nil {
		t.Fatal(err)
	}
	defer watchV2.Stop()
	watchV1, err := hosts(hostsV1).Watch(ctx(t), webV1)
	if err != nil {
		t.Fatal(err)
	}
	defer watchV1.Stop()

	for name, host := range map[string]string{"w1": web, "w2": web, "d1": db} {
		if _, err := hosts(hostsV2).Create(ctx(t), hostObject("v2", name, host), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := hosts(hostsV2).List(ctx(t), webV2)
	if err != nil {
		t.Fatalf("list at v2 with %s: %v", webV2.FieldSelector, err)
	}
	if got := names(list); !slices.Equal(got, []string{"w1", "w2"}) {
		t.Errorf("list at v2 with %s: %v, want [w1 w2]", webV2.FieldSelector, got)
	}
	for i := range list.Items {
		checkHostShape(t, "list at v2", "v2", &list.Items[i], web)
	}
	if l, err := hosts(hostsV1).List(ctx(t), webV1); err != nil || !slices.Equal(names(l), []string{"w1", "w2"}) {
		t.Errorf("list at v1 with %s: %v, %v", webV1.FieldSelector, err, l)
	}
	// Paged (served from etcd): a page of one, then the rest.
	paged := webV2
	paged.Limit = 1
	page, err := hosts(hostsV2).List(ctx(t), paged)
	if err != nil || !slices.Equal(names(page), []string{"w1"}) || page.GetContinue() == "" {
		t.Fatalf("first page at v2 with %s: %v, %v", webV2.FieldSelector, err, page)
	}
	paged.Continue = page.GetContinue()
	if page, err = hosts(hostsV2).List(ctx(t), paged); err != nil || !slices.Equal(names(page), []string{"w2"}) {
		t.Errorf("second page at v2 with %s: %v, %v", webV2.FieldSelector, err, page)
	}

	sorted := func(w watch.Interface, what, version string) {
		// Creations arrive in the map's order: read both, then compare.
		var got []string
		for range 2 {
			ev := nextEvent(t, what, w)
			u := ev.Object.(*unstructured.Unstructured)
			got = append(got, string(ev.Type)+" "+u.GetName())
			checkHostShape(t, what, version, u, web)
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"ADDED w1", "ADDED w2"}) {
			t.Errorf("%s: events %q, want ADDED w1 and w2", what, got)
		}
	}
	sorted(watchV2, "watch at v2", "v2")
	sorted(watchV1, "watch at v1", "v1")

	// A watch from the list's resourceVersion, as an informer's.
	fromList, err := hosts(hostsV2).Watch(ctx(t), metav1.ListOptions{FieldSelector: webV2.FieldSelector, ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer fromList.Stop()

	// w2 leaves the selection, d1 enters it; m1 (created matching) marks
	// the end, so an event for anything else would show before it.
	setHost := func(name, host string) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"hostname":%q}}`, host)
		if _, err := hosts(hostsV2).Patch(ctx(t), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setHost("w2", db)
	setHost("d1", web)
	if _, err := hosts(hostsV2).Create(ctx(t), hostObject("v2", "m1", web), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A deletion carries the object's last state in the selection.
	moved := map[string]string{"DELETED w2": web, "ADDED d1": web, "ADDED m1": web}
	watchEvents(t, "watch at v2", "v2", watchV2, moved, "DELETED w2", "ADDED d1", "ADDED m1")
	watchEvents(t, "watch at v2 from a list", "v2", fromList, moved, "DELETED w2", "ADDED d1", "ADDED m1")
	watchEvents(t, "watch at v1", "v1", watchV1, moved, "DELETED w2", "ADDED d1", "ADDED m1")

	// The initial events of a new watch: what matches now, in key order.
	initial, err := hosts(hostsV2).Watch(ctx(t), webV2)
	if err != nil {
		t.Fatal(err)
	}
	defer initial.Stop()
	watchEvents(t, "initial events at v2", "v2", initial,
		map[string]string{"ADDED d1": web, "ADDED m1": web, "ADDED w1": web}, "ADDED d1", "ADDED m1", "ADDED w1")

	if l, err := hosts(hostsV2).List(ctx(t), metav1.ListOptions{FieldSelector: "spec.hostname=" + db}); err != nil || !slices.Equal(names(l), []string{"w2"}) {
		t.Errorf("list at v2 with spec.hostname=%s: %v, %v", db, err, l)
	}
	// A deletecollection selects as a list does.
	if err := hosts(hostsV2).DeleteCollection(ctx(t), metav1.DeleteOptions{}, webV2); err != nil {
		t.Fatalf("deletecollection at v2 with %s: %v", webV2.FieldSelector, err)
	}
	if l, err := hosts(hostsV1).List(ctx(t), metav1.ListOptions{}); err != nil || !slices.Equal(names(l), []string{"w2"}) {
		t.Errorf("left after deletecollection at v2 with %s: %v, %v", webV2.FieldSelector, err, l)
	}

	// An object written while the webhook fails (at the storage version,
	// which needs no conversion): a list from etcd that would select on it
	// fails as its read would; once the webhook answers again, the watch
	// cache reads its fields at v2 again and selects it.
	hook.fail.Store(true)
	if _, err := hosts(hostsV1).Create(ctx(t), hostObject("v1", "late", web), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	paged = metav1.ListOptions{FieldSelector: webV2.FieldSelector, Limit: 10}
	if _, err := hosts(hostsV2).List(ctx(t), paged); !apierrors.IsInternalError(err) {
		t.Errorf("paged list at v2 with the webhook failing: %v, want a 500", err)
	}
	hook.fail.Store(false)
	err = wait.PollUntilContextTimeout(ctx(t), 50*time.Millisecond, 30*time.Second, true, func(c context.Context) (bool, error) {
		l, err := hosts(hostsV2).List(c, webV2)
		return err == nil && slices.Equal(names(l), []string{"late"}), nil
	})
	if err != nil {
		t.Errorf("late is never selected at v2 once the webhook answers: %v", err)
	}
}
