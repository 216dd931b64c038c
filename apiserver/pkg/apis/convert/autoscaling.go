package convert

import (
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The annotations an autoscaling/v1 HorizontalPodAutoscaler carries what
// only autoscaling/v2 can say, under upstream's names, so that a v1 client's
// read-modify-write keeps a v2 object whole.
const (
	// HPAMetricSpecsAnnotation holds the metrics other than a CPU
	// utilization target, as autoscaling/v1 MetricSpecs.
	HPAMetricSpecsAnnotation = "autoscaling.alpha.kubernetes.io/metrics"
	// HPAMetricStatusesAnnotation holds status.currentMetrics, as
	// autoscaling/v1 MetricStatuses.
	HPAMetricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	// HPAConditionsAnnotation holds status.conditions.
	HPAConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"
	// HPABehaviorSpecsAnnotation holds spec.behavior, encoded as upstream
	// encodes its internal type (Go field names as keys).
	HPABehaviorSpecsAnnotation = "autoscaling.alpha.kubernetes.io/behavior"
	// HPADefaultCPUUtilization is the CPU target of an HPA that names no
	// metric.
	HPADefaultCPUUtilization = 80
)

var hpaRoundTripAnnotations = []string{HPAMetricSpecsAnnotation, HPAMetricStatusesAnnotation, HPAConditionsAnnotation, HPABehaviorSpecsAnnotation}

// dropHPARoundTripAnnotations returns annotations without the round-trip
// ones, copying the map only when one is present.
func dropHPARoundTripAnnotations(in map[string]string) map[string]string {
	found := false
	for _, k := range hpaRoundTripAnnotations {
		if _, ok := in[k]; ok {
			found = true
		}
	}
	if !found {
		return in
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	for _, k := range hpaRoundTripAnnotations {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// HPAToV1 converts a stored autoscaling/v2 HorizontalPodAutoscaler to
// autoscaling/v1, as upstream's conversion: the first CPU utilization
// target is targetCPUUtilizationPercentage, the rest go to annotations.
func HPAToV1(in *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv1.HorizontalPodAutoscaler, error) {
	out := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    copyInt32(in.Spec.MinReplicas),
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{
			ObservedGeneration: copyInt64(in.Status.ObservedGeneration),
			LastScaleTime:      in.Status.LastScaleTime.DeepCopy(),
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	out.Annotations = dropHPARoundTripAnnotations(out.Annotations)
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			out.Spec.TargetCPUUtilizationPercentage = copyInt32(m.Resource.Target.AverageUtilization)
			break
		}
	}
	for _, m := range in.Status.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = copyInt32(m.Resource.Current.AverageUtilization)
		}
	}

	var other []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			continue
		}
		other = append(other, metricSpecToV1(m))
	}
	current := make([]autoscalingv1.MetricStatus, 0, len(in.Status.CurrentMetrics))
	for _, m := range in.Status.CurrentMetrics {
		current = append(current, metricStatusToV1(m))
	}
	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, 0, len(in.Status.Conditions))
	for _, c := range in.Status.Conditions {
		conditions = append(conditions, autoscalingv1.HorizontalPodAutoscalerCondition{
			Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	set := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(b)
		return nil
	}
	if len(other) > 0 {
		if err := set(HPAMetricSpecsAnnotation, other); err != nil {
			return nil, err
		}
	}
	if len(in.Status.CurrentMetrics) > 0 {
		if err := set(HPAMetricStatusesAnnotation, current); err != nil {
			return nil, err
		}
	}
	if in.Spec.Behavior != nil {
		if err := set(HPABehaviorSpecsAnnotation, behaviorToInternalJSON(in.Spec.Behavior)); err != nil {
			return nil, err
		}
	}
	if len(in.Status.Conditions) > 0 {
		if err := set(HPAConditionsAnnotation, conditions); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// HPAFromV1 converts an autoscaling/v1 HorizontalPodAutoscaler to the
// autoscaling/v2 one it is stored as, lifting the round-trip annotations
// back into the spec and status, and giving an HPA without any metric
// upstream's 80% CPU target. Annotations that do not parse are ignored, as
// upstream ignores them.
func HPAFromV1(in *autoscalingv1.HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    copyInt32(in.Spec.MinReplicas),
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: copyInt64(in.Status.ObservedGeneration),
			LastScaleTime:      in.Status.LastScaleTime.DeepCopy(),
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	if in.Spec.TargetCPUUtilizationPercentage != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(*in.Spec.TargetCPUUtilizationPercentage)}
	}
	if in.Status.CurrentCPUUtilizationPercentage != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{
				Name:    corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: copyInt32(in.Status.CurrentCPUUtilizationPercentage)},
			},
		}}
	}
	ann := in.Annotations
	if enc, ok := ann[HPAMetricSpecsAnnotation]; ok {
		var other []autoscalingv1.MetricSpec
		if err := json.Unmarshal([]byte(enc), &other); err == nil {
			metrics := make([]autoscalingv2.MetricSpec, 0, len(other)+len(out.Spec.Metrics))
			for _, m := range other {
				metrics = append(metrics, metricSpecFromV1(m))
			}
			out.Spec.Metrics = append(metrics, out.Spec.Metrics...)
		}
	}
	if enc, ok := ann[HPABehaviorSpecsAnnotation]; ok {
		// Upstream's annotation has Go field names as keys; encoding/json
		// matches them to the v2 type's JSON names regardless of case.
		var b autoscalingv2.HorizontalPodAutoscalerBehavior
		if err := json.Unmarshal([]byte(enc), &b); err == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = &b
		}
	}
	if enc, ok := ann[HPAMetricStatusesAnnotation]; ok {
		var current []autoscalingv1.MetricStatus
		if err := json.Unmarshal([]byte(enc), &current); err == nil {
			out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, 0, len(current))
			for _, m := range current {
				out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, metricStatusFromV1(m))
			}
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(HPADefaultCPUUtilization)}
	}
	if enc, ok := ann[HPAConditionsAnnotation]; ok {
		var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
		if err := json.Unmarshal([]byte(enc), &conditions); err == nil {
			out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, 0, len(conditions))
			for _, c := range conditions {
				out.Status.Conditions = append(out.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
					Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
					LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
				})
			}
		}
	}
	out.Annotations = dropHPARoundTripAnnotations(out.Annotations)
	return out, nil
}

