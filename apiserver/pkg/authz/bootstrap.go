package authz

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AutoUpdateAnnotation marks bootstrap objects the server keeps as they
// should be; set it to "false" to keep a local change.
const AutoUpdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate"

func rule(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

var (
	read      = []string{"get", "list", "watch"}
	readWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	eventVerb = []string{"create", "update", "patch"}
	core      = []string{""}
)

func bootstrapMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"},
		Annotations: map[string]string{AutoUpdateAnnotation: "true"},
	}
}

// eventRules let a component record events in both event APIs.
func eventRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rule(eventVerb, core, "events"), rule(eventVerb, []string{"events.k8s.io"}, "events")}
}

// NodeRules are what a kubelet may do at most (upstream's system:node
// role); the Node authorizer narrows them to the node's own objects.
func NodeRules() []rbacv1.PolicyRule {
	return append([]rbacv1.PolicyRule{
		rule([]string{"create", "get", "list", "watch", "update", "patch", "delete"}, core, "nodes"),
		rule([]string{"patch", "update"}, core, "nodes/status"),
		rule(read, core, "pods"),
		rule([]string{"create", "delete"}, core, "pods"),
		rule([]string{"patch", "update"}, core, "pods/status"),
		rule([]string{"create"}, core, "pods/eviction"),
		rule(read, core, "services", "endpoints"),
		rule([]string{"get", "list", "watch"}, []string{"discovery.k8s.io"}, "endpointslices"),
		rule([]string{"get"}, core, "secrets", "configmaps", "persistentvolumeclaims", "persistentvolumes"),
		// skiff's local-path provisioner runs in every kubelet (as k3s's
		// runs under a service account with these rights): it watches the
		// claims handed to skiff.dev/local-path and makes and deletes
		// their volumes.
		rule([]string{"list", "watch"}, core, "persistentvolumeclaims"),
		rule([]string{"list", "watch", "create", "delete"}, core, "persistentvolumes"),
		rule([]string{"get", "list", "watch"}, []string{"storage.k8s.io"}, "storageclasses"),
		rule([]string{"get", "create", "update", "patch", "delete"}, []string{"coordination.k8s.io"}, "leases"),
		rule([]string{"create"}, []string{"authentication.k8s.io"}, "tokenreviews"),
		rule([]string{"create"}, []string{"authorization.k8s.io"}, "subjectaccessreviews", "localsubjectaccessreviews"),
		// The projected service account token volume of every pod.
		rule([]string{"create"}, core, "serviceaccounts/token"),
		rule([]string{"get", "list", "watch"}, []string{"node.k8s.io"}, "runtimeclasses"),
		rule([]string{"get", "list", "watch"}, []string{"storage.k8s.io"}, "csidrivers"),
		rule([]string{"create", "get", "update", "patch", "delete"}, []string{"storage.k8s.io"}, "csinodes"),
		rule([]string{"get"}, []string{"storage.k8s.io"}, "volumeattachments"),
		rule([]string{"create", "get", "list", "watch"}, []string{"certificates.k8s.io"}, "certificatesigningrequests"),
	}, eventRules()...)
}

