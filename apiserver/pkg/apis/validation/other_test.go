package validation

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

func TestValidateLease(t *testing.T) {
	strategy := coordinationv1.OldestEmulationVersion
	tests := []struct {
		name   string
		mutate func(l *coordinationv1.Lease)
		want   []want
	}{
		{name: "valid", mutate: func(l *coordinationv1.Lease) {}},
		{name: "zero duration", mutate: func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](0) }, want: []want{inv("spec.leaseDurationSeconds")}},
		{name: "negative transitions", mutate: func(l *coordinationv1.Lease) { l.Spec.LeaseTransitions = ptr.To[int32](-1) }, want: []want{inv("spec.leaseTransitions")}},
		{name: "preferred holder without strategy", mutate: func(l *coordinationv1.Lease) { l.Spec.PreferredHolder = ptr.To("b") },
			want: []want{forb("spec.preferredHolder")}},
		{name: "known strategy", mutate: func(l *coordinationv1.Lease) { l.Spec.Strategy = &strategy; l.Spec.PreferredHolder = ptr.To("b") }},
		{name: "unknown strategy", mutate: func(l *coordinationv1.Lease) {
			s := coordinationv1.CoordinatedLeaseStrategy("Newest")
			l.Spec.Strategy = &s
		},
			want: []want{nsup("spec.strategy.strategy")}},
		{name: "custom strategy", mutate: func(l *coordinationv1.Lease) {
			s := coordinationv1.CoordinatedLeaseStrategy("example.com/mine")
			l.Spec.Strategy = &s
		}},
		{name: "finalizer names are not restricted", mutate: func(l *coordinationv1.Lease) { l.Finalizers = []string{"custom"} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system"},
				Spec: coordinationv1.LeaseSpec{
					HolderIdentity:       ptr.To("a"),
					LeaseDurationSeconds: ptr.To[int32](15),
					AcquireTime:          &metav1.MicroTime{Time: metav1.Now().Time},
				},
			}
			tc.mutate(l)
			checkErrs(t, ValidateLease(l), tc.want)
			old := l.DeepCopy()
			old.ResourceVersion = "1"
			updated := old.DeepCopy()
			checkErrs(t, ValidateLeaseUpdate(updated, old), tc.want)
		})
	}
}

func validSlice() *discoveryv1.EndpointSlice {
	return defaulted(defaults.DefaultEndpointSlice, &discoveryv1.EndpointSlice{
		ObjectMeta:  meta("web-abcde"),
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses: []string{"10.244.0.5"},
			NodeName:  ptr.To("node-1"),
			Hints:     &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "zone-a"}}},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	})
}

