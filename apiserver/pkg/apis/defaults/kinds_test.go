// The kinds' defaulting as the store runs it: through the rows of the
// resource table (registry.Default).
package defaults_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/registry"
)

func TestDefaultNewKinds(t *testing.T) {
	tests := []struct {
		name  string
		obj   runtime.Object
		check func(t *testing.T, obj runtime.Object)
	}{
		{"limitrange container", &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{"cpu": resource.MustParse("2")}, Min: corev1.ResourceList{"memory": resource.MustParse("1Mi")}}}}},
			func(t *testing.T, obj runtime.Object) {
				item := obj.(*corev1.LimitRange).Spec.Limits[0]
				if item.Default.Cpu().String() != "2" || item.DefaultRequest.Cpu().String() != "2" || item.DefaultRequest.Memory().String() != "1Mi" {
					t.Errorf("item = %+v", item)
				}
			}},
		{"rc selector from template", &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}}}}},
			func(t *testing.T, obj runtime.Object) {
				rc := obj.(*corev1.ReplicationController)
				if rc.Spec.Selector["app"] != "a" || rc.Labels["app"] != "a" || *rc.Spec.Replicas != 1 || rc.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
					t.Errorf("rc = %+v", rc)
				}
			}},
		{"pv", &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}},
			func(t *testing.T, obj runtime.Object) {
				pv := obj.(*corev1.PersistentVolume)
				if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem ||
					pv.Status.Phase != corev1.VolumePending || *pv.Spec.HostPath.Type != corev1.HostPathUnset {
					t.Errorf("pv = %+v", pv)
				}
			}},
		{"statefulset", &appsv1.StatefulSet{},
			func(t *testing.T, obj runtime.Object) {
				s := obj.(*appsv1.StatefulSet).Spec
				if s.PodManagementPolicy != appsv1.OrderedReadyPodManagement || s.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType ||
					*s.UpdateStrategy.RollingUpdate.Partition != 0 || *s.Replicas != 1 || *s.RevisionHistoryLimit != 10 ||
					s.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
					t.Errorf("spec = %+v", s)
				}
			}},
		{"daemonset", &appsv1.DaemonSet{},
			func(t *testing.T, obj runtime.Object) {
				s := obj.(*appsv1.DaemonSet).Spec
				if s.UpdateStrategy.RollingUpdate.MaxUnavailable.IntValue() != 1 || s.UpdateStrategy.RollingUpdate.MaxSurge.IntValue() != 0 || *s.RevisionHistoryLimit != 10 {
					t.Errorf("spec = %+v", s)
				}
			}},
		{"job", &batchv1.Job{},
			func(t *testing.T, obj runtime.Object) {
				s := obj.(*batchv1.Job).Spec
				if *s.Completions != 1 || *s.Parallelism != 1 || *s.BackoffLimit != 6 || *s.CompletionMode != batchv1.NonIndexedCompletion ||
					*s.Suspend || *s.PodReplacementPolicy != batchv1.TerminatingOrFailed {
					t.Errorf("spec = %+v", s)
				}
			}},
		{"job parallel only", &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3)}},
			func(t *testing.T, obj runtime.Object) {
				if s := obj.(*batchv1.Job).Spec; s.Completions != nil || *s.Parallelism != 3 {
					t.Errorf("spec = %+v", s)
				}
			}},
		{"cronjob", &batchv1.CronJob{},
			func(t *testing.T, obj runtime.Object) {
				s := obj.(*batchv1.CronJob).Spec
				if s.ConcurrencyPolicy != batchv1.AllowConcurrent || *s.Suspend || *s.SuccessfulJobsHistoryLimit != 3 || *s.FailedJobsHistoryLimit != 1 {
					t.Errorf("spec = %+v", s)
				}
			}},
		{"networkpolicy", &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{}}}}}},
			func(t *testing.T, obj runtime.Object) {
				s := obj.(*networkingv1.NetworkPolicy).Spec
				if !equality.Semantic.DeepEqual(s.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) || *s.Egress[0].Ports[0].Protocol != corev1.ProtocolTCP {
					t.Errorf("spec = %+v", s)
				}
			}},
		{"priorityclass", &schedulingv1.PriorityClass{},
			func(t *testing.T, obj runtime.Object) {
				if p := obj.(*schedulingv1.PriorityClass).PreemptionPolicy; p == nil || *p != corev1.PreemptLowerPriority {
					t.Errorf("preemptionPolicy = %v", p)
				}
			}},
		{"storageclass", &storagev1.StorageClass{},
			func(t *testing.T, obj runtime.Object) {
				sc := obj.(*storagev1.StorageClass)
				if *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
					t.Errorf("sc = %+v", sc)
				}
			}},
		{"csidriver", &storagev1.CSIDriver{},
			func(t *testing.T, obj runtime.Object) {
				s := obj.(*storagev1.CSIDriver).Spec
				if !*s.AttachRequired || *s.PodInfoOnMount || *s.FSGroupPolicy != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy || len(s.VolumeLifecycleModes) != 1 {
					t.Errorf("spec = %+v", s)
				}
			}},
		{"prioritylevel", &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			LimitResponse: flowcontrolv1.LimitResponse{Queuing: &flowcontrolv1.QueuingConfiguration{}}}}},
			func(t *testing.T, obj runtime.Object) {
				l := obj.(*flowcontrolv1.PriorityLevelConfiguration).Spec.Limited
				if *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || l.LimitResponse.Queuing.Queues != 64 || l.LimitResponse.Queuing.HandSize != 8 || l.LimitResponse.Queuing.QueueLengthLimit != 50 {
					t.Errorf("limited = %+v", l)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			registry.Default(tc.obj)
			tc.check(t, tc.obj)
		})
	}
}

// allKinds returns a zero value of every kind skiff serves.
func allKinds() []runtime.Object {
	return []runtime.Object{
		&corev1.Namespace{}, &corev1.Pod{}, &corev1.Node{}, &corev1.Service{}, &corev1.Endpoints{},
		&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Event{}, &corev1.ServiceAccount{},
		&corev1.NamespaceList{Items: []corev1.Namespace{{}}}, &corev1.PodList{Items: []corev1.Pod{{}}},
		&appsv1.ReplicaSet{}, &appsv1.Deployment{}, &autoscalingv1.Scale{}, &coordinationv1.Lease{},
		&discoveryv1.EndpointSlice{}, &rbacv1.Role{}, &rbacv1.ClusterRole{}, &rbacv1.RoleBinding{},
		&rbacv1.ClusterRoleBinding{},
	}
}

func TestZeroValuesDoNotPanic(t *testing.T) {
	for _, obj := range allKinds() {
		registry.Default(obj)
	}
	// Typed nil pointers and untyped nil are ignored.
	registry.Default(nil)
	registry.Default((*corev1.Pod)(nil))
	registry.Default((*appsv1.Deployment)(nil))
	registry.Default((*corev1.NamespaceList)(nil))
}
