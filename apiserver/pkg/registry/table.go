package registry

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"skiff.dev/apiserver/pkg/printers/tables"
	"skiff.dev/apiserver/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"skiff.dev/apiserver/pkg/registry/admissionregistration/webhookconfiguration"
	"skiff.dev/apiserver/pkg/registry/apiregistration/apiservice"
	"skiff.dev/apiserver/pkg/registry/apps/controllerrevision"
	"skiff.dev/apiserver/pkg/registry/apps/daemonset"
	"skiff.dev/apiserver/pkg/registry/apps/deployment"
	"skiff.dev/apiserver/pkg/registry/apps/replicaset"
	"skiff.dev/apiserver/pkg/registry/apps/statefulset"
	"skiff.dev/apiserver/pkg/registry/autoscaling/horizontalpodautoscaler"
	"skiff.dev/apiserver/pkg/registry/batch/cronjob"
	"skiff.dev/apiserver/pkg/registry/batch/job"
	"skiff.dev/apiserver/pkg/registry/certificates/certificatesigningrequest"
	"skiff.dev/apiserver/pkg/registry/coordination/lease"
	"skiff.dev/apiserver/pkg/registry/core/configmap"
	"skiff.dev/apiserver/pkg/registry/core/endpoint"
	"skiff.dev/apiserver/pkg/registry/core/event"
	"skiff.dev/apiserver/pkg/registry/core/limitrange"
	"skiff.dev/apiserver/pkg/registry/core/namespace"
	"skiff.dev/apiserver/pkg/registry/core/node"
	"skiff.dev/apiserver/pkg/registry/core/persistentvolume"
	"skiff.dev/apiserver/pkg/registry/core/persistentvolumeclaim"
	"skiff.dev/apiserver/pkg/registry/core/pod"
	"skiff.dev/apiserver/pkg/registry/core/podtemplate"
	"skiff.dev/apiserver/pkg/registry/core/replicationcontroller"
	"skiff.dev/apiserver/pkg/registry/core/resourcequota"
	"skiff.dev/apiserver/pkg/registry/core/secret"
	"skiff.dev/apiserver/pkg/registry/core/service"
	"skiff.dev/apiserver/pkg/registry/core/serviceaccount"
	"skiff.dev/apiserver/pkg/registry/discovery/endpointslice"
	"skiff.dev/apiserver/pkg/registry/flowcontrol"
	"skiff.dev/apiserver/pkg/registry/networking/ingress"
	"skiff.dev/apiserver/pkg/registry/networking/networkpolicy"
	"skiff.dev/apiserver/pkg/registry/node/runtimeclass"
	"skiff.dev/apiserver/pkg/registry/policy/poddisruptionbudget"
	"skiff.dev/apiserver/pkg/registry/rbac"
	"skiff.dev/apiserver/pkg/registry/scheduling/priorityclass"
	"skiff.dev/apiserver/pkg/registry/storage/csi"
	"skiff.dev/apiserver/pkg/registry/storage/storageclass"
	"skiff.dev/apiserver/pkg/registry/storage/volumeattachment"
)

