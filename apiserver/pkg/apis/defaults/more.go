package defaults

import (
	"math"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// DefaultPodTemplate applies a pod template's defaults: its pod's.
func DefaultPodTemplate(t *corev1.PodTemplate) { DefaultPodTemplateSpec(&t.Template) }

// DefaultPriorityClass: preemptionPolicy PreemptLowerPriority.
func DefaultPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	}
}

// DefaultFlowSchema: matchingPrecedence 1000.
func DefaultFlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = 1000
	}
}

// DefaultReplicationController: one replica; an empty selector and empty
// labels are taken from the template's labels.
func DefaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = t.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = t.Labels
		}
		DefaultPodTemplateSpec(t)
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptr.To[int32](1)
	}
}

// DefaultLimitRange: for type Container, default takes max, and
// defaultRequest takes default, then min, for resources they do not name.
func DefaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		if item.Default == nil {
			item.Default = corev1.ResourceList{}
		}
		if item.DefaultRequest == nil {
			item.DefaultRequest = corev1.ResourceList{}
		}
		fill := func(dst, src corev1.ResourceList) {
			for k, v := range src {
				if _, ok := dst[k]; !ok {
					dst[k] = v.DeepCopy()
				}
			}
		}
		fill(item.Default, item.Max)
		fill(item.DefaultRequest, item.Default)
		fill(item.DefaultRequest, item.Min)
	}
}

// DefaultPersistentVolume: Retain, Filesystem, phase Pending.
func DefaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	if hp := pv.Spec.HostPath; hp != nil && hp.Type == nil {
		hp.Type = ptr.To(corev1.HostPathUnset)
	}
	if rbd := pv.Spec.RBD; rbd != nil {
		defaultRBD(&rbd.RBDPool, &rbd.RadosUser, &rbd.Keyring)
	}
	if iscsi := pv.Spec.ISCSI; iscsi != nil && iscsi.ISCSIInterface == "" {
		iscsi.ISCSIInterface = "default"
	}
}

func defaultRBD(pool, user, keyring *string) {
	if *pool == "" {
		*pool = "rbd"
	}
	if *user == "" {
		*user = "admin"
	}
	if *keyring == "" {
		*keyring = "/etc/ceph/keyring"
	}
}

// DefaultPersistentVolumeClaim: Filesystem, phase Pending.
func DefaultPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
}

// DefaultStatefulSet applies apps/v1's StatefulSet defaults.
func DefaultStatefulSet(s *appsv1.StatefulSet) {
	spec := &s.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && spec.UpdateStrategy.RollingUpdate != nil {
		if spec.UpdateStrategy.RollingUpdate.Partition == nil {
			spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0)
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = ptr.To[int32](1)
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	for i := range spec.VolumeClaimTemplates {
		if spec.VolumeClaimTemplates[i].Spec.VolumeMode == nil {
			spec.VolumeClaimTemplates[i].Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
		}
		if spec.VolumeClaimTemplates[i].Status.Phase == "" {
			spec.VolumeClaimTemplates[i].Status.Phase = corev1.ClaimPending
		}
	}
	DefaultPodTemplateSpec(&spec.Template)
}

// DefaultDaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0, and
// a revision history of 10.
func DefaultDaemonSet(d *appsv1.DaemonSet) {
	spec := &d.Spec
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if spec.UpdateStrategy.RollingUpdate.MaxUnavailable == nil {
			v := intstr.FromInt32(1)
			spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &v
		}
		if spec.UpdateStrategy.RollingUpdate.MaxSurge == nil {
			v := intstr.FromInt32(0)
			spec.UpdateStrategy.RollingUpdate.MaxSurge = &v
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	DefaultPodTemplateSpec(&spec.Template)
}

// DefaultJob applies batch/v1's Job defaults.
func DefaultJob(j *batchv1.Job) {
	spec := &j.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr.To[int32](1)
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.BackoffLimit == nil {
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
		} else {
			spec.BackoffLimit = ptr.To[int32](6)
		}
	}
	if len(j.Labels) == 0 && spec.Template.Labels != nil {
		j.Labels = spec.Template.Labels
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.PodReplacementPolicy == nil {
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if pfp := spec.PodFailurePolicy; pfp != nil {
		for i := range pfp.Rules {
			for k := range pfp.Rules[i].OnPodConditions {
				if pfp.Rules[i].OnPodConditions[k].Status == "" {
					pfp.Rules[i].OnPodConditions[k].Status = corev1.ConditionTrue
				}
			}
		}
	}
	DefaultPodTemplateSpec(&spec.Template)
}

// DefaultCronJob: Allow, not suspended, keep 3 successful and 1 failed job.
func DefaultCronJob(c *batchv1.CronJob) {
	spec := &c.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	DefaultPodTemplateSpec(&spec.JobTemplate.Spec.Template)
}

// DefaultNetworkPolicy: ports are TCP; policyTypes is Ingress, plus Egress
// when egress rules are given.
func DefaultNetworkPolicy(np *networkingv1.NetworkPolicy) {
	tcp := func(ports []networkingv1.NetworkPolicyPort) {
		for i := range ports {
			if ports[i].Protocol == nil {
				ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
			}
		}
	}
	for i := range np.Spec.Ingress {
		tcp(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		tcp(np.Spec.Egress[i].Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

// DefaultStorageClass: Delete and Immediate.
func DefaultStorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	}
}

// DefaultCSIDriver applies storage/v1's CSIDriver defaults.
func DefaultCSIDriver(d *storagev1.CSIDriver) {
	s := &d.Spec
	if s.AttachRequired == nil {
		s.AttachRequired = ptr.To(true)
	}
	if s.PodInfoOnMount == nil {
		s.PodInfoOnMount = ptr.To(false)
	}
	if s.StorageCapacity == nil {
		s.StorageCapacity = ptr.To(false)
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
	if s.RequiresRepublish == nil {
		s.RequiresRepublish = ptr.To(false)
	}
	if s.SELinuxMount == nil {
		s.SELinuxMount = ptr.To(false)
	}
}

// DefaultPriorityLevelConfiguration applies flowcontrol/v1's defaults.
func DefaultPriorityLevelConfiguration(p *flowcontrolv1.PriorityLevelConfiguration) {
	if l := p.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares == nil {
			l.NominalConcurrencyShares = ptr.To[int32](30)
		}
		if l.LendablePercent == nil {
			l.LendablePercent = ptr.To[int32](0)
		}
		if q := l.LimitResponse.Queuing; q != nil {
			if q.HandSize == 0 {
				q.HandSize = 8
			}
			if q.Queues == 0 {
				q.Queues = 64
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = 50
			}
		}
	}
	if e := p.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = ptr.To[int32](0)
		}
		if e.LendablePercent == nil {
			e.LendablePercent = ptr.To[int32](0)
		}
	}
}
