package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/server"
)

const kindsNamespace = "kinds"

// kindTemplates are valid objects of every kind but Namespace, keyed by
// resource (group-qualified where the plural is shared).
func kindTemplates(t *testing.T) map[string]string {
	csr := base64.StdEncoding.EncodeToString(csrPEM(t))
	pod := `"template":{"metadata":{"labels":{"app":"k"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`
	jobPod := `"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}`
	return map[string]string{
		"pods":                            `{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"c","image":"busybox"}]}}`,
		"nodes":                           `{"apiVersion":"v1","kind":"Node","spec":{}}`,
		"services":                        `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":80}]}}`,
		"endpoints":                       `{"apiVersion":"v1","kind":"Endpoints","subsets":[{"addresses":[{"ip":"10.1.2.3"}],"ports":[{"port":80}]}]}`,
		"configmaps":                      `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}`,
		"secrets":                         `{"apiVersion":"v1","kind":"Secret","data":{"a":"Yg=="}}`,
		"events":                          `{"apiVersion":"v1","kind":"Event","involvedObject":{"kind":"Pod","name":"p","namespace":"kinds"},"reason":"R","message":"m","type":"Normal"}`,
		"serviceaccounts":                 `{"apiVersion":"v1","kind":"ServiceAccount"}`,
		"limitranges":                     `{"apiVersion":"v1","kind":"LimitRange","spec":{"limits":[{"type":"Container","max":{"cpu":"2"}}]}}`,
		"resourcequotas":                  `{"apiVersion":"v1","kind":"ResourceQuota","spec":{"hard":{"configmaps":"100"}}}`,
		"replicationcontrollers":          `{"apiVersion":"v1","kind":"ReplicationController","spec":{"replicas":0,"selector":{"app":"k"},` + pod + `}}`,
		"podtemplates":                    `{"apiVersion":"v1","kind":"PodTemplate",` + pod + `}`,
		"persistentvolumes":               `{"apiVersion":"v1","kind":"PersistentVolume","spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp/pv"}}}`,
		"persistentvolumeclaims":          `{"apiVersion":"v1","kind":"PersistentVolumeClaim","spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`,
		"replicasets":                     `{"apiVersion":"apps/v1","kind":"ReplicaSet","spec":{"replicas":0,"selector":{"matchLabels":{"app":"k"}},` + pod + `}}`,
		"deployments":                     `{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":0,"selector":{"matchLabels":{"app":"k"}},` + pod + `}}`,
		"statefulsets":                    `{"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"replicas":0,"serviceName":"s","selector":{"matchLabels":{"app":"k"}},` + pod + `}}`,
		"daemonsets":                      `{"apiVersion":"apps/v1","kind":"DaemonSet","spec":{"selector":{"matchLabels":{"app":"k"}},` + pod + `}}`,
		"controllerrevisions":             `{"apiVersion":"apps/v1","kind":"ControllerRevision","data":{"x":1},"revision":1}`,
		"jobs":                            `{"apiVersion":"batch/v1","kind":"Job","spec":{"suspend":true,` + jobPod + `}}`,
		"cronjobs":                        `{"apiVersion":"batch/v1","kind":"CronJob","spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{` + jobPod + `}}}}`,
		"leases":                          `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","spec":{"holderIdentity":"h"}}`,
		"endpointslices":                  `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","addressType":"IPv4","endpoints":[{"addresses":["10.1.2.3"]}]}`,
		"mutatingwebhookconfigurations":   `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration","webhooks":[]}`,
		"validatingwebhookconfigurations": `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","webhooks":[]}`,
		"roles":                           `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`,
		"clusterroles":                    `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`,
		"rolebindings":                    `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},"subjects":[{"kind":"User","name":"u","apiGroup":"rbac.authorization.k8s.io"}]}`,
		"clusterrolebindings":             `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"r"},"subjects":[{"kind":"User","name":"u","apiGroup":"rbac.authorization.k8s.io"}]}`,
		"priorityclasses":                 `{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","value":1000}`,
		"runtimeclasses":                  `{"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","handler":"runc"}`,
		"ingresses":                       `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","spec":{"defaultBackend":{"service":{"name":"web","port":{"number":80}}}}}`,
		"ingressclasses":                  `{"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","spec":{"controller":"example.com/ingress"}}`,
		"networkpolicies":                 `{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","spec":{"podSelector":{}}}`,
		"poddisruptionbudgets":            `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"k"}}}}`,
		"events.k8s.io": `{"apiVersion":"events.k8s.io/v1","kind":"Event","eventTime":"2024-01-01T00:00:00.000000Z","reportingController":"skiff.dev/test",
			"reportingInstance":"i","action":"Test","reason":"Tested","note":"n","type":"Normal","regarding":{"kind":"Pod","name":"p","namespace":"kinds"}}`,
		"storageclasses":       `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","provisioner":"example.com/p"}`,
		"csidrivers":           `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","spec":{}}`,
		"csinodes":             `{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","spec":{"drivers":[]}}`,
		"csistoragecapacities": `{"apiVersion":"storage.k8s.io/v1","kind":"CSIStorageCapacity","storageClassName":"standard","capacity":"1Gi"}`,
		"volumeattachments":    `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttachment","spec":{"attacher":"example.com/a","nodeName":"n","source":{"persistentVolumeName":"pv"}}}`,
		"certificatesigningrequests": `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","spec":{"signerName":"example.com/s",
			"usages":["client auth"],"request":"` + csr + `"}}`,
		"flowschemas":                 `{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","spec":{"priorityLevelConfiguration":{"name":"p"},"matchingPrecedence":500}}`,
		"prioritylevelconfigurations": `{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfiguration","spec":{"type":"Limited","limited":{"limitResponse":{"type":"Reject"}}}}`,

		"validatingadmissionpolicies":       `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},"validations":[{"expression":"true"}]}}`,
		"validatingadmissionpolicybindings": `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","spec":{"policyName":"nothing","validationActions":["Deny"]}}`,
		// spec.version and spec.group are set from the name (objectFrom).
		"horizontalpodautoscalers.v2": `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"},"maxReplicas":3}}`,
		"horizontalpodautoscalers.v1": `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"},"maxReplicas":3}}`,
		"apiservices":                 `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","spec":{"groupPriorityMinimum":1000,"versionPriority":15,"service":{"namespace":"kinds","name":"nothing"}}}`,
	}
}