func TestValidateEndpointSlice(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *discoveryv1.EndpointSlice)
		want   []want
	}{
		{name: "valid", mutate: func(s *discoveryv1.EndpointSlice) {}},
		{name: "address type missing", mutate: func(s *discoveryv1.EndpointSlice) { s.AddressType = "" }, want: []want{req("addressType")}},
		{name: "address type unsupported", mutate: func(s *discoveryv1.EndpointSlice) { s.AddressType = "IP" }, want: []want{nsup("addressType")}},
		{name: "bad ipv4", mutate: func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses[0] = "fd00::1" },
			want: []want{inv("endpoints[0].addresses[0]")}},
		{name: "link-local ipv4", mutate: func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses[0] = "169.254.1.1" },
			want: []want{inv("endpoints[0].addresses[0]")}},
		{name: "no addresses", mutate: func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = nil }, want: []want{req("endpoints[0].addresses")}},
		{name: "fqdn", mutate: func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses[0] = "web.example.com"
		}},
		{name: "too many endpoints", mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = make([]discoveryv1.Endpoint, 1001)
		}, want: []want{many("endpoints")}},
		{name: "bad hostname", mutate: func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Hostname = ptr.To("Web") }, want: []want{inv("endpoints[0].hostname")}},
		{name: "bad node name", mutate: func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].NodeName = ptr.To("Node_1") }, want: []want{inv("endpoints[0].nodeName")}},
		{name: "duplicate zone hint", mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hints.ForZones = append(s.Endpoints[0].Hints.ForZones, discoveryv1.ForZone{Name: "zone-a"})
		}, want: []want{dup("endpoints[0].hints.forZones[1].name")}},
		{name: "port protocol missing", mutate: func(s *discoveryv1.EndpointSlice) { s.Ports[0].Protocol = nil }, want: []want{req("ports[0].protocol")}},
		{name: "port protocol unsupported", mutate: func(s *discoveryv1.EndpointSlice) { p := corev1.Protocol("ICMP"); s.Ports[0].Protocol = &p },
			want: []want{nsup("ports[0].protocol")}},
		{name: "duplicate port name", mutate: func(s *discoveryv1.EndpointSlice) {
			s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolUDP)})
		}, want: []want{dup("ports[1].name")}},
		{name: "unnamed port", mutate: func(s *discoveryv1.EndpointSlice) { s.Ports[0].Name = nil }},
		{name: "bad port name", mutate: func(s *discoveryv1.EndpointSlice) { s.Ports[0].Name = ptr.To("HTTP") }, want: []want{inv("ports[0].name")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSlice()
			tc.mutate(s)
			checkErrs(t, ValidateEndpointSlice(s), tc.want)
		})
	}
	old := validSlice()
	old.ObjectMeta = storedMeta(old.ObjectMeta)
	s := old.DeepCopy()
	s.AddressType = discoveryv1.AddressTypeIPv6
	s.Endpoints[0].Addresses[0] = "fd00::5"
	checkErrs(t, ValidateEndpointSliceUpdate(s, old), []want{inv("addressType")})
}

func TestValidateRoles(t *testing.T) {
	podReader := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	tests := []struct {
		name string
		role *rbacv1.Role
		want []want
	}{
		{name: "valid", role: &rbacv1.Role{ObjectMeta: meta("pod-reader"), Rules: []rbacv1.PolicyRule{podReader}}},
		{name: "colon in name", role: &rbacv1.Role{ObjectMeta: meta("system:pod-reader")}},
		{name: "slash in name", role: &rbacv1.Role{ObjectMeta: meta("a/b")}, want: []want{inv("metadata.name")}},
		{name: "no verbs", role: &rbacv1.Role{ObjectMeta: meta("r"), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}},
			want: []want{req("rules[0].verbs")}},
		{name: "no groups or resources", role: &rbacv1.Role{ObjectMeta: meta("r"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}},
			want: []want{req("rules[0].apiGroups"), req("rules[0].resources")}},
		{name: "non-resource urls in a role", role: &rbacv1.Role{ObjectMeta: meta("r"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}},
			want: []want{inv("rules[0].nonResourceURLs")}},
		{name: "missing namespace", role: &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, want: []want{req("metadata.namespace")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkErrs(t, ValidateRole(tc.role), tc.want) })
	}

	clusterTests := []struct {
		name string
		role *rbacv1.ClusterRole
		want []want
	}{
		{name: "non-resource urls", role: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}}},
		{name: "mixed rule", role: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "mixed"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}, Resources: []string{"pods"}}}},
			want: []want{inv("rules[0].nonResourceURLs")}},
		{name: "namespaced", role: &rbacv1.ClusterRole{ObjectMeta: meta("r")}, want: []want{forb("metadata.namespace")}},
		{name: "empty aggregation rule", role: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{}},
			want: []want{req("aggregationRule.clusterRoleSelectors")}},
	}
	for _, tc := range clusterTests {
		t.Run("cluster "+tc.name, func(t *testing.T) { checkErrs(t, ValidateClusterRole(tc.role), tc.want) })
	}

	old := &rbacv1.Role{ObjectMeta: storedMeta(meta("pod-reader")), Rules: []rbacv1.PolicyRule{podReader}}
	updated := old.DeepCopy()
	updated.Rules[0].Verbs = append(updated.Rules[0].Verbs, "watch")
	checkErrs(t, ValidateRoleUpdate(updated, old), nil)
	renamed := old.DeepCopy()
	renamed.Name = "other"
	checkErrs(t, ValidateRoleUpdate(renamed, old), []want{inv("metadata.name")})
}

