package defaults

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DefaultReplicaSet defaults a ReplicaSet: one replica, and its pod template.
func DefaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		replicas := int32(1)
		rs.Spec.Replicas = &replicas
	}
	DefaultPodTemplateSpec(&rs.Spec.Template)
}

// DefaultDeployment defaults a Deployment: one replica, a RollingUpdate
// strategy with 25% max surge and max unavailable, a revision history of 10,
// a progress deadline of 600 seconds, and its pod template.
func DefaultDeployment(d *appsv1.Deployment) {
	spec := &d.Spec
	if spec.Replicas == nil {
		replicas := int32(1)
		spec.Replicas = &replicas
	}
	strategy := &spec.Strategy
	if strategy.Type == "" {
		strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if strategy.RollingUpdate == nil {
			strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if strategy.RollingUpdate.MaxUnavailable == nil {
			maxUnavailable := intstr.FromString("25%")
			strategy.RollingUpdate.MaxUnavailable = &maxUnavailable
		}
		if strategy.RollingUpdate.MaxSurge == nil {
			maxSurge := intstr.FromString("25%")
			strategy.RollingUpdate.MaxSurge = &maxSurge
		}
	}
	if spec.RevisionHistoryLimit == nil {
		limit := int32(10)
		spec.RevisionHistoryLimit = &limit
	}
	if spec.ProgressDeadlineSeconds == nil {
		deadline := int32(600)
		spec.ProgressDeadlineSeconds = &deadline
	}
	DefaultPodTemplateSpec(&spec.Template)
}
