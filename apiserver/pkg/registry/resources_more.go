package registry

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// moreResources are the kinds added with issue 8, in the table's format.
func moreResources() []*Resource {
	var out []*Resource
	out = append(out, coreMore()...)
	out = append(out, workloadsMore()...)
	out = append(out, clusterMore()...)
	return out
}

func coreMore() []*Resource {
	return []*Resource{
		{
			Version: "v1", Kind: "LimitRange", Resource: "limitranges", SingularName: "limitrange", Namespaced: true,
			ShortNames: []string{"limits"}, EtcdPrefix: "limitranges",
			New: func() runtime.Object { return &corev1.LimitRange{} }, NewList: func() runtime.Object { return &corev1.LimitRangeList{} },
			Strategy: whole(),
		},
		{
			Version: "v1", Kind: "ResourceQuota", Resource: "resourcequotas", SingularName: "resourcequota", Namespaced: true,
			ShortNames: []string{"quota"}, EtcdPrefix: "resourcequotas",
			New: func() runtime.Object { return &corev1.ResourceQuota{} }, NewList: func() runtime.Object { return &corev1.ResourceQuotaList{} },
			Strategy: main(), StatusStrategy: status(),
		},
		{
			Version: "v1", Kind: "ReplicationController", Resource: "replicationcontrollers", SingularName: "replicationcontroller", Namespaced: true,
			ShortNames: []string{"rc"}, Categories: []string{"all"}, EtcdPrefix: "controllers",
			New:      func() runtime.Object { return &corev1.ReplicationController{} },
			NewList:  func() runtime.Object { return &corev1.ReplicationControllerList{} },
			Strategy: main(withGeneration), StatusStrategy: status(), Fields: replicationControllerFields,
			Scale: replicationControllerScale(),
		},
		{
			Version: "v1", Kind: "PodTemplate", Resource: "podtemplates", SingularName: "podtemplate", Namespaced: true,
			EtcdPrefix: "podtemplates",
			New:        func() runtime.Object { return &corev1.PodTemplate{} }, NewList: func() runtime.Object { return &corev1.PodTemplateList{} },
			Strategy: whole(),
		},
		{
			Version: "v1", Kind: "PersistentVolume", Resource: "persistentvolumes", SingularName: "persistentvolume",
			ShortNames: []string{"pv"}, EtcdPrefix: "persistentvolumes",
			New:      func() runtime.Object { return &corev1.PersistentVolume{} },
			NewList:  func() runtime.Object { return &corev1.PersistentVolumeList{} },
			Strategy: main(func(s *genericStrategy) { s.prepareForCreate = preparePersistentVolume }), StatusStrategy: status(),
			Fields: persistentVolumeFields,
		},
		{
			Version: "v1", Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", SingularName: "persistentvolumeclaim", Namespaced: true,
			ShortNames: []string{"pvc"}, EtcdPrefix: "persistentvolumeclaims",
			New:      func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
			NewList:  func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
			Strategy: main(func(s *genericStrategy) { s.prepareForCreate = preparePersistentVolumeClaim }), StatusStrategy: status(),
			Fields: persistentVolumeClaimFields,
		},
	}
}

func workloadsMore() []*Resource {
	return []*Resource{
		{
			Group: "apps", Version: "v1", Kind: "StatefulSet", Resource: "statefulsets", SingularName: "statefulset", Namespaced: true,
			ShortNames: []string{"sts"}, Categories: []string{"all"}, EtcdPrefix: "statefulsets",
			New: func() runtime.Object { return &appsv1.StatefulSet{} }, NewList: func() runtime.Object { return &appsv1.StatefulSetList{} },
			Strategy: main(withGeneration), StatusStrategy: status(), Scale: statefulSetScale(),
		},
		{
			Group: "apps", Version: "v1", Kind: "DaemonSet", Resource: "daemonsets", SingularName: "daemonset", Namespaced: true,
			ShortNames: []string{"ds"}, Categories: []string{"all"}, EtcdPrefix: "daemonsets",
			New: func() runtime.Object { return &appsv1.DaemonSet{} }, NewList: func() runtime.Object { return &appsv1.DaemonSetList{} },
			Strategy: daemonSetStrategy{main(withGeneration)}, StatusStrategy: daemonSetStrategy{status()},
		},
		{
			Group: "apps", Version: "v1", Kind: "ControllerRevision", Resource: "controllerrevisions", SingularName: "controllerrevision", Namespaced: true,
			EtcdPrefix: "controllerrevisions",
			New:        func() runtime.Object { return &appsv1.ControllerRevision{} },
			NewList:    func() runtime.Object { return &appsv1.ControllerRevisionList{} },
			Strategy:   whole(),
		},
		{
			Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", SingularName: "job", Namespaced: true,
			Categories: []string{"all"}, EtcdPrefix: "jobs",
			New: func() runtime.Object { return &batchv1.Job{} }, NewList: func() runtime.Object { return &batchv1.JobList{} },
			Strategy: jobStrategy{main(withGeneration)}, StatusStrategy: status(),
			Fields: jobFields,
		},
		{
			Group: "batch", Version: "v1", Kind: "CronJob", Resource: "cronjobs", SingularName: "cronjob", Namespaced: true,
			ShortNames: []string{"cj"}, Categories: []string{"all"}, EtcdPrefix: "cronjobs",
			New: func() runtime.Object { return &batchv1.CronJob{} }, NewList: func() runtime.Object { return &batchv1.CronJobList{} },
			Strategy: main(withGeneration), StatusStrategy: status(),
		},
		{
			Group: "policy", Version: "v1", Kind: "PodDisruptionBudget", Resource: "poddisruptionbudgets", SingularName: "poddisruptionbudget", Namespaced: true,
			ShortNames: []string{"pdb"}, EtcdPrefix: "poddisruptionbudgets",
			New:      func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
			NewList:  func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
			Strategy: main(conditionalUpdate, withGeneration), StatusStrategy: status(conditionalUpdate),
		},
	}
}