func csrPEM(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "kinds"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func templateKey(r *registry.Resource) string {
	if r.Group == "events.k8s.io" {
		return "events.k8s.io"
	}
	if r.Group == "autoscaling" {
		return r.Resource + "." + r.Version
	}
	return r.Resource
}

// objectFrom builds an object of r named name from its template.
func objectFrom(t *testing.T, r *registry.Resource, tmpl, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(tmpl), &u.Object); err != nil {
		t.Fatalf("template of %s: %v", r.Resource, err)
	}
	u.SetName(name)
	u.SetLabels(lbls)
	if r.Kind == "APIService" {
		// Its name must be <version>.<group>.
		version, group, _ := strings.Cut(name, ".")
		_ = unstructured.SetNestedField(u.Object, version, "spec", "version")
		_ = unstructured.SetNestedField(u.Object, group, "spec", "group")
	}
	return u
}

// TestEveryKind exercises create, get, list, watch, update, patch, status,
// delete and deletecollection on every kind in the resource table through
// client-go's dynamic client.
func TestEveryKind(t *testing.T) {
	// Without StorageObjectInUseProtection: its finalizers keep deleted
	// claims and volumes until the controller manager's protection
	// controllers, which do not run here, remove them.
	ts := start(t, func(o *server.Options) {
		o.DisableAdmissionPlugins = append(o.DisableAdmissionPlugins, "StorageObjectInUseProtection")
	})
	dyn, err := dynamic.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx(t),
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": kindsNamespace}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	templates := kindTemplates(t)
	for _, r := range registry.Resources() {
		if r.Kind == "Namespace" {
			continue
		}
		r := r
		t.Run(r.GroupResource().String(), func(t *testing.T) {
			tmpl, ok := templates[templateKey(r)]
			if !ok {
				t.Fatalf("no template for %s: add one to kindTemplates", r.GroupResource())
			}
			var c dynamic.ResourceInterface = dyn.Resource(r.GroupVersion().WithResource(r.Resource))
			if r.Namespaced {
				c = dyn.Resource(r.GroupVersion().WithResource(r.Resource)).Namespace(kindsNamespace)
			}
			exerciseKind(t, r, c, tmpl)
		})
	}
}

