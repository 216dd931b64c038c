package endpoints

import (
	"context"
	"errors"
	"net/http/httptest"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/core/pod"
)

// recordingAdmission records the attributes it sees, changes the options
// in Admit as a mutating webhook may, and refuses in Validate when told.
type recordingAdmission struct {
	calls  []string
	seen   []admission.Attributes
	mutate func(obj any)
	deny   error
}

func (f *recordingAdmission) Admit(_ context.Context, a *admission.Attributes) error {
	f.calls = append(f.calls, "admit")
	f.seen = append(f.seen, *a)
	if f.mutate != nil {
		f.mutate(a.Object)
	}
	return nil
}

func (f *recordingAdmission) Validate(_ context.Context, a *admission.Attributes) error {
	f.calls = append(f.calls, "validate")
	f.seen = append(f.seen, *a)
	return f.deny
}

func TestAdmitConnect(t *testing.T) {
	h := &Handler{}
	rec := &recordingAdmission{mutate: func(obj any) { obj.(*corev1.PodAttachOptions).Container = "mutated" }}
	pods := &registry.Store{R: &registry.Resource{Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true, Kubelet: pod.Kubelet}, Admission: rec}
	user := &authn.User{Name: "alice", Groups: []string{"devs"}}
	r := httptest.NewRequest("POST", "/api/v1/namespaces/ns1/pods/p1/attach?container=c1&stdin=true", nil)
	r = r.WithContext(authn.WithUser(r.Context(), user))

	opts, err := h.admittedConnectOptions(r, pods, registry.SubAttach, "ns1", "p1", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rec.calls, []string{"admit", "validate"}) {
		t.Errorf("calls = %v, want admit then validate", rec.calls)
	}
	a := rec.seen[1]
	if a.Operation != admission.Connect || a.Subresource != "attach" || a.Namespace != "ns1" || a.Name != "p1" || a.User != user ||
		a.Resource != (schema.GroupVersionResource{Version: "v1", Resource: "pods"}) ||
		a.Kind != (schema.GroupVersionKind{Version: "v1", Kind: "PodAttachOptions"}) || a.OldObject != nil || a.DryRun {
		t.Errorf("attributes = %+v", a)
	}
	// The request is served with what the mutating plugins left.
	if o := opts.(*corev1.PodAttachOptions); o.Container != "mutated" || !o.Stdin {
		t.Errorf("options served = %+v, want the mutated container and stdin", o)
	}

	// A refusal is the client's answer.
	rec.deny = apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p1", errors.New("no"))
	if _, err := h.admittedConnectOptions(r, pods, registry.SubAttach, "ns1", "p1", "", false); !apierrors.IsForbidden(err) {
		t.Errorf("refused: err = %v, want 403", err)
	}

	// dryRun is upstream's 400, before admission.
	rec.calls = nil
	dry := httptest.NewRequest("POST", "/api/v1/namespaces/ns1/pods/p1/exec?command=ls&dryRun=All", nil)
	if _, err := h.admittedConnectOptions(dry, pods, registry.SubExec, "ns1", "p1", "", false); !apierrors.IsBadRequest(err) || len(rec.calls) != 0 {
		t.Errorf("dryRun: err = %v, admission calls %v; want 400 and none", err, rec.calls)
	}
}
