package registry

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"skiff.dev/apiserver/pkg/printers/tables"
	"skiff.dev/apiserver/pkg/registry/certificates/certificatesigningrequest"
	"skiff.dev/apiserver/pkg/registry/core/namespace"
	"skiff.dev/apiserver/pkg/registry/core/pod"
	"skiff.dev/apiserver/pkg/registry/core/resourcequota"
	"skiff.dev/apiserver/pkg/registry/core/service"
	"skiff.dev/apiserver/pkg/registry/core/serviceaccount"
	"skiff.dev/apiserver/pkg/registry/rbac"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Subresource names.
const (
	SubStatus   = "status"
	SubScale    = "scale"
	SubBinding  = "binding"
	SubFinalize = namespace.SubFinalize
	SubToken    = serviceaccount.SubToken
	// The subresources that reach the pod's node's kubelet.
	SubLog         = pod.SubLog
	SubExec        = pod.SubExec
	SubAttach      = pod.SubAttach
	SubPortForward = pod.SubPortForward
	// SubProxy passes requests to the pod, a ready endpoint of the
	// service, or the node's kubelet.
	SubProxy    = "proxy"
	SubApproval = certificatesigningrequest.SubApproval
	SubEviction = "eviction"
	// SubEphemeralContainers serves pods/ephemeralcontainers.
	SubEphemeralContainers = pod.SubEphemeralContainers
)

// HookDeps are what the server builds that a kind's store hooks need.
type HookDeps struct {
	// ServiceIPs allocates Services' cluster IPs and node ports.
	ServiceIPs *service.ServiceAllocator
	// QuotaUsage computes a ResourceQuota's status.used.
	QuotaUsage resourcequota.Usage
	// RBAC checks the RBAC kinds' writes for privilege escalation.
	RBAC *rbac.Escalation
}

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
	Strategy   rest.Strategy
	// StatusStrategy, when set, serves the status subresource.
	StatusStrategy rest.Strategy
	Fields         rest.FieldsFunc
	// Scale serves the scale subresource (autoscaling/v1 Scale).
	Scale *rest.ScaleAccessor
	// Binding serves pods/binding; Finalize serves namespaces/finalize;
	// TokenRequest serves serviceaccounts/token: each the kind's.
	Binding      rest.BindFunc
	Finalize     rest.FinalizeFunc
	TokenRequest rest.TokenRequestFunc
	// GracePeriod, when set, makes deletion graceful (pods: it waits for
	// the kubelet): it returns the grace period of a delete of obj, 0 to
	// delete at once.
	GracePeriod func(obj runtime.Object, opts *metav1.DeleteOptions) int64
	// MarkTerminating, when set, runs on each delete that leaves the object
	// in place (a namespace's status.phase becomes Terminating).
	MarkTerminating func(obj runtime.Object)
	// ReturnDeletedObject: DELETE answers with the object, not a Status.
	ReturnDeletedObject bool
	// Finalizing reports finalization beyond metadata.finalizers that must
	// finish before the object goes (a namespace's spec.finalizers).
	Finalizing func(obj runtime.Object) bool
	// Approval serves certificatesigningrequests/approval.
	Approval rest.Strategy
	// Eviction serves pods/eviction (POST policy/v1 Eviction): the kind's
	// eviction of an object.
	Eviction rest.EvictFunc
	// EphemeralContainers serves pods/ephemeralcontainers.
	EphemeralContainers rest.Strategy
	// Kubelet serves pods/log, pods/exec, pods/attach and pods/portforward
	// by proxying to the kubelet of the pod's node: the kind's options and
	// where on which kubelet a request goes.
	Kubelet *rest.Kubelet
	// Proxy serves the proxy subresource (pods, services, nodes): the
	// kind's proxy options and where a request goes.
	Proxy *rest.Proxy
	// SharedStorage, when set, serves the kind from another resource's
	// storage (events.k8s.io Events are stored as core Events).
	SharedStorage *rest.SharedStorage
	// Default, when set, replaces upstream's defaulting of the kind's
	// objects (a custom resource prunes and defaults by its schema).
	Default func(obj runtime.Object)
	// MarkDeleting, when set, makes the first delete request mark the object
	// (set finalizers and conditions) instead of deleting it at once, as a
	// CustomResourceDefinition takes customresourcecleanup.apiextensions.k8s.io.
	MarkDeleting func(obj runtime.Object)
	// Printer, when set, prints the kind's server-side Table with
	// upstream's columns (package printers/tables); others get the default
	// NAME / CREATED AT table.
	Printer *tables.Kind
	// Hooks, when set, builds the store's CreateHook / UpdateHook /
	// DeleteHook of the kind (a Service's IP allocation, a quota's status)
	// from what the server provides.
	Hooks func(HookDeps) any
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
	if r.Binding != nil {
		out = append(out, SubBinding)
	}
	if r.Finalize != nil {
		out = append(out, SubFinalize)
	}
	if r.TokenRequest != nil {
		out = append(out, SubToken)
	}
	if r.Approval != nil {
		out = append(out, SubApproval)
	}
	if r.Eviction != nil {
		out = append(out, SubEviction)
	}
	if r.EphemeralContainers != nil {
		out = append(out, SubEphemeralContainers)
	}
	if r.Kubelet != nil {
		out = append(out, SubAttach, SubExec, SubLog, SubPortForward)
	}
	if r.Proxy != nil {
		out = append(out, SubProxy)
	}
	return out
}

// ObjectSubresource is the strategy of sub when it is read and written as
// the whole object by get, update and patch (status, approval,
// ephemeralcontainers); nil for the others and the main resource.
func (r *Resource) ObjectSubresource(sub string) rest.Strategy {
	switch sub {
	case SubStatus:
		return r.StatusStrategy
	case SubApproval:
		return r.Approval
	case SubEphemeralContainers:
		return r.EphemeralContainers
	}
	return nil
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
		case SubApproval, SubEphemeralContainers:
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
