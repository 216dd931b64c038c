package tables

import (
	"fmt"
	"reflect"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	autoscalingv2beta1 "k8s.io/api/autoscaling/v2beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/apis/convert"
)

func (p *printer) printHorizontalPodAutoscaler(obj *autoscalingv2.HorizontalPodAutoscaler) metav1.TableRow {
	reference := fmt.Sprintf("%s/%s", obj.Spec.ScaleTargetRef.Kind, obj.Spec.ScaleTargetRef.Name)
	minPods := unset
	if obj.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *obj.Spec.MinReplicas)
	}
	return row(obj, obj.Name, reference, formatHPAMetrics(obj.Spec.Metrics, obj.Status.CurrentMetrics), minPods,
		int64(obj.Spec.MaxReplicas), int64(obj.Status.CurrentReplicas), p.since(obj.CreationTimestamp))
}

// formatHPAMetrics is upstream's TARGETS cell: "current/target" for the
// first two metrics, "<unknown>" where no current value was measured.
func formatHPAMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return none
	}
	const maximum = 2
	q := func(v *resource.Quantity) string {
		if v == nil {
			return "<unknown>"
		}
		return v.String()
	}
	utilization := func(v *int32, missing string) string {
		if v == nil {
			return missing
		}
		return fmt.Sprintf("%d%%", *v)
	}
	var list []string
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if len(statuses) > i {
			st = &statuses[i]
		}
		current := "<unknown>"
		switch {
		case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
			if spec.External.Target.AverageValue != nil {
				if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
					current = st.External.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String()))
			} else {
				if st != nil && st.External != nil {
					current = q(st.External.Current.Value)
				}
				list = append(list, fmt.Sprintf("%s/%s", current, q(spec.External.Target.Value)))
			}
		case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
			if st != nil && st.Pods != nil {
				current = q(st.Pods.Current.AverageValue)
			}
			list = append(list, fmt.Sprintf("%s/%s", current, q(spec.Pods.Target.AverageValue)))
		case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
			if spec.Object.Target.AverageValue != nil {
				if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
					current = st.Object.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String()))
			} else {
				if st != nil && st.Object != nil {
					current = q(st.Object.Current.Value)
				}
				list = append(list, fmt.Sprintf("%s/%s", current, q(spec.Object.Target.Value)))
			}
		case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
			if spec.Resource.Target.AverageValue != nil {
				if st != nil && st.Resource != nil {
					current = q(st.Resource.Current.AverageValue)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.Resource.Name, current, spec.Resource.Target.AverageValue.String()))
			} else {
				if st != nil && st.Resource != nil {
					current = utilization(st.Resource.Current.AverageUtilization, current)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.Resource.Name, current, utilization(spec.Resource.Target.AverageUtilization, "<auto>")))
			}
		case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
			c := spec.ContainerResource
			if c.Target.AverageValue != nil {
				if st != nil && st.ContainerResource != nil {
					current = q(st.ContainerResource.Current.AverageValue)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", c.Name, current, c.Target.AverageValue.String()))
			} else {
				if st != nil && st.ContainerResource != nil {
					current = utilization(st.ContainerResource.Current.AverageUtilization, current)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", c.Name, current, utilization(c.Target.AverageUtilization, "<auto>")))
			}
		default:
			list = append(list, "<unknown type>")
		}
	}
	if len(list) > maximum {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:maximum], ", "), len(list)-maximum)
	}
	return strings.Join(list, ", ")
}

// HorizontalPodAutoscaler prints autoscalingv2.HorizontalPodAutoscaler objects and lists.
var HorizontalPodAutoscaler = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(hpaColumns(), p.printHorizontalPodAutoscaler,
		func(l *autoscalingv2.HorizontalPodAutoscalerList) []autoscalingv2.HorizontalPodAutoscaler {
			return l.Items
		})
}}

// HorizontalPodAutoscalerV1 prints autoscalingv1.HorizontalPodAutoscaler objects and lists.
var HorizontalPodAutoscalerV1 = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(hpaColumns(), func(obj *autoscalingv1.HorizontalPodAutoscaler) metav1.TableRow {
		h, err := convert.HPAFromV1(obj)
		if err != nil {
			h = &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: obj.ObjectMeta}
		}
		r := p.printHorizontalPodAutoscaler(h)
		r.Object.Object = obj
		return r
	}, func(l *autoscalingv1.HorizontalPodAutoscalerList) []autoscalingv1.HorizontalPodAutoscaler {
		return l.Items
	})
}}

// hpaColumns are the columns of HorizontalPodAutoscalers of both versions.
func hpaColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Reference", Type: "string", Description: autoscalingv2beta1.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]},
		{Name: "Targets", Type: "string", Description: autoscalingv2beta1.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]},
		{Name: "MinPods", Type: "string", Description: autoscalingv2beta1.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]},
		{Name: "MaxPods", Type: "string", Description: autoscalingv2beta1.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]},
		{Name: "Replicas", Type: "string", Description: autoscalingv2beta1.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]},
		ageColumn(),
	}
}
