// Package encoding encodes API objects into byte slices without copying
// them more than the serializer must.
package encoding

import (
	"bytes"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
)

// Encode returns obj's encoding by enc. The protobuf serializer (and a
// versioning codec over it) sizes the encoding first and writes it into
// memory it asks an allocator for; Encode gives it one and keeps that
// memory, where encoding into a bytes.Buffer would allocate a second buffer
// and copy the encoding into it. Any other encoder writes into a
// bytes.Buffer.
func Encode(enc runtime.Encoder, obj runtime.Object) ([]byte, error) {
	if ea, ok := enc.(runtime.EncoderWithAllocator); ok {
		w := &keepWriter{}
		if err := ea.EncodeWithAllocator(obj, w, w); err != nil {
			return nil, err
		}
		return w.out, nil
	}
	var buf bytes.Buffer
	if err := enc.Encode(obj, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// keepWriter is the allocator and the writer of one encoding: a write of
// the memory it allocated (the whole encoding, written once) is kept as it
// is; anything else is copied, as io.Writer requires.
type keepWriter struct {
	mem []byte
	out []byte
}

func (w *keepWriter) Allocate(n uint64) []byte {
	w.mem = make([]byte, n)
	return w.mem
}

func (w *keepWriter) Write(p []byte) (int, error) {
	if w.out == nil && len(p) > 0 && len(w.mem) > 0 && unsafe.SliceData(p) == unsafe.SliceData(w.mem) && len(p) <= len(w.mem) {
		// Ours, and nobody writes to it again: the serializer is done
		// with it once it has written it.
		w.out, w.mem = p[:len(p):len(p)], nil
		return len(p), nil
	}
	w.out = append(w.out, p...)
	return len(p), nil
}
