package registry

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Subresource names.
const (
	SubStatus   = "status"
	SubScale    = "scale"
	SubBinding  = "binding"
	SubFinalize = "finalize"
	SubToken    = "token"
	// The subresources that reach the pod's node's kubelet.
	SubLog         = "log"
	SubExec        = "exec"
	SubAttach      = "attach"
	SubPortForward = "portforward"
	// SubProxy passes requests to the pod, a ready endpoint of the
	// service, or the node's kubelet.
	SubProxy = "proxy"
)

// Resource is one row of the table: everything the REST layer, discovery
// and OpenAPI need to serve a kind.
type Resource struct {
	Group, Version, Kind string
	// Resource is the plural name in the URL, e.g. "replicasets".
	Resource     string
	SingularName string
	ShortNames   []string
	Categories   []string
	Namespaced   bool
	// EtcdPrefix is the key prefix under /registry (upstream's names: a
	// Node lives under "minions", a Service under "services/specs").
	EtcdPrefix string
	New        func() runtime.Object
	NewList    func() runtime.Object
	Strategy   Strategy
	// StatusStrategy, when set, serves the status subresource.
	StatusStrategy Strategy
	Fields         FieldsFunc
	// Scale serves the scale subresource (autoscaling/v1 Scale).
	Scale *ScaleAccessor
	// Binding serves pods/binding; Finalize serves namespaces/finalize;
	// TokenRequest serves serviceaccounts/token.
	Binding      bool
	Finalize     bool
	TokenRequest bool
	// GracefulDelete applies to pods: deletion waits for the kubelet.
	GracefulDelete bool
	// ReturnDeletedObject: DELETE answers with the object, not a Status.
	ReturnDeletedObject bool
	// Finalizing reports finalization beyond metadata.finalizers that must
	// finish before the object goes (a namespace's spec.finalizers).
	Finalizing func(obj runtime.Object) bool
	// Approval serves certificatesigningrequests/approval.
	Approval Strategy
	// Eviction serves pods/eviction (POST policy/v1 Eviction).
	Eviction bool
	// Kubelet serves pods/log, pods/exec, pods/attach and pods/portforward
	// by proxying to the kubelet of the pod's node.
	Kubelet bool
	// Proxy serves the proxy subresource (pods, services, nodes).
	Proxy bool
	// SharedStorage, when set, serves the kind from another resource's
	// storage (events.k8s.io Events are stored as core Events).
	SharedStorage *SharedStorage
	// Default, when set, replaces upstream's defaulting of the kind's
	// objects (a custom resource prunes and defaults by its schema).
	Default func(obj runtime.Object)
	// MarkDeleting, when set, makes the first delete request mark the object
	// (set finalizers and conditions) instead of deleting it at once, as a
	// CustomResourceDefinition takes customresourcecleanup.apiextensions.k8s.io.
	MarkDeleting func(obj runtime.Object)
	// Custom is set for a custom resource, served from a
	// CustomResourceDefinition.
	Custom *Custom
}

// Custom is what serving a custom resource needs beyond the generic store.
type Custom struct {
	// ListKind is the kind of the list, from the CRD's names.
	ListKind string
	// Prune drops the fields the schema does not know from obj and returns
	// their paths ("spec.foo"), for warnings or strict field validation.
	Prune func(obj runtime.Object) []string
	// Table prints an object or a list with the CRD's printer columns.
	Table func(obj runtime.Object, noHeaders bool) (*metav1.Table, error)
	// Terminating reports that the CRD is being deleted: creates are refused.
	Terminating func() bool
	// Schema is the version's schema, published in OpenAPI.
	Schema *spec.Schema
}

// ListKindName is the kind of the resource's lists.
func (r *Resource) ListKindName() string {
	if r.Custom != nil && r.Custom.ListKind != "" {
		return r.Custom.ListKind
	}
	return r.Kind + "List"
}

// GroupVersion of the resource.
func (r *Resource) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