// Resources returns the table of every kind skiff serves, one row a kind
// (and version). A row names the kind's URL, storage and discovery facts,
// and takes everything that differs between kinds (strategies, defaults,
// selectable fields, scale, hooks) from the kind's package under
// pkg/registry/<group>/<kind>. Adding a kind is a row here plus its package.
func Resources() []*Resource {
	return []*Resource{
		{
			Version: "v1", Kind: "Namespace", Resource: "namespaces", SingularName: "namespace",
			ShortNames: []string{"ns"}, EtcdPrefix: "namespaces",
			New: func() runtime.Object { return &corev1.Namespace{} }, NewList: func() runtime.Object { return &corev1.NamespaceList{} },
			Printer:  tables.Namespace,
			Strategy: namespace.Strategy, StatusStrategy: namespace.StatusStrategy, Default: namespace.Default, Fields: namespace.Fields, Finalizing: namespace.Finalizing,
			MarkTerminating: namespace.MarkTerminating,
			Finalize:        namespace.Finalize, ReturnDeletedObject: true,
		},
		{
			Version: "v1", Kind: "Pod", Resource: "pods", SingularName: "pod", Namespaced: true,
			ShortNames: []string{"po"}, Categories: []string{"all"}, EtcdPrefix: "pods",
			New: func() runtime.Object { return &corev1.Pod{} }, NewList: func() runtime.Object { return &corev1.PodList{} },
			Printer:  tables.Pod,
			Strategy: pod.Strategy, StatusStrategy: pod.StatusStrategy, Default: pod.Default, Fields: pod.Fields, GracePeriod: pod.GracePeriod,
			Binding: pod.CreateBinding, Eviction: pod.Evict, Kubelet: pod.Kubelet, Proxy: pod.Proxy, ReturnDeletedObject: true,
			EphemeralContainers: pod.EphemeralContainersStrategy,
		},
		{
			Version: "v1", Kind: "Node", Resource: "nodes", SingularName: "node",
			ShortNames: []string{"no"}, EtcdPrefix: "minions",
			New: func() runtime.Object { return &corev1.Node{} }, NewList: func() runtime.Object { return &corev1.NodeList{} },
			Printer:  tables.Node,
			Strategy: node.Strategy, StatusStrategy: node.StatusStrategy, Default: node.Default, Fields: node.Fields,
			Proxy: node.Proxy,
		},
		{
			Version: "v1", Kind: "Service", Resource: "services", SingularName: "service", Namespaced: true,
			ShortNames: []string{"svc"}, Categories: []string{"all"}, EtcdPrefix: "services/specs",
			New: func() runtime.Object { return &corev1.Service{} }, NewList: func() runtime.Object { return &corev1.ServiceList{} },
			Printer:  tables.Service,
			Strategy: service.Strategy, StatusStrategy: service.StatusStrategy, Default: service.Default,
			Hooks:               func(d HookDeps) any { return d.ServiceIPs },
			ReturnDeletedObject: true, Proxy: service.Proxy,
		},
		{
			Version: "v1", Kind: "Endpoints", Resource: "endpoints", SingularName: "endpoints", Namespaced: true,
			ShortNames: []string{"ep"}, EtcdPrefix: "services/endpoints",
			New: func() runtime.Object { return &corev1.Endpoints{} }, NewList: func() runtime.Object { return &corev1.EndpointsList{} },
			Printer:  tables.Endpoints,
			Strategy: endpoint.Strategy, Default: endpoint.Default,
		},
		{
			Version: "v1", Kind: "ConfigMap", Resource: "configmaps", SingularName: "configmap", Namespaced: true,
			ShortNames: []string{"cm"}, EtcdPrefix: "configmaps",
			New: func() runtime.Object { return &corev1.ConfigMap{} }, NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
			Printer:  tables.ConfigMap,
			Strategy: configmap.Strategy, Default: configmap.Default,
		},
		{
			Version: "v1", Kind: "Secret", Resource: "secrets", SingularName: "secret", Namespaced: true,
			EtcdPrefix: "secrets",
			New:        func() runtime.Object { return &corev1.Secret{} }, NewList: func() runtime.Object { return &corev1.SecretList{} },
			Printer:  tables.Secret,
			Strategy: secret.Strategy, Default: secret.Default, Fields: secret.Fields,
		},
		{
			Version: "v1", Kind: "Event", Resource: "events", SingularName: "event", Namespaced: true,
			ShortNames: []string{"ev"}, EtcdPrefix: "events",
			New: func() runtime.Object { return &corev1.Event{} }, NewList: func() runtime.Object { return &corev1.EventList{} },
			Printer:  tables.Event,
			Strategy: event.Strategy, Fields: event.Fields,
		},
		{
			Version: "v1", Kind: "ServiceAccount", Resource: "serviceaccounts", SingularName: "serviceaccount", Namespaced: true,
			ShortNames: []string{"sa"}, EtcdPrefix: "serviceaccounts",
			New: func() runtime.Object { return &corev1.ServiceAccount{} }, NewList: func() runtime.Object { return &corev1.ServiceAccountList{} },
			Printer:      tables.ServiceAccount,
			Strategy:     serviceaccount.Strategy,
			TokenRequest: serviceaccount.TokenRequest,
		},
		{
			Group: "apps", Version: "v1", Kind: "ReplicaSet", Resource: "replicasets", SingularName: "replicaset", Namespaced: true,
			ShortNames: []string{"rs"}, Categories: []string{"all"}, EtcdPrefix: "replicasets",
			New: func() runtime.Object { return &appsv1.ReplicaSet{} }, NewList: func() runtime.Object { return &appsv1.ReplicaSetList{} },
			Printer:  tables.ReplicaSet,
			Strategy: replicaset.Strategy, StatusStrategy: replicaset.StatusStrategy, Default: replicaset.Default,
			Fields: replicaset.Fields, Scale: replicaset.Scale(),
		},
		{
			Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", SingularName: "deployment", Namespaced: true,
			ShortNames: []string{"deploy"}, Categories: []string{"all"}, EtcdPrefix: "deployments",
			New: func() runtime.Object { return &appsv1.Deployment{} }, NewList: func() runtime.Object { return &appsv1.DeploymentList{} },
			Printer:  tables.Deployment,
			Strategy: deployment.Strategy, StatusStrategy: deployment.StatusStrategy, Default: deployment.Default,
			Scale: deployment.Scale(),
		},
		{
			Group: "coordination.k8s.io", Version: "v1", Kind: "Lease", Resource: "leases", SingularName: "lease", Namespaced: true,
			EtcdPrefix: "leases",
			New:        func() runtime.Object { return &coordinationv1.Lease{} }, NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
			Printer:  tables.Lease,
			Strategy: lease.Strategy,
		},
		{
			Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice", Resource: "endpointslices", SingularName: "endpointslice", Namespaced: true,
			EtcdPrefix: "endpointslices",
			New:        func() runtime.Object { return &discoveryv1.EndpointSlice{} }, NewList: func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
			Printer:  tables.EndpointSlice,
			Strategy: endpointslice.Strategy, Default: endpointslice.Default,
		},
		{
			Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration", Resource: "mutatingwebhookconfigurations",
			SingularName: "mutatingwebhookconfiguration", EtcdPrefix: "mutatingwebhookconfigurations", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
			Printer:  tables.MutatingWebhookConfiguration,
			Strategy: webhookconfiguration.MutatingStrategy, Default: webhookconfiguration.DefaultMutating,
		},
		{
			Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Resource: "validatingwebhookconfigurations",
			SingularName: "validatingwebhookconfiguration", EtcdPrefix: "validatingwebhookconfigurations", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
			Printer:  tables.ValidatingWebhookConfiguration,
			Strategy: webhookconfiguration.ValidatingStrategy, Default: webhookconfiguration.DefaultValidating,
		},
		{
			Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Resource: "roles", SingularName: "role", Namespaced: true,
			EtcdPrefix: "roles",
			New:        func() runtime.Object { return &rbacv1.Role{} }, NewList: func() runtime.Object { return &rbacv1.RoleList{} },
			Strategy: rbac.RoleStrategy,
			Hooks:    func(d HookDeps) any { return rbac.RoleHook(d.RBAC) },
		},
		{
			Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Resource: "clusterroles", SingularName: "clusterrole",
			EtcdPrefix: "clusterroles",
			New:        func() runtime.Object { return &rbacv1.ClusterRole{} }, NewList: func() runtime.Object { return &rbacv1.ClusterRoleList{} },
			Strategy: rbac.ClusterRoleStrategy,
			Hooks:    func(d HookDeps) any { return rbac.RoleHook(d.RBAC) },
		},
		{
			Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding", Resource: "rolebindings", SingularName: "rolebinding", Namespaced: true,
			EtcdPrefix: "rolebindings",
			New:        func() runtime.Object { return &rbacv1.RoleBinding{} }, NewList: func() runtime.Object { return &rbacv1.RoleBindingList{} },
			Printer:  tables.RoleBinding,
			Strategy: rbac.RoleBindingStrategy, Default: rbac.DefaultRoleBinding,
			Hooks: func(d HookDeps) any { return rbac.BindingHook(d.RBAC) },
		},
		{
			Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding", Resource: "clusterrolebindings", SingularName: "clusterrolebinding",
			EtcdPrefix: "clusterrolebindings",
			New:        func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, NewList: func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
			Printer:  tables.ClusterRoleBinding,
			Strategy: rbac.ClusterRoleBindingStrategy, Default: rbac.DefaultClusterRoleBinding,
			Hooks: func(d HookDeps) any { return rbac.BindingHook(d.RBAC) },
		},
		{
			Version: "v1", Kind: "LimitRange", Resource: "limitranges", SingularName: "limitrange", Namespaced: true,
			ShortNames: []string{"limits"}, EtcdPrefix: "limitranges",
			New: func() runtime.Object { return &corev1.LimitRange{} }, NewList: func() runtime.Object { return &corev1.LimitRangeList{} },
			Strategy: limitrange.Strategy, Default: limitrange.Default,
		},
		{
			Version: "v1", Kind: "ResourceQuota", Resource: "resourcequotas", SingularName: "resourcequota", Namespaced: true,
			ShortNames: []string{"quota"}, EtcdPrefix: "resourcequotas",
			New: func() runtime.Object { return &corev1.ResourceQuota{} }, NewList: func() runtime.Object { return &corev1.ResourceQuotaList{} },
			Printer:  tables.ResourceQuota,
			Strategy: resourcequota.Strategy, StatusStrategy: resourcequota.StatusStrategy,
			Hooks: func(d HookDeps) any { return resourcequota.StatusHook{Usage: d.QuotaUsage} },
		},
		{
			Version: "v1", Kind: "ReplicationController", Resource: "replicationcontrollers", SingularName: "replicationcontroller", Namespaced: true,
			ShortNames: []string{"rc"}, Categories: []string{"all"}, EtcdPrefix: "controllers",
			New:      func() runtime.Object { return &corev1.ReplicationController{} },
			NewList:  func() runtime.Object { return &corev1.ReplicationControllerList{} },
			Printer:  tables.ReplicationController,
			Strategy: replicationcontroller.Strategy, StatusStrategy: replicationcontroller.StatusStrategy,
			Default: replicationcontroller.Default, Fields: replicationcontroller.Fields, Scale: replicationcontroller.Scale(),
		},
		{
			Version: "v1", Kind: "PodTemplate", Resource: "podtemplates", SingularName: "podtemplate", Namespaced: true,
			EtcdPrefix: "podtemplates",
			New:        func() runtime.Object { return &corev1.PodTemplate{} }, NewList: func() runtime.Object { return &corev1.PodTemplateList{} },
			Printer:  tables.PodTemplate,
			Strategy: podtemplate.Strategy, Default: podtemplate.Default,
		},
		{
			Version: "v1", Kind: "PersistentVolume", Resource: "persistentvolumes", SingularName: "persistentvolume",
			ShortNames: []string{"pv"}, EtcdPrefix: "persistentvolumes",
			New:      func() runtime.Object { return &corev1.PersistentVolume{} },
			NewList:  func() runtime.Object { return &corev1.PersistentVolumeList{} },
			Printer:  tables.PersistentVolume,
			Strategy: persistentvolume.Strategy, StatusStrategy: persistentvolume.StatusStrategy,
			Default: persistentvolume.Default, Fields: persistentvolume.Fields,
		},
		{
			Version: "v1", Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", SingularName: "persistentvolumeclaim", Namespaced: true,
			ShortNames: []string{"pvc"}, EtcdPrefix: "persistentvolumeclaims",
			New:      func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
			NewList:  func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
			Printer:  tables.PersistentVolumeClaim,
			Strategy: persistentvolumeclaim.Strategy, StatusStrategy: persistentvolumeclaim.StatusStrategy,
			Default: persistentvolumeclaim.Default, Fields: persistentvolumeclaim.Fields,
		},
		{
			Group: "apps", Version: "v1", Kind: "StatefulSet", Resource: "statefulsets", SingularName: "statefulset", Namespaced: true,
			ShortNames: []string{"sts"}, Categories: []string{"all"}, EtcdPrefix: "statefulsets",
			New: func() runtime.Object { return &appsv1.StatefulSet{} }, NewList: func() runtime.Object { return &appsv1.StatefulSetList{} },
			Printer:  tables.StatefulSet,
			Strategy: statefulset.Strategy, StatusStrategy: statefulset.StatusStrategy, Default: statefulset.Default,
			Scale: statefulset.Scale(),
		},
		{
			Group: "apps", Version: "v1", Kind: "DaemonSet", Resource: "daemonsets", SingularName: "daemonset", Namespaced: true,
			ShortNames: []string{"ds"}, Categories: []string{"all"}, EtcdPrefix: "daemonsets",
			New: func() runtime.Object { return &appsv1.DaemonSet{} }, NewList: func() runtime.Object { return &appsv1.DaemonSetList{} },
			Printer:  tables.DaemonSet,
			Strategy: daemonset.Strategy, StatusStrategy: daemonset.StatusStrategy, Default: daemonset.Default,
		},
		{
			Group: "apps", Version: "v1", Kind: "ControllerRevision", Resource: "controllerrevisions", SingularName: "controllerrevision", Namespaced: true,
			EtcdPrefix: "controllerrevisions",
			New:        func() runtime.Object { return &appsv1.ControllerRevision{} },
			NewList:    func() runtime.Object { return &appsv1.ControllerRevisionList{} },
			Printer:    tables.ControllerRevision,
			Strategy:   controllerrevision.Strategy,
		},
		{
			Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", SingularName: "job", Namespaced: true,
			Categories: []string{"all"}, EtcdPrefix: "jobs",
			New: func() runtime.Object { return &batchv1.Job{} }, NewList: func() runtime.Object { return &batchv1.JobList{} },
			Printer:  tables.Job,
			Strategy: job.Strategy, StatusStrategy: job.StatusStrategy, Default: job.Default, Fields: job.Fields,
		},
		{
			Group: "batch", Version: "v1", Kind: "CronJob", Resource: "cronjobs", SingularName: "cronjob", Namespaced: true,
			ShortNames: []string{"cj"}, Categories: []string{"all"}, EtcdPrefix: "cronjobs",
			New: func() runtime.Object { return &batchv1.CronJob{} }, NewList: func() runtime.Object { return &batchv1.CronJobList{} },
			Printer:  tables.CronJob,
			Strategy: cronjob.Strategy, StatusStrategy: cronjob.StatusStrategy, Default: cronjob.Default,
		},
		{
			Group: "policy", Version: "v1", Kind: "PodDisruptionBudget", Resource: "poddisruptionbudgets", SingularName: "poddisruptionbudget", Namespaced: true,
			ShortNames: []string{"pdb"}, EtcdPrefix: "poddisruptionbudgets",
			New:      func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
			NewList:  func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
			Printer:  tables.PodDisruptionBudget,
			Strategy: poddisruptionbudget.Strategy, StatusStrategy: poddisruptionbudget.StatusStrategy,
		},
		{
			Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass", Resource: "priorityclasses", SingularName: "priorityclass",
			ShortNames: []string{"pc"}, EtcdPrefix: "priorityclasses",
			New:      func() runtime.Object { return &schedulingv1.PriorityClass{} },
			NewList:  func() runtime.Object { return &schedulingv1.PriorityClassList{} },
			Printer:  tables.PriorityClass,
			Strategy: priorityclass.Strategy, Default: priorityclass.Default,
		},
		{
			Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass", Resource: "runtimeclasses", SingularName: "runtimeclass",
			EtcdPrefix: "runtimeclasses",
			New:        func() runtime.Object { return &nodev1.RuntimeClass{} }, NewList: func() runtime.Object { return &nodev1.RuntimeClassList{} },
			Printer:  tables.RuntimeClass,
			Strategy: runtimeclass.Strategy,
		},
		{
			Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Resource: "ingresses", SingularName: "ingress", Namespaced: true,
			ShortNames: []string{"ing"}, EtcdPrefix: "ingress",
			New: func() runtime.Object { return &networkingv1.Ingress{} }, NewList: func() runtime.Object { return &networkingv1.IngressList{} },
			Printer:  tables.Ingress,
			Strategy: ingress.Strategy, StatusStrategy: ingress.StatusStrategy,
		},
		{
			Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass", Resource: "ingressclasses", SingularName: "ingressclass",
			EtcdPrefix: "ingressclasses",
			New:        func() runtime.Object { return &networkingv1.IngressClass{} },
			NewList:    func() runtime.Object { return &networkingv1.IngressClassList{} },
			Printer:    tables.IngressClass,
			Strategy:   ingress.ClassStrategy,
		},
		{
			Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy", Resource: "networkpolicies", SingularName: "networkpolicy", Namespaced: true,
			ShortNames: []string{"netpol"}, EtcdPrefix: "networkpolicies",
			New:      func() runtime.Object { return &networkingv1.NetworkPolicy{} },
			NewList:  func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
			Printer:  tables.NetworkPolicy,
			Strategy: networkpolicy.Strategy, Default: networkpolicy.Default,
		},
		{
			Group: "events.k8s.io", Version: "v1", Kind: "Event", Resource: "events", SingularName: "event", Namespaced: true,
			ShortNames: []string{"ev"}, EtcdPrefix: "events",
			New: func() runtime.Object { return &eventsv1.Event{} }, NewList: func() runtime.Object { return &eventsv1.EventList{} },
			Printer:  tables.EventV1,
			Strategy: event.V1Strategy, Fields: event.V1Fields, SharedStorage: event.V1Storage(),
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Resource: "storageclasses", SingularName: "storageclass",
			ShortNames: []string{"sc"}, EtcdPrefix: "storageclasses",
			New:      func() runtime.Object { return &storagev1.StorageClass{} },
			NewList:  func() runtime.Object { return &storagev1.StorageClassList{} },
			Printer:  tables.StorageClass,
			Strategy: storageclass.Strategy, Default: storageclass.Default,
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver", Resource: "csidrivers", SingularName: "csidriver",
			EtcdPrefix: "csidrivers",
			New:        func() runtime.Object { return &storagev1.CSIDriver{} }, NewList: func() runtime.Object { return &storagev1.CSIDriverList{} },
			Printer:  tables.CSIDriver,
			Strategy: csi.DriverStrategy, Default: csi.DefaultDriver,
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "CSINode", Resource: "csinodes", SingularName: "csinode",
			EtcdPrefix: "csinodes",
			New:        func() runtime.Object { return &storagev1.CSINode{} }, NewList: func() runtime.Object { return &storagev1.CSINodeList{} },
			Printer:  tables.CSINode,
			Strategy: csi.NodeStrategy,
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity", Resource: "csistoragecapacities", SingularName: "csistoragecapacity",
			Namespaced: true, EtcdPrefix: "csistoragecapacities",
			New:      func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
			NewList:  func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
			Printer:  tables.CSIStorageCapacity,
			Strategy: csi.StorageCapacityStrategy,
		},
		{
			Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttachment", Resource: "volumeattachments", SingularName: "volumeattachment",
			EtcdPrefix: "volumeattachments",
			New:        func() runtime.Object { return &storagev1.VolumeAttachment{} },
			NewList:    func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
			Printer:    tables.VolumeAttachment,
			Strategy:   volumeattachment.Strategy, StatusStrategy: volumeattachment.StatusStrategy,
		},
		{
			Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest", Resource: "certificatesigningrequests",
			SingularName: "certificatesigningrequest", ShortNames: []string{"csr"}, EtcdPrefix: "certificatesigningrequests",
			New:      func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
			NewList:  func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
			Printer:  tables.CertificateSigningRequest,
			Strategy: certificatesigningrequest.Strategy, StatusStrategy: certificatesigningrequest.StatusStrategy,
			Approval: certificatesigningrequest.ApprovalStrategy, Fields: certificatesigningrequest.Fields,
		},
		{
			Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema", Resource: "flowschemas", SingularName: "flowschema",
			EtcdPrefix: "flowschemas",
			New:        func() runtime.Object { return &flowcontrolv1.FlowSchema{} }, NewList: func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
			Printer:  tables.FlowSchema,
			Strategy: flowcontrol.FlowSchemaStrategy, StatusStrategy: flowcontrol.FlowSchemaStatusStrategy,
			Default: flowcontrol.DefaultFlowSchema,
		},
		{
			Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "PriorityLevelConfiguration", Resource: "prioritylevelconfigurations",
			SingularName: "prioritylevelconfiguration", EtcdPrefix: "prioritylevelconfigurations",
			New:      func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
			NewList:  func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} },
			Printer:  tables.PriorityLevelConfiguration,
			Strategy: flowcontrol.PriorityLevelStrategy, StatusStrategy: flowcontrol.PriorityLevelStatusStrategy,
			Default: flowcontrol.DefaultPriorityLevel,
		},
		{
			Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy", Resource: "validatingadmissionpolicies",
			SingularName: "validatingadmissionpolicy", EtcdPrefix: "validatingadmissionpolicies", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} },
			Printer:  tables.ValidatingAdmissionPolicy,
			Strategy: validatingadmissionpolicy.Strategy, StatusStrategy: validatingadmissionpolicy.StatusStrategy,
			Default: validatingadmissionpolicy.Default,
		},
		{
			Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding", Resource: "validatingadmissionpolicybindings",
			SingularName: "validatingadmissionpolicybinding", EtcdPrefix: "validatingadmissionpolicybindings", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} },
			Printer:  tables.ValidatingAdmissionPolicyBinding,
			Strategy: validatingadmissionpolicy.BindingStrategy, Default: validatingadmissionpolicy.DefaultBinding,
		},
		{
			Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService", Resource: "apiservices",
			SingularName: "apiservice", EtcdPrefix: "apiregistration.k8s.io/apiservices", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &apiregistrationv1.APIService{} },
			NewList:  func() runtime.Object { return &apiregistrationv1.APIServiceList{} },
			Printer:  tables.APIService,
			Strategy: apiservice.Strategy, StatusStrategy: apiservice.StatusStrategy, Default: apiservice.Default,
		},
		{
			Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers",
			SingularName: "horizontalpodautoscaler", ShortNames: []string{"hpa"}, Categories: []string{"all"}, Namespaced: true,
			EtcdPrefix: "horizontalpodautoscalers",
			New:        func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
			NewList:    func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
			Printer:    tables.HorizontalPodAutoscaler,
			Strategy:   horizontalpodautoscaler.Strategy, StatusStrategy: horizontalpodautoscaler.StatusStrategy,
			Default: horizontalpodautoscaler.Default,
		},
		{
			Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers",
			SingularName: "horizontalpodautoscaler", ShortNames: []string{"hpa"}, Categories: []string{"all"}, Namespaced: true,
			EtcdPrefix: "horizontalpodautoscalers",
			New:        func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
			NewList:    func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
			Printer:    tables.HorizontalPodAutoscalerV1,
			Strategy:   horizontalpodautoscaler.V1Strategy, StatusStrategy: horizontalpodautoscaler.V1StatusStrategy,
			Default: horizontalpodautoscaler.DefaultV1, SharedStorage: horizontalpodautoscaler.V1Storage(),
		},
	}
}
