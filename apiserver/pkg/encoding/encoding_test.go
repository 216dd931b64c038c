package encoding

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func testPod() *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "x"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
}

// TestEncodeMatchesTheEncoder: the bytes are the encoder's, for the
// protobuf serializer (which takes an allocator) and JSON (which does not).
func TestEncodeMatchesTheEncoder(t *testing.T) {
	for name, enc := range map[string]runtime.Encoder{
		"protobuf": protobuf.NewSerializer(scheme.Scheme, scheme.Scheme),
		"json":     json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{}),
		"versioning codec over protobuf": scheme.Codecs.CodecForVersions(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), nil,
			corev1.SchemeGroupVersion, nil),
	} {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			if err := enc.Encode(testPod(), &want); err != nil {
				t.Fatal(err)
			}
			got, err := Encode(enc, testPod())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("Encode = %q, want %q", got, want.Bytes())
			}
		})
	}
}