// GroupVersionKind of the resource.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GroupVersion().WithKind(r.Kind)
}

// GroupResource of the resource.
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// Subresources lists the subresources served, in a stable order.
func (r *Resource) Subresources() []string {
	var out []string
	if r.StatusStrategy != nil {
		out = append(out, SubStatus)
	}
	if r.Scale != nil {
		out = append(out, SubScale)
	}
	if r.Binding {
		out = append(out, SubBinding)
	}
	if r.Finalize {
		out = append(out, SubFinalize)
	}
	if r.TokenRequest {
		out = append(out, SubToken)
	}
	if r.Approval != nil {
		out = append(out, SubApproval)
	}
	if r.Eviction {
		out = append(out, SubEviction)
	}
	if r.Kubelet {
		out = append(out, SubAttach, SubExec, SubLog, SubPortForward)
	}
	if r.Proxy {
		out = append(out, SubProxy)
	}
	return out
}

// SubresourceInfo is what discovery and OpenAPI say about a subresource:
// the kind it takes and returns, and its verbs.
type SubresourceInfo struct {
	Name                 string
	Group, Version, Kind string
	Verbs                []string
}

// SubresourceInfos describes the subresources served, in a stable order.
func (r *Resource) SubresourceInfos() []SubresourceInfo {
	var out []SubresourceInfo
	for _, sub := range r.Subresources() {
		info := SubresourceInfo{Name: sub, Group: r.Group, Version: r.Version, Kind: r.Kind}
		switch sub {
		case SubStatus:
			info.Verbs = []string{"get", "patch", "update"}
		case SubScale:
			info.Group, info.Version, info.Kind = "autoscaling", "v1", "Scale"
			info.Verbs = []string{"get", "patch", "update"}
		case SubBinding:
			info.Group, info.Version, info.Kind = "", "v1", "Binding"
			info.Verbs = []string{"create"}
		case SubFinalize:
			info.Verbs = []string{"update"}
		case SubToken:
			info.Group, info.Version, info.Kind = "authentication.k8s.io", "v1", "TokenRequest"
			info.Verbs = []string{"create"}
		case SubApproval:
			info.Verbs = []string{"get", "patch", "update"}
		case SubEviction:
			info.Group, info.Version, info.Kind = "policy", "v1", "Eviction"
			info.Verbs = []string{"create"}
		case SubLog:
			info.Verbs = []string{"get"}
		case SubExec, SubAttach, SubPortForward:
			// Upstream's connect subresources: the kind is the options type.
			info.Kind = map[string]string{SubExec: "PodExecOptions", SubAttach: "PodAttachOptions", SubPortForward: "PodPortForwardOptions"}[sub]
			info.Verbs = []string{"create", "get"}
		case SubProxy:
			info.Kind = r.Kind + "ProxyOptions"
			info.Verbs = []string{"create", "delete", "get", "patch", "update"}
		}
		out = append(out, info)
	}
	return out
}