// HPAListToV1 converts a stored list.
func HPAListToV1(in *autoscalingv2.HorizontalPodAutoscalerList) (*autoscalingv1.HorizontalPodAutoscalerList, error) {
	out := &autoscalingv1.HorizontalPodAutoscalerList{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscalerList"},
		ListMeta: in.ListMeta,
		Items:    make([]autoscalingv1.HorizontalPodAutoscaler, 0, len(in.Items)),
	}
	for i := range in.Items {
		h, err := HPAToV1(&in.Items[i])
		if err != nil {
			return nil, err
		}
		h.TypeMeta = metav1.TypeMeta{}
		out.Items = append(out.Items, *h)
	}
	return out, nil
}

func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
		m.Resource.Target.AverageUtilization != nil
}

func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &percent},
		},
	}
}

// metricSpecToV1 is upstream's Convert_autoscaling_MetricSpec_To_v1_MetricSpec.
func metricSpecToV1(in autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricSource{
			Target:       autoscalingv1.CrossVersionObjectReference(s.DescribedObject),
			MetricName:   s.Metric.Name,
			TargetValue:  quantityOrZero(s.Target.Value),
			Selector:     s.Metric.Selector.DeepCopy(),
			AverageValue: copyQuantity(s.Target.AverageValue),
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricSource{
			MetricName:         s.Metric.Name,
			TargetAverageValue: quantityOrZero(s.Target.AverageValue),
			Selector:           s.Metric.Selector.DeepCopy(),
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{
			Name:                     s.Name,
			TargetAverageUtilization: copyInt32(s.Target.AverageUtilization),
			TargetAverageValue:       copyQuantity(s.Target.AverageValue),
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{
			Name:                     s.Name,
			Container:                s.Container,
			TargetAverageUtilization: copyInt32(s.Target.AverageUtilization),
			TargetAverageValue:       copyQuantity(s.Target.AverageValue),
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{
			MetricName:         s.Metric.Name,
			MetricSelector:     s.Metric.Selector.DeepCopy(),
			TargetValue:        copyQuantity(s.Target.Value),
			TargetAverageValue: copyQuantity(s.Target.AverageValue),
		}
	}
	return out
}

// metricSpecFromV1 is upstream's Convert_v1_MetricSpec_To_autoscaling_MetricSpec:
// the target's type follows from which value is set.
func metricSpecFromV1(in autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: copyQuantity(&s.TargetValue), AverageValue: copyQuantity(s.AverageValue)}
		if s.AverageValue != nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector.DeepCopy()},
			Target:          t,
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector.DeepCopy()},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: copyQuantity(&s.TargetAverageValue)},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name, Target: resourceTargetFromV1(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{
			Name: s.Name, Container: s.Container, Target: resourceTargetFromV1(s.TargetAverageUtilization, s.TargetAverageValue),
		}
	}
	if s := in.External; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: copyQuantity(s.TargetValue), AverageValue: copyQuantity(s.TargetAverageValue)}
		if s.TargetValue == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector.DeepCopy()},
			Target: t,
		}
	}
	return out
}