// BootstrapClusterRoles are the roles the components need, and upstream's
// user-facing admin, edit and view, as upstream names them.
func BootstrapClusterRoles() []*rbacv1.ClusterRole {
	cr := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: bootstrapMeta(name), Rules: rules}
	}
	discovery := rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{
		"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"}}
	controllerManager := append([]rbacv1.PolicyRule{
		// skiff's controller manager runs every controller under its own
		// identity (upstream gives each controller a service account), so
		// it holds the union of their roles: the garbage collector's and
		// the namespace controller's reach every resource.
		rule(read, []string{"*"}, "*"),
		rule([]string{"patch", "update", "delete", "deletecollection"}, []string{"*"}, "*"),
		rule(append(readWrite, "deletecollection"), core, "pods", "services", "endpoints", "configmaps", "secrets", "serviceaccounts", "nodes", "namespaces", "events",
			"replicationcontrollers", "persistentvolumeclaims", "persistentvolumes", "resourcequotas"),
		rule([]string{"update", "patch"}, core, "pods/status", "nodes/status", "services/status", "namespaces/status", "namespaces/finalize"),
		rule([]string{"create"}, core, "pods/eviction", "pods/binding"),
		rule(append(readWrite, "deletecollection"), []string{"apps"}, "replicasets", "deployments", "statefulsets", "daemonsets", "controllerrevisions"),
		rule(append(readWrite, "deletecollection"), []string{"batch"}, "jobs", "cronjobs"),
		rule([]string{"update", "patch"}, []string{"certificates.k8s.io"}, "certificatesigningrequests/status", "certificatesigningrequests/approval"),
		// Upstream's csrapproving, csrsigning and csrcleaner controllers'
		// rights: approve kubelets' client certificates, sign with the
		// kubernetes.io signers.
		signerRule("approve", "kubernetes.io/kube-apiserver-client-kubelet"),
		signerRule("sign", "kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown"),
		rule([]string{"get", "update", "patch"}, []string{"apps"}, "replicasets/status", "deployments/status", "replicasets/scale", "deployments/scale"),
		rule(append(readWrite, "deletecollection"), []string{"discovery.k8s.io"}, "endpointslices"),
		rule(append(readWrite, "deletecollection"), []string{"coordination.k8s.io"}, "leases"),
		rule(append(readWrite, "deletecollection"), []string{"rbac.authorization.k8s.io"}, "roles", "rolebindings"),
		// Upstream's clusterrole-aggregation controller's: it writes into
		// an aggregated ClusterRole rules it does not hold itself.
		rule([]string{"escalate"}, []string{"rbac.authorization.k8s.io"}, "clusterroles"),
		rule([]string{"create"}, []string{"authentication.k8s.io"}, "tokenreviews"),
		rule([]string{"create"}, []string{"authorization.k8s.io"}, "subjectaccessreviews"),
		// Upstream's horizontal-pod-autoscaler role: its status, any kind's
		// /scale, and the metrics APIs.
		rule([]string{"update"}, []string{"autoscaling"}, "horizontalpodautoscalers/status"),
		rule([]string{"get", "update"}, []string{"*"}, "*/scale"),
		rule([]string{"list"}, []string{"metrics.k8s.io"}, "pods"),
		rule([]string{"get", "list"}, []string{"custom.metrics.k8s.io", "external.metrics.k8s.io"}, "*"),
	}, eventRules()...)
	return append([]*rbacv1.ClusterRole{
		cr("cluster-admin",
			rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}),
		cr("system:discovery", discovery),
		// Aggregated API servers delegate authentication and authorization
		// to this server (upstream's bootstrap role, which their manifests
		// bind).
		cr("system:auth-delegator", rule([]string{"create"}, []string{"authentication.k8s.io"}, "tokenreviews"),
			rule([]string{"create"}, []string{"authorization.k8s.io"}, "subjectaccessreviews")),
		cr("system:public-info-viewer", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}}),
		cr("system:monitoring", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{
			"/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*"}}),
		aggregatedMetricsReader(),
		// Service account issuer discovery (upstream's role of the same name).
		cr("system:service-account-issuer-discovery", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/"}}),
		cr("system:basic-user", rule([]string{"create"}, []string{"authorization.k8s.io"}, "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			rule([]string{"create"}, []string{"authentication.k8s.io"}, "selfsubjectreviews")),
		cr("system:kube-scheduler", append([]rbacv1.PolicyRule{
			rule([]string{"create"}, []string{"coordination.k8s.io"}, "leases"),
			rule([]string{"get", "update"}, []string{"coordination.k8s.io"}, "leases"),
			rule([]string{"create"}, core, "endpoints"),
			rule([]string{"get", "update"}, core, "endpoints"),
			rule(read, core, "nodes"),
			rule([]string{"delete", "get", "list", "watch"}, core, "pods"),
			rule([]string{"create"}, core, "bindings", "pods/binding"),
			rule([]string{"patch", "update"}, core, "pods/status"),
			rule(read, core, "replicationcontrollers", "services", "namespaces", "persistentvolumeclaims", "persistentvolumes"),
			// Upstream's system:volume-scheduler: VolumeBinding's PreBind.
			rule([]string{"patch", "update"}, core, "persistentvolumeclaims", "persistentvolumes"),
			rule(read, []string{"apps", "extensions"}, "replicasets", "statefulsets"),
			rule(read, []string{"policy"}, "poddisruptionbudgets"),
			rule(read, []string{"storage.k8s.io"}, "storageclasses", "csinodes", "csidrivers", "csistoragecapacities"),
			rule([]string{"create"}, []string{"authentication.k8s.io"}, "tokenreviews"),
			rule([]string{"create"}, []string{"authorization.k8s.io"}, "subjectaccessreviews"),
		}, eventRules()...)...),
		cr("system:kube-controller-manager", controllerManager...),
		cr("system:node-proxier", append([]rbacv1.PolicyRule{
			rule(read, core, "services", "endpoints", "nodes"),
			rule(read, []string{"discovery.k8s.io"}, "endpointslices"),
		}, eventRules()...)...),
		// skiff-dns: CoreDNS's kubernetes plugin reads what upstream's
		// system:coredns role allows; skiff-dns also keeps the kube-dns
		// Service and its instances' EndpointSlices, and a Lease per
		// instance by which the others remove a crashed one's slice
		// (docs/dns.md).
		cr("system:skiff-dns",
			rule(read, core, "endpoints", "services", "pods", "namespaces"),
			rule(read, []string{"discovery.k8s.io"}, "endpointslices"),
			rule([]string{"create", "update"}, core, "services"),
			rule([]string{"create", "update", "delete"}, []string{"discovery.k8s.io"}, "endpointslices"),
			rule([]string{"get", "list", "create", "update", "delete"}, []string{"coordination.k8s.io"}, "leases"),
		),
		cr("system:node", NodeRules()...),
		// A joining node's bootstrap token may ask for a certificate
		// (upstream's system:node-bootstrapper).
		cr("system:node-bootstrapper", rule([]string{"create", "get", "list", "watch"}, []string{"certificates.k8s.io"}, "certificatesigningrequests")),
		// Who may have a CSR auto-approved by the controller manager:
		// a new node's client certificate, and a node renewing its own.
		cr(NodeClientRole, rule([]string{"create"}, []string{"certificates.k8s.io"}, "certificatesigningrequests/nodeclient")),
		cr(SelfNodeClientRole, rule([]string{"create"}, []string{"certificates.k8s.io"}, "certificatesigningrequests/selfnodeclient")),
		// Who may approve CSRs for each kubernetes.io signer.
		cr("system:certificates.k8s.io:kube-apiserver-client-approver", signerRule("approve", "kubernetes.io/kube-apiserver-client")),
		cr("system:certificates.k8s.io:kube-apiserver-client-kubelet-approver", signerRule("approve", "kubernetes.io/kube-apiserver-client-kubelet")),
		cr("system:certificates.k8s.io:kubelet-serving-approver", signerRule("approve", "kubernetes.io/kubelet-serving")),
		cr("system:certificates.k8s.io:legacy-unknown-approver", signerRule("approve", "kubernetes.io/legacy-unknown")),
	}, aggregatedUserRoles()...)
}