// Verbs of the main resource, as discovery lists them.
func (r *Resource) Verbs() []string {
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

func main(opts ...func(*genericStrategy)) genericStrategy {
	s := genericStrategy{split: mainEndpoint, unconditional: true}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func status(opts ...func(*genericStrategy)) genericStrategy {
	s := genericStrategy{split: statusEndpoint, unconditional: true}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func whole(opts ...func(*genericStrategy)) genericStrategy {
	s := genericStrategy{split: noStatus, unconditional: true}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func withGeneration(s *genericStrategy) { s.trackGeneration = true }
func withLabelsInGeneration(s *genericStrategy) {
	s.trackGeneration, s.labelsInGeneration = true, true
}
func withCreateOnUpdate(s *genericStrategy) { s.createOnUpdate = true }

// conditionalUpdate: an update must name the resourceVersion it read, as
// upstream's strategies of these kinds say (AllowUnconditionalUpdate false:
// Lease, the CSI and VolumeAttachment kinds, RuntimeClass,
// PodDisruptionBudget, the admission policies and webhook configurations).
func conditionalUpdate(s *genericStrategy) { s.unconditional = false }

// Resources returns the table of every kind skiff serves.
func Resources() []*Resource {
	return append(append(append(append(baseResources(), moreResources()...), policyResources()...), apiRegistrationResources()...),
		autoscalingResources()...)
}

func baseResources() []*Resource {
	return []*Resource{
		{
			Version: "v1", Kind: "Namespace", Resource: "namespaces", SingularName: "namespace",
			ShortNames: []string{"ns"}, EtcdPrefix: "namespaces",
			New: func() runtime.Object { return &corev1.Namespace{} }, NewList: func() runtime.Object { return &corev1.NamespaceList{} },
			Strategy: main(func(s *genericStrategy) { s.prepareForCreate = prepareNamespace }), StatusStrategy: status(),
			Fields: namespaceFields, Finalize: true, ReturnDeletedObject: true, Finalizing: namespaceFinalizing,
		},
		{
			Version: "v1", Kind: "Pod", Resource: "pods", SingularName: "pod", Namespaced: true,
			ShortNames: []string{"po"}, Categories: []string{"all"}, EtcdPrefix: "pods",
			New: func() runtime.Object { return &corev1.Pod{} }, NewList: func() runtime.Object { return &corev1.PodList{} },
			Strategy: main(func(s *genericStrategy) { s.prepareForCreate = preparePod }), StatusStrategy: status(),
			Fields: podFields, Binding: true, Eviction: true, Kubelet: true, Proxy: true, GracefulDelete: true, ReturnDeletedObject: true,
		},
		{
			Version: "v1", Kind: "Node", Resource: "nodes", SingularName: "node",
			ShortNames: []string{"no"}, EtcdPrefix: "minions",
			New: func() runtime.Object { return &corev1.Node{} }, NewList: func() runtime.Object { return &corev1.NodeList{} },
			Strategy: main(func(s *genericStrategy) { s.statusOnCreate = true }), StatusStrategy: status(), Fields: nodeFields, Proxy: true,
		},
		{
			Version: "v1", Kind: "Service", Resource: "services", SingularName: "service", Namespaced: true,
			ShortNames: []string{"svc"}, Categories: []string{"all"}, EtcdPrefix: "services/specs",
			New: func() runtime.Object { return &corev1.Service{} }, NewList: func() runtime.Object { return &corev1.ServiceList{} },
			Strategy: serviceStrategy{main()}, StatusStrategy: status(), ReturnDeletedObject: true, Proxy: true,
		},
		{
			Version: "v1", Kind: "Endpoints", Resource: "endpoints", SingularName: "endpoints", Namespaced: true,
			ShortNames: []string{"ep"}, EtcdPrefix: "services/endpoints",
			New: func() runtime.Object { return &corev1.Endpoints{} }, NewList: func() runtime.Object { return &corev1.EndpointsList{} },
			Strategy: whole(withCreateOnUpdate),
		},
		{
			Version: "v1", Kind: "ConfigMap", Resource: "configmaps", SingularName: "configmap", Namespaced: true,
			ShortNames: []string{"cm"}, EtcdPrefix: "configmaps",
			New: func() runtime.Object { return &corev1.ConfigMap{} }, NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
			Strategy: whole(),
		},
		{
			Version: "v1", Kind: "Secret", Resource: "secrets", SingularName: "secret", Namespaced: true,
			EtcdPrefix: "secrets",
			New:        func() runtime.Object { return &corev1.Secret{} }, NewList: func() runtime.Object { return &corev1.SecretList{} },
			Strategy: whole(), Fields: secretFields,
		},
		{
			Version: "v1", Kind: "Event", Resource: "events", SingularName: "event", Namespaced: true,
			ShortNames: []string{"ev"}, EtcdPrefix: "events",
			New: func() runtime.Object { return &corev1.Event{} }, NewList: func() runtime.Object { return &corev1.EventList{} },
			Strategy: whole(withCreateOnUpdate), Fields: eventFields,
		},
		{
			Version: "v1", Kind: "ServiceAccount", Resource: "serviceaccounts", SingularName: "serviceaccount", Namespaced: true,
			ShortNames: []string{"sa"}, EtcdPrefix: "serviceaccounts",
			New: func() runtime.Object { return &corev1.ServiceAccount{} }, NewList: func() runtime.Object { return &corev1.ServiceAccountList{} },
			Strategy: whole(), TokenRequest: true,
		},
		{
			Group: "apps", Version: "v1", Kind: "ReplicaSet", Resource: "replicasets", SingularName: "replicaset", Namespaced: true,
			ShortNames: []string{"rs"}, Categories: []string{"all"}, EtcdPrefix: "replicasets",
			New: func() runtime.Object { return &appsv1.ReplicaSet{} }, NewList: func() runtime.Object { return &appsv1.ReplicaSetList{} },
			Strategy: main(withGeneration), StatusStrategy: status(), Fields: replicaSetFields,
			Scale: replicaSetScale(),
		},
		{
			Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", SingularName: "deployment", Namespaced: true,
			ShortNames: []string{"deploy"}, Categories: []string{"all"}, EtcdPrefix: "deployments",
			New: func() runtime.Object { return &appsv1.Deployment{} }, NewList: func() runtime.Object { return &appsv1.DeploymentList{} },
			Strategy: main(withGeneration), StatusStrategy: status(),
			Scale: deploymentScale(),
		},
		{
			Group: "coordination.k8s.io", Version: "v1", Kind: "Lease", Resource: "leases", SingularName: "lease", Namespaced: true,
			EtcdPrefix: "leases",
			New:        func() runtime.Object { return &coordinationv1.Lease{} }, NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
			Strategy: whole(conditionalUpdate, withCreateOnUpdate),
		},
		{
			Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice", Resource: "endpointslices", SingularName: "endpointslice", Namespaced: true,
			EtcdPrefix: "endpointslices",
			New:        func() runtime.Object { return &discoveryv1.EndpointSlice{} }, NewList: func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
			Strategy: whole(withLabelsInGeneration),
		},
		{
			Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration", Resource: "mutatingwebhookconfigurations",
			SingularName: "mutatingwebhookconfiguration", EtcdPrefix: "mutatingwebhookconfigurations", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
			Strategy: whole(conditionalUpdate, withGeneration),
		},
		{
			Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Resource: "validatingwebhookconfigurations",
			SingularName: "validatingwebhookconfiguration", EtcdPrefix: "validatingwebhookconfigurations", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
			Strategy: whole(conditionalUpdate, withGeneration),
		},
		{
			Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Resource: "roles", SingularName: "role", Namespaced: true,
			EtcdPrefix: "roles",
			New:        func() runtime.Object { return &rbacv1.Role{} }, NewList: func() runtime.Object { return &rbacv1.RoleList{} },
			Strategy: whole(),
		},
		{
			Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Resource: "clusterroles", SingularName: "clusterrole",
			EtcdPrefix: "clusterroles",
			New:        func() runtime.Object { return &rbacv1.ClusterRole{} }, NewList: func() runtime.Object { return &rbacv1.ClusterRoleList{} },
			Strategy: whole(),
		},
		{
			Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding", Resource: "rolebindings", SingularName: "rolebinding", Namespaced: true,
			EtcdPrefix: "rolebindings",
			New:        func() runtime.Object { return &rbacv1.RoleBinding{} }, NewList: func() runtime.Object { return &rbacv1.RoleBindingList{} },
			Strategy: whole(),
		},
		{
			Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding", Resource: "clusterrolebindings", SingularName: "clusterrolebinding",
			EtcdPrefix: "clusterrolebindings",
			New:        func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, NewList: func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
			Strategy: whole(),
		},
	}
}
