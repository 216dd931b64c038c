package integration

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// hostWebhook is a conversion webhook between v1 (spec.host) and v2
// (spec.hostname) of Hosts. It also tries to rename the objects and adds a
// label: the server must keep the names and may take the label.
type hostWebhook struct {
	calls atomic.Int32
	fail  atomic.Bool
	mu    sync.Mutex
	last  *apiextensionsv1.ConversionRequest
}

func (h *hostWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.calls.Add(1)
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.last = review.Request
	h.mu.Unlock()
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	if h.fail.Load() {
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: "the converter is down"}
	}
	for _, raw := range review.Request.Objects {
		var obj map[string]any
		_ = json.Unmarshal(raw.Raw, &obj)
		spec, _ := obj["spec"].(map[string]any)
		if review.Request.DesiredAPIVersion == "hosts.skiff.dev/v2" {
			spec["hostname"] = spec["host"]
			delete(spec, "host")
		} else {
			spec["host"] = spec["hostname"]
			delete(spec, "hostname")
		}
		obj["apiVersion"] = review.Request.DesiredAPIVersion
		meta := obj["metadata"].(map[string]any)
		meta["name"] = "renamed"
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
		}
		labels["converted"] = "yes"
		meta["labels"] = labels
		data, _ := json.Marshal(obj)
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtimeRaw(data))
	}
	review.Response, review.Request = resp, nil
	_ = json.NewEncoder(w).Encode(review)
}

// hostCRD is the CRD of Hosts, v1 (spec.host, the storage version) and v2
// (spec.hostname), converted by the hostWebhook served at url.
func hostCRD(url string, caBundle []byte) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "hosts.hosts.skiff.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "hosts.skiff.dev", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "hosts", Singular: "host", Kind: "Host", ListKind: "HostList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{hostVersion("v1", "host", true), hostVersion("v2", "hostname", false)},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: ptr.To(url + "/convert"), CABundle: caBundle}}},
		},
	}
}

func hostVersion(name, field string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
	return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{field: {Type: "string"}}},
			}}}}
}

// TestCustomResourceConversionWebhook: a CRD with a conversion webhook is
// accepted; objects written at one version are stored at the storage
// version and read, listed and watched at the other through the webhook
// (names kept, labels taken); reading at the storage version needs no
// call; a failing webhook makes reads at the other version a 500 naming it.
func TestCustomResourceConversionWebhook(t *testing.T) {
	ts := start(t, nil)
	hook := &hostWebhook{}
	srv := httptest.NewTLSServer(hook)
	t.Cleanup(srv.Close)
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	ext, dyn := crdClients(t, ts)
	crd := hostCRD(srv.URL, caBundle)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx(t), crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a CRD with a conversion webhook: %v", err)
	}
	v1 := schema.GroupVersionResource{Group: "hosts.skiff.dev", Version: "v1", Resource: "hosts"}
	v2 := schema.GroupVersionResource{Group: "hosts.skiff.dev", Version: "v2", Resource: "hosts"}
	waitEstablished(t, ext, dyn, crd.Name, v1)

	w, err := dyn.Resource(v2).Namespace("default").Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := dyn.Resource(v2).Namespace("default").Create(ctx(t), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hosts.skiff.dev/v2", "kind": "Host", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"hostname": "web.example"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create at v2: %v", err)
	}
	if created.GetName() != "web" || created.GetAPIVersion() != "hosts.skiff.dev/v2" || created.Object["spec"].(map[string]any)["hostname"] != "web.example" {
		t.Errorf("created: %v", created.Object)
	}
	if created.GetLabels()["converted"] != "yes" {
		t.Errorf("the webhook's label was not taken: %v", created.GetLabels())
	}

	// The watch at v2 sees the object converted (and, once it has, no
	// conversion is pending).
	select {
	case ev := <-w.ResultChan():
		u := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Added || u.GetAPIVersion() != "hosts.skiff.dev/v2" || u.Object["spec"].(map[string]any)["hostname"] != "web.example" {
			t.Errorf("watch at v2: %s %v", ev.Type, u.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event at v2")
	}

	// Stored at v1, read at v1 without a call.
	calls := hook.calls.Load()
	stored, err := dyn.Resource(v1).Namespace("default").Get(ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Object["spec"].(map[string]any)["host"] != "web.example" || stored.GetAPIVersion() != "hosts.skiff.dev/v1" {
		t.Errorf("at v1: %v", stored.Object)
	}
	if hook.calls.Load() != calls {
		t.Errorf("reading at the storage version called the webhook")
	}

	list, err := dyn.Resource(v2).Namespace("default").List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Object["spec"].(map[string]any)["hostname"] != "web.example" || list.Items[0].GetName() != "web" {
		t.Errorf("list at v2: %v", list.Items)
	}
	hook.mu.Lock()
	desired := hook.last.DesiredAPIVersion
	hook.mu.Unlock()
	if desired != "hosts.skiff.dev/v2" {
		t.Errorf("last review asked for %q", desired)
	}
	hook.fail.Store(true)
	_, err = dyn.Resource(v2).Namespace("default").Get(ctx(t), "web", metav1.GetOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "conversion webhook for hosts.hosts.skiff.dev failed") ||
		!strings.Contains(err.Error(), "the converter is down") {
		t.Errorf("read through a failing webhook: %v", err)
	}
	if _, err := dyn.Resource(v1).Namespace("default").Get(ctx(t), "web", metav1.GetOptions{}); err != nil {
		t.Errorf("read at the storage version with the webhook down: %v", err)
	}
}

func runtimeRaw(data []byte) runtime.RawExtension { return runtime.RawExtension{Raw: data} }
