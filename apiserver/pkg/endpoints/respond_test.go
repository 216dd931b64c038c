package endpoints

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/api"
)

// TestRespondWritten: a protobuf answer to a create is made of the bytes
// written to etcd, with the resourceVersion put in, when they are of the
// answered object's kind; any other answer encodes the object.
func TestRespondWritten(t *testing.T) {
	codecs := api.NewCodecs()
	h := NewHandler(codecs, nil, nil)
	var pb, js runtime.Serializer
	for _, i := range codecs.Factory.SupportedMediaTypes() {
		switch i.MediaType {
		case runtime.ContentTypeProtobuf:
			pb = i.Serializer
		case runtime.ContentTypeJSON:
			js = i.Serializer
		}
	}
	store := codecs.Factory.CodecForVersions(pb, pb, corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)
	stored := func(obj runtime.Object) []byte {
		t.Helper()
		data, err := runtime.Encode(store, obj)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	encode := func(enc runtime.Encoder, obj runtime.Object) []byte {
		t.Helper()
		data, err := runtime.Encode(enc, obj)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	pod := func(label string) *corev1.Pod {
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"l": label}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	answered := pod("answered")
	answered.ResourceVersion = "17"
	// What was written: the same pod, or, to tell which bytes the answer
	// was made of, one with another label.
	same, other := pod("answered"), pod("written")
	otherAnswer := other.DeepCopy()
	otherAnswer.ResourceVersion = "17"
	configMap := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "p"}}

	const protobuf = "application/vnd.kubernetes.protobuf"
	for _, c := range []struct {
		name, accept string
		written      []byte
		want         []byte
	}{
		{"protobuf, as written", protobuf, stored(same), encode(pb, answered)},
		{"protobuf, made of the written bytes", protobuf, stored(other), encode(pb, otherAnswer)},
		{"protobuf, nothing written", protobuf, nil, encode(pb, answered)},
		{"protobuf, another kind written", protobuf, stored(configMap), encode(pb, answered)},
		{"protobuf, JSON written", protobuf, encode(js, same), encode(pb, answered)},
		{"JSON", "application/json", stored(other), encode(js, answered)},
		{"JSON or protobuf", "application/json, " + protobuf, stored(other), encode(js, answered)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/ns/pods", nil)
			r.Header.Set("Accept", c.accept)
			w := httptest.NewRecorder()
			h.respondWritten(w, r, http.StatusCreated, answered, c.written)
			if w.Code != http.StatusCreated {
				t.Fatalf("code %d: %s", w.Code, w.Body)
			}
			if got := w.Body.Bytes(); !bytes.Equal(got, c.want) {
				t.Errorf("answered\n%q\nwant\n%q", got, c.want)
			}
			if ct := w.Header().Get("Content-Type"); ct != c.accept && !bytes.HasPrefix([]byte(c.accept), []byte(ct)) {
				t.Errorf("Content-Type %q for Accept %q", ct, c.accept)
			}
		})
	}

	// A table is made of the object, whatever was written.
	r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/ns/pods", nil)
	r.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	w := httptest.NewRecorder()
	h.respondWritten(w, r, http.StatusCreated, answered, stored(other))
	if w.Code != http.StatusCreated || !bytes.Contains(w.Body.Bytes(), []byte(`"kind":"Table"`)) {
		t.Errorf("table: %d %s", w.Code, w.Body)
	}
}
