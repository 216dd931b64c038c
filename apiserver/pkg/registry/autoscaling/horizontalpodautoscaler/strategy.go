// Package horizontalpodautoscaler holds the HorizontalPodAutoscaler kind's
// strategies and defaults, of both served versions: autoscaling/v1 is
// stored as autoscaling/v2.
package horizontalpodautoscaler

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/convert"
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy is the autoscaling/v2 HPA's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(v2Validation)
	StatusStrategy = rest.Status(v2Validation)
)

var v2Validation = rest.Validation(validation.ValidateHorizontalPodAutoscaler, validation.ValidateHorizontalPodAutoscalerUpdate)

// Default applies upstream's autoscaling/v2 defaults.
var Default = rest.Defaults(defaults.DefaultHorizontalPodAutoscaler)

// V1Strategy is the autoscaling/v1 HPA's main endpoint; V1StatusStrategy
// its status. Each keeps the annotations that carry the v2 fields the other
// endpoint owns.
var (
	V1Strategy       = hpaV1Strategy{rest.Main(v1Validation), []string{convert.HPAMetricStatusesAnnotation, convert.HPAConditionsAnnotation}}
	V1StatusStrategy = hpaV1Strategy{rest.Status(v1Validation), []string{convert.HPAMetricSpecsAnnotation, convert.HPABehaviorSpecsAnnotation}}
)

var v1Validation = rest.Validation(validation.ValidateHorizontalPodAutoscalerV1, validation.ValidateHorizontalPodAutoscalerV1Update)

// DefaultV1 applies upstream's autoscaling/v1 defaults.
var DefaultV1 = rest.Defaults(defaults.DefaultHorizontalPodAutoscalerV1)

// V1Storage serves autoscaling/v1 HPAs from the autoscaling/v2 storage.
func V1Storage() *rest.SharedStorage {
	return &rest.SharedStorage{
		Group: "autoscaling", Resource: "horizontalpodautoscalers",
		ToStored: func(obj runtime.Object) (runtime.Object, error) {
			h, ok := obj.(*autoscalingv1.HorizontalPodAutoscaler)
			if !ok {
				return nil, fmt.Errorf("expected an autoscaling/v1 HorizontalPodAutoscaler, got %T", obj)
			}
			out, err := convert.HPAFromV1(h)
			if err != nil {
				return nil, err
			}
			defaults.DefaultHorizontalPodAutoscaler(out)
			return out, nil
		},
		FromStored: func(obj runtime.Object) (runtime.Object, error) {
			h, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
			if !ok {
				return obj, nil
			}
			return convert.HPAToV1(h)
		},
		ListFromStored: func(obj runtime.Object) (runtime.Object, error) {
			l, ok := obj.(*autoscalingv2.HorizontalPodAutoscalerList)
			if !ok {
				return nil, fmt.Errorf("expected an autoscaling/v2 HorizontalPodAutoscalerList, got %T", obj)
			}
			return convert.HPAListToV1(l)
		},
		NewStoredList: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
	}
}

// hpaV1Strategy keeps, on an autoscaling/v1 update, the round-trip
// annotations of the part the endpoint may not change: the main endpoint
// keeps the stored status's (current metrics, conditions), /status the
// spec's (metrics, behavior), as upstream keeps the stored object's status
// or spec whole.
type hpaV1Strategy struct {
	rest.Generic
	keep []string
}

func (s hpaV1Strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.Generic.PrepareForUpdate(ctx, obj, old)
	n, ok1 := obj.(*autoscalingv1.HorizontalPodAutoscaler)
	o, ok2 := old.(*autoscalingv1.HorizontalPodAutoscaler)
	if !ok1 || !ok2 {
		return
	}
	for _, k := range s.keep {
		v, had := o.Annotations[k]
		switch {
		case had:
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[k] = v
		default:
			delete(n.Annotations, k)
		}
	}
}
