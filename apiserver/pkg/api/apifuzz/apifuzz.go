// Package apifuzz fills API objects at random for tests that compare two
// ways of handling them.
package apifuzz

import (
	"fmt"
	"time"

	fuzz "github.com/google/gofuzz"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apiextensions"
	"skiff.dev/apiserver/pkg/registry"
)

// New returns a fuzzer that fills objects at random with values the API
// accepts in form (valid quantities, times to the second as the API keeps
// them, JSON in raw extensions), so that every path can type them. With
// few, strings and numbers come from a small set (zero among them), so that
// list keys repeat and zero values abound.
func New(seed int64, few bool) *fuzz.Fuzzer {
	f := fuzz.NewWithSeed(seed).NilChance(0.25).NumElements(0, 3).MaxDepth(7)
	if few {
		f = f.Funcs(
			func(s *string, c fuzz.Continue) { *s = []string{"", "a", "b"}[c.Intn(3)] },
			func(i *int32, c fuzz.Continue) { *i = int32(c.Intn(2)) },
			func(i *int64, c fuzz.Continue) { *i = int64(c.Intn(2)) },
			func(b *bool, c fuzz.Continue) { *b = c.Intn(3) == 0 },
		)
	}
	return f.Funcs(
		func(q *resource.Quantity, c fuzz.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), resource.DecimalSI)
		},
		func(t *metav1.Time, c fuzz.Continue) {
			if c.RandBool() {
				*t = metav1.Time{}
				return
			}
			*t = metav1.NewTime(time.Unix(c.Int63n(1<<32), 0))
		},
		func(t *metav1.MicroTime, c fuzz.Continue) {
			if c.RandBool() {
				*t = metav1.MicroTime{}
				return
			}
			*t = metav1.NewMicroTime(time.Unix(c.Int63n(1<<32), c.Int63n(1e9)))
		},
		func(d *metav1.Duration, c fuzz.Continue) {
			d.Duration = time.Duration(c.Int63n(1 << 40))
		},
		func(e *runtime.RawExtension, c fuzz.Continue) {
			switch c.Intn(3) {
			case 0:
				*e = runtime.RawExtension{}
			case 1:
				e.Raw = []byte(fmt.Sprintf(`{"a":%d,"b":["x"]}`, c.Intn(100)))
			default:
				e.Raw = []byte(`"s"`)
			}
		},
		func(f *metav1.FieldsV1, c fuzz.Continue) {
			f.Raw = []byte(`{"f:metadata":{}}`)
		},
	)
}

// EachStored calls f with perKind objects of each kind the server stores
// in protobuf (its built-in resources and CustomResourceDefinitions), each
// filled at random by the next of fuzzers in turn, with its kind and
// apiVersion set; what names the object in messages.
func EachStored(perKind int, fuzzers []*fuzz.Fuzzer, f func(r *registry.Resource, what string, obj runtime.Object)) {
	for _, r := range append(registry.Resources(), apiextensions.CRDResource()) {
		if r.Custom != nil {
			continue
		}
		for i := 0; i < perKind; i++ {
			obj := r.New()
			fuzzers[i%len(fuzzers)].Fuzz(obj)
			obj.GetObjectKind().SetGroupVersionKind(r.GroupVersionKind())
			f(r, fmt.Sprintf("%s #%d", r.Resource, i), obj)
		}
	}
}
