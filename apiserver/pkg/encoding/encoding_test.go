package encoding

import (
	"bytes"
	"io"
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

// TestEncodeKeepsTheAllocatorsMemory: the protobuf encoding is the memory
// the serializer was given, not a copy of it.
func TestEncodeKeepsTheAllocatorsMemory(t *testing.T) {
	enc := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	p := testPod()
	viaBuffer := testing.AllocsPerRun(100, func() {
		var b bytes.Buffer
		_ = enc.Encode(p, &b)
	})
	kept := testing.AllocsPerRun(100, func() { _, _ = Encode(enc, p) })
	if kept >= viaBuffer {
		t.Errorf("Encode makes %v allocations, a bytes.Buffer %v: the encoding was copied", kept, viaBuffer)
	}
}

// reuser is an encoder with an allocator that writes from a buffer of its
// own, in two writes, and then overwrites that buffer: nothing it wrote
// may be kept.
type reuser struct{ own []byte }

func (r *reuser) Encode(obj runtime.Object, w io.Writer) error {
	return r.EncodeWithAllocator(obj, w, nil)
}
func (r *reuser) Identifier() runtime.Identifier { return "reuser" }
func (r *reuser) EncodeWithAllocator(_ runtime.Object, w io.Writer, a runtime.MemoryAllocator) error {
	if a != nil {
		_ = a.Allocate(8) // asked for, then not used
	}
	copy(r.own, "abcdefgh")
	if _, err := w.Write(r.own[:4]); err != nil {
		return err
	}
	if _, err := w.Write(r.own[4:]); err != nil {
		return err
	}
	copy(r.own, "XXXXXXXX")
	return nil
}

// split writes the allocator's memory in two writes.
type split struct{}

func (split) Encode(obj runtime.Object, w io.Writer) error { return nil }
func (split) Identifier() runtime.Identifier               { return "split" }
func (split) EncodeWithAllocator(_ runtime.Object, w io.Writer, a runtime.MemoryAllocator) error {
	mem := a.Allocate(8)
	copy(mem, "abcdefgh")
	if _, err := w.Write(mem[:3]); err != nil {
		return err
	}
	_, err := w.Write(mem[3:])
	return err
}

func TestEncodeCopiesWhatIsNotItsOwn(t *testing.T) {
	for name, enc := range map[string]runtime.Encoder{"own buffer": &reuser{own: make([]byte, 8)}, "allocated, split": split{}} {
		t.Run(name, func(t *testing.T) {
			got, err := Encode(enc, testPod())
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "abcdefgh" {
				t.Errorf("Encode = %q, want abcdefgh", got)
			}
		})
	}
}