func TestValidateBindings(t *testing.T) {
	valid := func() *rbacv1.RoleBinding {
		return defaulted(defaults.DefaultRoleBinding, &rbacv1.RoleBinding{
			ObjectMeta: meta("read-pods"),
			RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"},
			Subjects: []rbacv1.Subject{
				{Kind: rbacv1.UserKind, Name: "alice"},
				{Kind: rbacv1.ServiceAccountKind, Name: "builder"},
			},
		})
	}
	tests := []struct {
		name   string
		mutate func(rb *rbacv1.RoleBinding)
		want   []want
	}{
		{name: "valid", mutate: func(rb *rbacv1.RoleBinding) {}},
		{name: "role ref name missing", mutate: func(rb *rbacv1.RoleBinding) { rb.RoleRef.Name = "" }, want: []want{req("roleRef.name")}},
		{name: "role ref kind unsupported", mutate: func(rb *rbacv1.RoleBinding) { rb.RoleRef.Kind = "Group" }, want: []want{nsup("roleRef.kind")}},
		{name: "role ref api group unsupported", mutate: func(rb *rbacv1.RoleBinding) { rb.RoleRef.APIGroup = "example.com" }, want: []want{nsup("roleRef.apiGroup")}},
		{name: "subject kind unsupported", mutate: func(rb *rbacv1.RoleBinding) { rb.Subjects[0].Kind = "Robot" }, want: []want{nsup("subjects[0].kind")}},
		{name: "user api group wrong", mutate: func(rb *rbacv1.RoleBinding) { rb.Subjects[0].APIGroup = "" }, want: []want{nsup("subjects[0].apiGroup")}},
		{name: "user name missing", mutate: func(rb *rbacv1.RoleBinding) { rb.Subjects[0].Name = "" }, want: []want{req("subjects[0].name"), inv("subjects[0].name")}},
		{name: "service account api group set", mutate: func(rb *rbacv1.RoleBinding) { rb.Subjects[1].APIGroup = rbacv1.GroupName }, want: []want{nsup("subjects[1].apiGroup")}},
		{name: "service account name invalid", mutate: func(rb *rbacv1.RoleBinding) { rb.Subjects[1].Name = "Builder" }, want: []want{inv("subjects[1].name")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rb := valid()
			tc.mutate(rb)
			checkErrs(t, ValidateRoleBinding(rb), tc.want)
		})
	}

	old := valid()
	old.ObjectMeta = storedMeta(old.ObjectMeta)
	changedRef := old.DeepCopy()
	changedRef.RoleRef.Name = "admin"
	checkErrs(t, ValidateRoleBindingUpdate(changedRef, old), []want{inv("roleRef")})
	moreSubjects := old.DeepCopy()
	moreSubjects.Subjects = append(moreSubjects.Subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"})
	checkErrs(t, ValidateRoleBindingUpdate(moreSubjects, old), nil)

	crb := defaulted(defaults.DefaultClusterRoleBinding, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "admins"},
		RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "builder"}},
	})
	checkErrs(t, ValidateClusterRoleBinding(crb), []want{req("subjects[0].namespace")})
	crb.Subjects[0].Namespace = "ci"
	checkErrs(t, ValidateClusterRoleBinding(crb), nil)
	crb.RoleRef.Kind = "Role"
	checkErrs(t, ValidateClusterRoleBinding(crb), []want{nsup("roleRef.kind")})

	oldCRB := crb.DeepCopy()
	oldCRB.RoleRef.Kind = "ClusterRole"
	oldCRB.ObjectMeta = storedMeta(oldCRB.ObjectMeta)
	oldCRB.Namespace = ""
	newCRB := oldCRB.DeepCopy()
	newCRB.RoleRef.Name = "view"
	checkErrs(t, ValidateClusterRoleBindingUpdate(newCRB, oldCRB), []want{inv("roleRef")})
}
