package integration

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestListSelectorsAndPaging(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client.CoreV1().Pods("default")
	for i := 0; i < 25; i++ {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%02d", i), Labels: map[string]string{"parity": []string{"even", "odd"}[i%2]}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		if i < 5 {
			pod.Spec.NodeName = "node-a"
		}
		if _, err := c.Create(ctx(t), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		opts metav1.ListOptions
		want int
	}{
		{name: "all", want: 25},
		{name: "label", opts: metav1.ListOptions{LabelSelector: "parity=odd"}, want: 12},
		{name: "label set", opts: metav1.ListOptions{LabelSelector: "parity in (odd,even)"}, want: 25},
		{name: "field nodeName", opts: metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"}, want: 5},
		{name: "field unscheduled", opts: metav1.ListOptions{FieldSelector: "spec.nodeName="}, want: 20},
		{name: "field name", opts: metav1.ListOptions{FieldSelector: "metadata.name=p-03"}, want: 1},
		{name: "field phase", opts: metav1.ListOptions{FieldSelector: "status.phase=Pending"}, want: 25},
		{name: "label and field", opts: metav1.ListOptions{LabelSelector: "parity=even", FieldSelector: "spec.nodeName=node-a"}, want: 3},
		{name: "from cache", opts: metav1.ListOptions{ResourceVersion: "0"}, want: 25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list, err := c.List(ctx(t), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != tc.want {
				t.Errorf("%d items, want %d", len(list.Items), tc.want)
			}
			if list.ResourceVersion == "" {
				t.Error("list without resourceVersion")
			}
		})
	}

	// Paging: every object exactly once, in key order, at one revision.
	var names []string
	opts := metav1.ListOptions{Limit: 7}
	pages := 0
	for {
		list, err := c.List(ctx(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		if list.Continue == "" {
			break
		}
		if list.RemainingItemCount == nil || *list.RemainingItemCount != int64(25-len(names)) {
			t.Errorf("remainingItemCount %v after %d items", list.RemainingItemCount, len(names))
		}
		// Writes between pages do not show up in this list.
		if pages == 1 {
			if _, err := c.Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-99"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		opts.Continue = list.Continue
	}
	if len(names) != 25 || pages != 4 {
		t.Fatalf("paged %d names in %d pages: %v", len(names), pages, names)
	}
	for i, n := range names {
		if n != fmt.Sprintf("p-%02d", i) {
			t.Fatalf("page order: %v", names)
		}
	}

	// A continue token whose revision was compacted is 410 Expired.
	first, err := c.List(ctx(t), metav1.ListOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	// A write after the first page, then a compaction past the page's revision.
	if _, err := ts.Client.CoreV1().ConfigMaps("default").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bump"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := ts.Server.EtcdClient().Get(ctx(t), "compaction-probe")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Server.EtcdClient().Compact(ctx(t), cur.Header.Revision); err != nil {
		t.Fatal(err)
	}
	_, err = c.List(ctx(t), metav1.ListOptions{Limit: 5, Continue: first.Continue})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("continue after compaction: %v, want 410 Expired", err)
	}
	// As upstream, the 410 carries a token that continues the same list at
	// the latest revision: the rest of the names, and a pod written since.
	if _, err := c.Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-98"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().ListMeta.Continue == "" {
		t.Fatalf("the 410 Status carries no continue token: %#v", err)
	}
	if !strings.Contains(se.Status().Message, "use the continue token in this response") {
		t.Errorf("410 message: %q", se.Status().Message)
	}
	var rest []string
	token := se.Status().ListMeta.Continue
	for token != "" {
		page, err := c.List(ctx(t), metav1.ListOptions{Limit: 5, Continue: token})
		if err != nil {
			t.Fatalf("continuing with the inconsistent token: %v", err)
		}
		for _, cm := range page.Items {
			rest = append(rest, cm.Name)
		}
		token = page.Continue
	}
	sort.Strings(rest)
	if len(rest) == 0 || rest[0] <= first.Items[len(first.Items)-1].Name || !slices.Contains(rest, "p-98") {
		t.Errorf("inconsistent continuation gave %v after %s", rest, first.Items[len(first.Items)-1].Name)
	}
}

// TestJSONListFromCacheIsTheSerializers: a JSON list answered from the
// watch cache with the items' cached encodings has the very bytes of the
// same list read from etcd and encoded whole (a limit sends a list to
// etcd), before and after objects change, with selectors, and empty.
func TestJSONListFromCacheIsTheSerializers(t *testing.T) {
	ts := start(t, nil)
	pods := ts.Client.CoreV1().Pods("default")
	for i := 0; i < 20; i++ {
		pod := testPod(fmt.Sprintf("p-%02d", i), "")
		pod.Labels = map[string]string{"parity": []string{"even", "odd"}[i%2]}
		pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		pod.Annotations = map[string]string{"note": "<html> & \"quotes\""}
		if _, err := pods.Create(ctx(t), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(t *testing.T, path, query string) {
		t.Helper()
		code, cached := raw(t, ts, http.MethodGet, path+"?"+query, "", nil)
		limited := "limit=1000"
		if query != "" {
			limited = query + "&" + limited
		}
		code2, whole := raw(t, ts, http.MethodGet, path+"?"+limited, "", nil)
		if code != http.StatusOK || code2 != http.StatusOK {
			t.Fatalf("%s?%s: %d and %d", path, query, code, code2)
		}
		if !bytes.Equal(cached, whole) {
			t.Errorf("%s?%s: the cached list differs from the serializer's:\n%s\n%s", path, query, cached, whole)
		}
	}
	compare(t, "/api/v1/namespaces/default/pods", "")
	compare(t, "/api/v1/namespaces/default/pods", "labelSelector=parity%3Dodd")
	compare(t, "/api/v1/namespaces/nothing-here/pods", "")
	compare(t, "/api/v1/pods", "")
	// Changed objects are encoded again, not served from the old encoding.
	p, err := pods.Get(ctx(t), "p-03", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels["changed"] = "yes"
	if _, err := pods.Update(ctx(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	compare(t, "/api/v1/namespaces/default/pods", "")
	code, body := raw(t, ts, http.MethodGet, "/api/v1/namespaces/default/pods?labelSelector=changed%3Dyes", "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"name":"p-03"`) || strings.Count(string(body), `"uid"`) != 1 {
		t.Errorf("list of the changed pod: %d %s", code, body)
	}
}