// The roles a CSR's requester needs for the controller manager to approve
// it (upstream's csrapproving controller asks a SubjectAccessReview).
const (
	NodeClientRole     = "system:certificates.k8s.io:certificatesigningrequests:nodeclient"
	SelfNodeClientRole = "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"
)

// NodeBootstrapGroup is the group a node-joining bootstrap token puts its
// user in (auth-extra-groups), under kubeadm's name, so kubeadm's tokens
// work too.
const NodeBootstrapGroup = "system:bootstrappers:kubeadm:default-node-token"

// signerRule allows verb (approve or sign) on the named signers.
func signerRule(verb string, signers ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: signers}
}

// aggregatedMetricsReader is metrics-server's ClusterRole, which the
// built-in metrics.k8s.io needs as much: reading node and pod metrics,
// aggregated into the view, edit and admin roles by its labels.
func aggregatedMetricsReader() *rbacv1.ClusterRole {
	meta := bootstrapMeta("system:aggregated-metrics-reader")
	for _, to := range []string{"view", "edit", "admin"} {
		meta.Labels[AggregateToLabel(to)] = "true"
	}
	return &rbacv1.ClusterRole{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{rule(read, []string{"metrics.k8s.io"}, "pods", "nodes")}}
}

// BootstrapClusterRoleBindings bind the roles to the component identities.
func BootstrapClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	bind := func(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: bootstrapMeta(name),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subjects,
		}
	}
	group := func(n string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: n}
	}
	user := func(n string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: n}
	}
	return []*rbacv1.ClusterRoleBinding{
		bind("cluster-admin", "cluster-admin", group("system:masters")),
		bind("system:discovery", "system:discovery", group("system:authenticated")),
		bind("system:public-info-viewer", "system:public-info-viewer", group("system:authenticated"), group("system:unauthenticated")),
		bind("system:basic-user", "system:basic-user", group("system:authenticated")),
		bind("system:monitoring", "system:monitoring", group("system:monitoring")),
		// As upstream: every service account may read the discovery
		// documents; binding all users is left to the administrator.
		bind("system:service-account-issuer-discovery", "system:service-account-issuer-discovery", group("system:serviceaccounts")),
		bind("system:kube-scheduler", "system:kube-scheduler", user("system:kube-scheduler")),
		bind("system:kube-controller-manager", "system:kube-controller-manager", user("system:kube-controller-manager")),
		bind("system:node-proxier", "system:node-proxier", user("system:kube-proxy")),
		bind("system:skiff-dns", "system:skiff-dns", user("system:skiff-dns")),
		// What kubeadm init binds for joining nodes, under kubeadm's names:
		// node bootstrap tokens may ask for a client certificate, which is
		// approved; nodes' renewals of their own are approved.
		bind("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", group(NodeBootstrapGroup)),
		bind("kubeadm:node-autoapprove-bootstrap", NodeClientRole, group(NodeBootstrapGroup)),
		bind("kubeadm:node-autoapprove-certificate-rotation", SelfNodeClientRole, group("system:nodes")),
	}
}
