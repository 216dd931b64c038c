package registry

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/convert"
	"skiff.dev/apiserver/pkg/apis/defaults"
)

// autoscalingResources are the HorizontalPodAutoscaler rows: autoscaling/v2
// is stored (upstream's storage version) and preferred, so it comes first;
// autoscaling/v1 is served from the same storage, converted both ways.
func autoscalingResources() []*Resource {
	return []*Resource{
		{
			Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers",
			SingularName: "horizontalpodautoscaler", ShortNames: []string{"hpa"}, Categories: []string{"all"}, Namespaced: true,
			EtcdPrefix: "horizontalpodautoscalers",
			New:        func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
			NewList:    func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
			Strategy:   main(), StatusStrategy: status(),
		},
		{
			Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers",
			SingularName: "horizontalpodautoscaler", ShortNames: []string{"hpa"}, Categories: []string{"all"}, Namespaced: true,
			EtcdPrefix:     "horizontalpodautoscalers",
			New:            func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
			NewList:        func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
			Strategy:       hpaV1Strategy{main(), []string{convert.HPAMetricStatusesAnnotation, convert.HPAConditionsAnnotation}},
			StatusStrategy: hpaV1Strategy{status(), []string{convert.HPAMetricSpecsAnnotation, convert.HPABehaviorSpecsAnnotation}},
			SharedStorage:  hpaV1Conversion(),
		},
	}
}

// hpaV1Conversion serves autoscaling/v1 HPAs from the autoscaling/v2
// storage. A v1 object written gets v2's defaults after conversion, as
// upstream's storage decodes it with them.
func hpaV1Conversion() *SharedStorage {
	return &SharedStorage{
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
	genericStrategy
	keep []string
}

func (s hpaV1Strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.genericStrategy.PrepareForUpdate(ctx, obj, old)
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