func clusterMore() []*Resource {
	return []*Resource{
		{
			Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass", Resource: "priorityclasses", SingularName: "priorityclass",
			ShortNames: []string{"pc"}, EtcdPrefix: "priorityclasses",
			New:      func() runtime.Object { return &schedulingv1.PriorityClass{} },
			NewList:  func() runtime.Object { return &schedulingv1.PriorityClassList{} },
			Strategy: whole(),
		},
		{
			Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass", Resource: "runtimeclasses", SingularName: "runtimeclass",
			EtcdPrefix: "runtimeclasses",
			New:        func() runtime.Object { return &nodev1.RuntimeClass{} }, NewList: func() runtime.Object { return &nodev1.RuntimeClassList{} },
			Strategy: whole(conditionalUpdate),
		},
		{
			Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Resource: "ingresses", SingularName: "ingress", Namespaced: true,
			ShortNames: []string{"ing"}, EtcdPrefix: "ingress",
			New: func() runtime.Object { return &networkingv1.Ingress{} }, NewList: func() runtime.Object { return &networkingv1.IngressList{} },
			Strategy: main(withGeneration), StatusStrategy: status(),
		},
		{
			Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass", Resource: "ingressclasses", SingularName: "ingressclass",
			EtcdPrefix: "ingressclasses",
			New:        func() runtime.Object { return &networkingv1.IngressClass{} },
			NewList:    func() runtime.Object { return &networkingv1.IngressClassList{} },
			Strategy:   whole(withGeneration),
		},
		{
			Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy", Resource: "networkpolicies", SingularName: "networkpolicy", Namespaced: true,
			ShortNames: []string{"netpol"}, EtcdPrefix: "networkpolicies",
			New:      func() runtime.Object { return &networkingv1.NetworkPolicy{} },
			NewList:  func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
			Strategy: whole(withGeneration),
		},
		{
			Group: "events.k8s.io", Version: "v1", Kind: "Event", Resource: "events", SingularName: "event", Namespaced: true,
			ShortNames: []string{"ev"}, EtcdPrefix: "events",
			New: func() runtime.Object { return &eventsv1.Event{} }, NewList: func() runtime.Object { return &eventsv1.EventList{} },
			Strategy: whole(withCreateOnUpdate), Fields: eventsV1Fields, SharedStorage: eventsConversion(),
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Resource: "storageclasses", SingularName: "storageclass",
			ShortNames: []string{"sc"}, EtcdPrefix: "storageclasses",
			New:      func() runtime.Object { return &storagev1.StorageClass{} },
			NewList:  func() runtime.Object { return &storagev1.StorageClassList{} },
			Strategy: whole(),
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver", Resource: "csidrivers", SingularName: "csidriver",
			EtcdPrefix: "csidrivers",
			New:        func() runtime.Object { return &storagev1.CSIDriver{} }, NewList: func() runtime.Object { return &storagev1.CSIDriverList{} },
			Strategy: whole(conditionalUpdate),
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "CSINode", Resource: "csinodes", SingularName: "csinode",
			EtcdPrefix: "csinodes",
			New:        func() runtime.Object { return &storagev1.CSINode{} }, NewList: func() runtime.Object { return &storagev1.CSINodeList{} },
			Strategy: whole(conditionalUpdate),
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity", Resource: "csistoragecapacities", SingularName: "csistoragecapacity",
			Namespaced: true, EtcdPrefix: "csistoragecapacities",
			New:      func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
			NewList:  func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
			Strategy: whole(conditionalUpdate),
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttachment", Resource: "volumeattachments", SingularName: "volumeattachment",
			EtcdPrefix: "volumeattachments",
			New:        func() runtime.Object { return &storagev1.VolumeAttachment{} },
			NewList:    func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
			Strategy:   main(conditionalUpdate), StatusStrategy: status(conditionalUpdate),
		},
		{
			Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest", Resource: "certificatesigningrequests",
			SingularName: "certificatesigningrequest", ShortNames: []string{"csr"}, EtcdPrefix: "certificatesigningrequests",
			New:      func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
			NewList:  func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
			Strategy: csrStrategy{main()}, StatusStrategy: csrStatusStrategy{status()}, Approval: csrApprovalStrategy{status()},
			Fields: csrFields,
		},
		{
			Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema", Resource: "flowschemas", SingularName: "flowschema",
			EtcdPrefix: "flowschemas",
			New:        func() runtime.Object { return &flowcontrolv1.FlowSchema{} }, NewList: func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
			Strategy: main(withGeneration), StatusStrategy: status(),
		},
		{
			Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "PriorityLevelConfiguration", Resource: "prioritylevelconfigurations",
			SingularName: "prioritylevelconfiguration", EtcdPrefix: "prioritylevelconfigurations",
			New:      func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
			NewList:  func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} },
			Strategy: main(withGeneration), StatusStrategy: status(),
		},
	}
}