func resourceTargetFromV1(utilization *int32, average *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: copyInt32(utilization), AverageValue: copyQuantity(average)}
	if utilization == nil {
		t.Type = autoscalingv2.AverageValueMetricType
	}
	return t
}

func metricStatusToV1(in autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{
			Target:       autoscalingv1.CrossVersionObjectReference(s.DescribedObject),
			MetricName:   s.Metric.Name,
			CurrentValue: quantityOrZero(s.Current.Value),
			Selector:     s.Metric.Selector.DeepCopy(),
			AverageValue: copyQuantity(s.Current.AverageValue),
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{
			MetricName: s.Metric.Name, CurrentAverageValue: quantityOrZero(s.Current.AverageValue), Selector: s.Metric.Selector.DeepCopy(),
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{
			Name: s.Name, CurrentAverageUtilization: copyInt32(s.Current.AverageUtilization), CurrentAverageValue: quantityOrZero(s.Current.AverageValue),
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{
			Name: s.Name, Container: s.Container,
			CurrentAverageUtilization: copyInt32(s.Current.AverageUtilization), CurrentAverageValue: quantityOrZero(s.Current.AverageValue),
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{
			MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector.DeepCopy(),
			CurrentValue: quantityOrZero(s.Current.Value), CurrentAverageValue: copyQuantity(s.Current.AverageValue),
		}
	}
	return out
}

func metricStatusFromV1(in autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector.DeepCopy()},
			Current:         autoscalingv2.MetricValueStatus{Value: copyQuantity(&s.CurrentValue), AverageValue: copyQuantity(s.AverageValue)},
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector.DeepCopy()},
			Current: autoscalingv2.MetricValueStatus{AverageValue: copyQuantity(&s.CurrentAverageValue)},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{
			Name:    s.Name,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: copyInt32(s.CurrentAverageUtilization), AverageValue: copyQuantity(&s.CurrentAverageValue)},
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{
			Name: s.Name, Container: s.Container,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: copyInt32(s.CurrentAverageUtilization), AverageValue: copyQuantity(&s.CurrentAverageValue)},
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector.DeepCopy()},
			Current: autoscalingv2.MetricValueStatus{Value: copyQuantity(&s.CurrentValue), AverageValue: copyQuantity(s.CurrentAverageValue)},
		}
	}
	return out
}

// The behavior annotation's encoding: upstream marshals its internal type,
// whose fields carry no JSON tags, so the keys are the Go field names.
type internalHPABehavior struct {
	ScaleUp   *internalHPAScalingRules
	ScaleDown *internalHPAScalingRules
}

type internalHPAScalingRules struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []internalHPAScalingPolicy
}

type internalHPAScalingPolicy struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func behaviorToInternalJSON(b *autoscalingv2.HorizontalPodAutoscalerBehavior) internalHPABehavior {
	rules := func(r *autoscalingv2.HPAScalingRules) *internalHPAScalingRules {
		if r == nil {
			return nil
		}
		out := &internalHPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy}
		for _, p := range r.Policies {
			out.Policies = append(out.Policies, internalHPAScalingPolicy{Type: p.Type, Value: p.Value, PeriodSeconds: p.PeriodSeconds})
		}
		return out
	}
	return internalHPABehavior{ScaleUp: rules(b.ScaleUp), ScaleDown: rules(b.ScaleDown)}
}

func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyInt64(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyQuantity(q *resource.Quantity) *resource.Quantity {
	if q == nil {
		return nil
	}
	c := q.DeepCopy()
	return &c
}

func quantityOrZero(q *resource.Quantity) resource.Quantity {
	if q == nil {
		return resource.Quantity{}
	}
	return q.DeepCopy()
}
