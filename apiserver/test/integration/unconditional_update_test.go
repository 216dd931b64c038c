package integration

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A PUT without metadata.resourceVersion overwrites the object for the
// kinds whose upstream strategy allows unconditional updates, and is
// refused with upstream's 422 for the others.
func TestUnconditionalUpdates(t *testing.T) {
	ts := start(t, nil)
	ext, dyn := crdClients(t, ts)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx(t), widgetCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, dyn, "widgets."+widgetGroup, schema.GroupVersionResource{Group: widgetGroup, Version: "v1", Resource: "widgets"})

	tests := []struct {
		name        string
		collection  string
		create      string // body without resourceVersion; the PUT sends it again with a label
		conditional bool
	}{
		{name: "configmap", collection: "/api/v1/namespaces/default/configmaps",
			create: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"data":{"a":"b"}}`},
		{name: "secret", collection: "/api/v1/namespaces/default/secrets",
			create: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"u"},"stringData":{"a":"b"}}`},
		{name: "resourcequota", collection: "/api/v1/namespaces/default/resourcequotas",
			create: `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"u"},"spec":{"hard":{"pods":"5"}}}`},
		{name: "namespace", collection: "/api/v1/namespaces",
			create: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"u"}}`},
		{name: "service", collection: "/api/v1/namespaces/default/services",
			create: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"u"},"spec":{"selector":{"a":"b"},"ports":[{"port":80}]}}`},
		{name: "deployment", collection: "/apis/apps/v1/namespaces/default/deployments",
			create: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"u"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`},
		{name: "clusterrole", collection: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
			create: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"u"}}`},
		{name: "priorityclass", collection: "/apis/scheduling.k8s.io/v1/priorityclasses",
			create: `{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"u"},"value":10}`},
		{name: "lease", collection: "/apis/coordination.k8s.io/v1/namespaces/default/leases", conditional: true,
			create: `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"u"}}`},
		{name: "runtimeclass", collection: "/apis/node.k8s.io/v1/runtimeclasses", conditional: true,
			create: `{"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"u"},"handler":"runc"}`},
		{name: "poddisruptionbudget", collection: "/apis/policy/v1/namespaces/default/poddisruptionbudgets", conditional: true,
			create: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"u"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"a":"b"}}}}`},
		{name: "validatingwebhookconfiguration", collection: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", conditional: true,
			create: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"u"}}`},
		{name: "csidriver", collection: "/apis/storage.k8s.io/v1/csidrivers", conditional: true,
			create: `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"u.example.com"},"spec":{}}`},
		{name: "customresource", collection: "/apis/" + widgetGroup + "/v1/namespaces/default/widgets", conditional: true,
			create: `{"apiVersion":"` + widgetGroup + `/v1","kind":"Widget","metadata":{"name":"u"},"spec":{"replicas":1,"color":"red"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := raw(t, ts, http.MethodPost, tc.collection, "application/json", []byte(tc.create))
			if code != http.StatusCreated {
				t.Fatalf("create: %d %s", code, body)
			}
			name := "u"
			if tc.name == "csidriver" {
				name = "u.example.com"
			}
			put := strings.Replace(tc.create, `"metadata":{"name":"`+name+`"}`, `"metadata":{"name":"`+name+`","labels":{"put":"yes"}}`, 1)
			code, body = raw(t, ts, http.MethodPut, tc.collection+"/"+name, "application/json", []byte(put))
			if tc.conditional {
				if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update") {
					t.Errorf("PUT without resourceVersion: %d %s, want 422 must be specified for an update", code, body)
				}
				return
			}
			if code != http.StatusOK || !strings.Contains(string(body), `"put":"yes"`) {
				t.Errorf("PUT without resourceVersion: %d %s, want 200 with the label", code, body)
			}
			// Stored, not only answered.
			if code, body = raw(t, ts, http.MethodGet, tc.collection+"/"+name, "", nil); code != http.StatusOK || !strings.Contains(string(body), `"put":"yes"`) {
				t.Errorf("GET after the PUT: %d %s, want the label stored", code, body)
			}
		})
	}

	// The CustomResourceDefinition itself is conditional, as upstream's.
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx(t), "widgets."+widgetGroup, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.ResourceVersion = ""
	crd.Labels = map[string]string{"put": "yes"}
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx(t), crd, metav1.UpdateOptions{})
	if err == nil || !strings.Contains(err.Error(), "must be specified for an update") {
		t.Errorf("CRD update without resourceVersion: %v", err)
	}
}