func exerciseKind(t *testing.T, r *registry.Resource, c dynamic.ResourceInterface, tmpl string) {
	name := "k-" + strings.ReplaceAll(strings.ToLower(r.Kind), ".", "-")
	if r.Kind == "CSIDriver" {
		name = "csi.example.com"
	}
	if r.Kind == "APIService" {
		name = "v1.k-apiservice.example.com"
	}
	list, err := c.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	w, err := c.Watch(ctx(t), metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	created, err := c.Create(ctx(t), objectFrom(t, r, tmpl, name, map[string]string{"step": "created"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetKind() != r.Kind {
		t.Fatalf("create answered %s uid=%q rv=%q", created.GetKind(), created.GetUID(), created.GetResourceVersion())
	}
	expectEvent(t, w, watch.Added, name)
	if r.Kind == "APIService" {
		// The availability controller writes its status (ServiceNotFound)
		// once; the updates below name the resourceVersion they read.
		if err := waitFor(t, func() error {
			u, err := c.Get(ctx(t), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); len(conds) == 0 {
				return fmt.Errorf("no conditions yet")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	got, err := c.Get(ctx(t), name, metav1.GetOptions{})
	if err != nil || got.GetUID() != created.GetUID() {
		t.Fatalf("get: %v %v", err, got)
	}
	list, err = c.List(ctx(t), metav1.ListOptions{LabelSelector: "step=created"})
	if err != nil || !containsName(list, name) {
		t.Fatalf("list: %v, %s not in it", err, name)
	}

	got.SetLabels(map[string]string{"step": "updated"})
	updated, err := c.Update(ctx(t), got, metav1.UpdateOptions{})
	if err != nil || updated.GetLabels()["step"] != "updated" {
		t.Fatalf("update: %v %v", err, updated)
	}
	expectEvent(t, w, watch.Modified, name)

	patched, err := c.Patch(ctx(t), name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"patched":"yes"}}}`), metav1.PatchOptions{})
	if err != nil || patched.GetAnnotations()["patched"] != "yes" {
		t.Fatalf("patch: %v %v", err, patched)
	}
	expectEvent(t, w, watch.Modified, name)

	if r.StatusStrategy != nil {
		cur, err := c.Get(ctx(t), name, metav1.GetOptions{}, "status")
		if err != nil {
			t.Fatalf("get status: %v", err)
		}
		cur.SetLabels(map[string]string{"step": "via-status"})
		st, err := c.UpdateStatus(ctx(t), cur, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update status: %v", err)
		}
		// As upstream: the status endpoint may change metadata, except a
		// Deployment's labels.
		want := "via-status"
		if r.Kind == "Deployment" {
			want = "updated"
		}
		if st.GetLabels()["step"] != want {
			t.Errorf("labels after a status update: %v, want step=%s", st.GetLabels(), want)
		}
	}

	if err := c.Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	expectEvent(t, w, watch.Deleted, name)
	if _, err := c.Get(ctx(t), name, metav1.GetOptions{}); err == nil {
		t.Fatalf("%s still there after delete", name)
	}

	for i := 0; i < 2; i++ {
		n := fmt.Sprintf("%s-dc%d", name, i)
		if r.Kind == "CSIDriver" {
			n = fmt.Sprintf("dc%d.csi.example.com", i)
		}
		if _, err := c.Create(ctx(t), objectFrom(t, r, tmpl, n, map[string]string{"dc": "yes"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create for deletecollection: %v", err)
		}
	}
	if err := c.DeleteCollection(ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "dc=yes"}); err != nil {
		t.Fatalf("deletecollection: %v", err)
	}
	list, err = c.List(ctx(t), metav1.ListOptions{LabelSelector: "dc=yes"})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("after deletecollection: %v, %d left", err, len(list.Items))
	}
}

func containsName(list *unstructured.UnstructuredList, name string) bool {
	for _, i := range list.Items {
		if i.GetName() == name {
			return true
		}
	}
	return false
}

func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed waiting for %s of %s", typ, name)
			}
			u, isU := e.Object.(*unstructured.Unstructured)
			if e.Type == typ && isU && u.GetName() == name {
				return
			}
		case <-deadline:
			t.Fatalf("no %s event for %s", typ, name)
		}
	}
}
