// Package encoding encodes API objects into byte slices.
package encoding

import "k8s.io/apimachinery/pkg/runtime"

// Encode returns obj's encoding by enc: runtime.Encode, the serializer
// writing into a bytes.Buffer, as upstream's apiserver encodes. A
// serializer's own buffer is not kept in place of the copy into the
// bytes.Buffer: that saved one copy of a few kilobytes per object, well
// under 5% of a create end to end (docs/benchmarks.md, issue 27).
func Encode(enc runtime.Encoder, obj runtime.Object) ([]byte, error) {
	return runtime.Encode(enc, obj)
}
