package authz

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AggregateToLabel is the label by which a ClusterRole adds its rules to
// the aggregated user-facing role of that name (admin, edit or view).
func AggregateToLabel(role string) string {
	return "rbac.authorization.k8s.io/aggregate-to-" + role
}

// The verb lists of upstream's bootstrap policy.
var (
	upstreamRead      = []string{"get", "list", "watch"}
	upstreamWrite     = []string{"create", "update", "patch", "delete", "deletecollection"}
	upstreamReadWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)

// sortedRule is rule with its lists sorted, as upstream's PolicyRuleBuilder
// writes its bootstrap rules.
func sortedRule(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rule(slices.Sorted(slices.Values(verbs)), slices.Sorted(slices.Values(groups)), slices.Sorted(slices.Values(resources))...)
}

// aggregatedUserRoles are upstream's user-facing roles (v1.32's
// bootstrappolicy): admin, edit and view hold no rules of their own but
// an aggregationRule, and the clusterrole-aggregation controller writes
// into them the rules of the ClusterRoles labelled aggregate-to-<role>;
// view is labelled aggregate-to-edit and edit aggregate-to-admin, so each
// holds what the one below it does. The system:aggregate-to-* roles carry
// the built-in resources' rules, verbatim upstream's.
func aggregatedUserRoles() []*rbacv1.ClusterRole {
	aggregated := func(name, labelledTo string) *rbacv1.ClusterRole {
		meta := bootstrapMeta(name)
		if labelledTo != "" {
			meta.Labels[AggregateToLabel(labelledTo)] = "true"
		}
		return &rbacv1.ClusterRole{ObjectMeta: meta, AggregationRule: &rbacv1.AggregationRule{
			ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{AggregateToLabel(name): "true"}}},
		}}
	}
	part := func(to string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		meta := bootstrapMeta("system:aggregate-to-" + to)
		meta.Labels[AggregateToLabel(to)] = "true"
		return &rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules}
	}
	const (
		apps        = "apps"
		autoscaling = "autoscaling"
		batch       = "batch"
		extensions  = "extensions"
		networking  = "networking.k8s.io"
		policy      = "policy"
	)
	g := func(group string) []string { return []string{group} }
	return []*rbacv1.ClusterRole{
		// A namespace's administrator: edit plus granting permissions to
		// others.
		aggregated("admin", ""),
		// All user-level actions in a namespace, without the privileged
		// resources (status, quota, limits) that are the system's.
		aggregated("edit", "admin"),
		// Read-only access to the non-escalating resources of a namespace.
		aggregated("view", "edit"),
		part("admin",
			sortedRule([]string{"create"}, g("authorization.k8s.io"), "localsubjectaccessreviews"),
			sortedRule(upstreamReadWrite, g(rbacv1.GroupName), "roles", "rolebindings"),
		),
		part("edit",
			// Read access to escalating resources.
			sortedRule(upstreamRead, core, "pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"),
			sortedRule([]string{"impersonate"}, core, "serviceaccounts"),
			sortedRule(upstreamWrite, core, "pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
			sortedRule([]string{"create"}, core, "pods/eviction"),
			sortedRule(upstreamWrite, core, "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
				"services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events"),
			sortedRule([]string{"create"}, core, "serviceaccounts/token"),
			sortedRule(upstreamWrite, g(apps), "statefulsets", "statefulsets/scale", "daemonsets",
				"deployments", "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale"),
			sortedRule(upstreamWrite, g(autoscaling), "horizontalpodautoscalers"),
			sortedRule(upstreamWrite, g(batch), "jobs", "cronjobs"),
			sortedRule(upstreamWrite, g(extensions), "daemonsets", "deployments", "deployments/scale", "deployments/rollback", "ingresses",
				"replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies"),
			sortedRule(upstreamWrite, g(policy), "poddisruptionbudgets"),
			sortedRule(upstreamWrite, g(networking), "networkpolicies", "ingresses"),
			sortedRule(upstreamReadWrite, g("coordination.k8s.io"), "leases"),
		),
		part("view",
			sortedRule(upstreamRead, core, "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
				"services", "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"),
			sortedRule(upstreamRead, core, "limitranges", "resourcequotas", "bindings", "events",
				"pods/status", "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log"),
			// Reading namespaces at the namespace scope reads this
			// namespace: a sign of which namespaces one may use.
			sortedRule(upstreamRead, core, "namespaces"),
			sortedRule(upstreamRead, g("discovery.k8s.io"), "endpointslices"),
			sortedRule(upstreamRead, g(apps), "controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
				"daemonsets", "daemonsets/status", "deployments", "deployments/status", "deployments/scale",
				"replicasets", "replicasets/status", "replicasets/scale"),
			sortedRule(upstreamRead, g(autoscaling), "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
			sortedRule(upstreamRead, g(batch), "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
			sortedRule(upstreamRead, g(extensions), "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
				"ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
				"networkpolicies"),
			sortedRule(upstreamRead, g(policy), "poddisruptionbudgets", "poddisruptionbudgets/status"),
			sortedRule(upstreamRead, g(networking), "networkpolicies", "ingresses", "ingresses/status"),
		),
	}
}

// ClusterRoleUpToDate reports whether the stored ClusterRole cur is the
// bootstrap role want as the server keeps it: want's labels present, and
// want's rules; for an aggregated role, whose rules are the
// clusterrole-aggregation controller's to write, want's selectors present
// in its aggregationRule instead (upstream's reconciliation leaves an
// aggregated role's rules alone too).
func ClusterRoleUpToDate(cur, want *rbacv1.ClusterRole) bool {
	for k, v := range want.Labels {
		if cur.Labels[k] != v {
			return false
		}
	}
	if want.AggregationRule == nil {
		return cur.AggregationRule == nil && equality.Semantic.DeepEqual(cur.Rules, want.Rules)
	}
	if cur.AggregationRule == nil {
		return false
	}
	for _, w := range want.AggregationRule.ClusterRoleSelectors {
		if !slices.ContainsFunc(cur.AggregationRule.ClusterRoleSelectors, func(c metav1.LabelSelector) bool {
			return equality.Semantic.DeepEqual(c, w)
		}) {
			return false
		}
	}
	return true
}
