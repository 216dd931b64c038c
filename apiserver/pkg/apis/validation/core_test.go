package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

func TestValidateNamespace(t *testing.T) {
	tests := []struct {
		name string
		ns   *corev1.Namespace
		want []want
	}{
		{name: "valid", ns: defaulted(defaults.DefaultNamespace, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})},
		{name: "subdomain is not a label", ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team.a"}}, want: []want{inv("metadata.name")}},
		{name: "upper case", ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "Team"}}, want: []want{inv("metadata.name")}},
		{name: "namespace set", ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "b"}}, want: []want{forb("metadata.namespace")}},
		{name: "kubernetes finalizer", ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}},
		{name: "unqualified spec finalizer", ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"custom"}}},
			want: []want{inv("spec.finalizers")}},
		{name: "conflicting metadata finalizers", ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Finalizers: []string{metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}}},
			want: []want{inv("metadata.finalizers")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkErrs(t, ValidateNamespace(tc.ns), tc.want) })
	}

	old := &corev1.Namespace{ObjectMeta: storedMeta(metav1.ObjectMeta{Name: "a"})}
	old.Namespace = ""
	renamed := old.DeepCopy()
	renamed.Name = "b"
	checkErrs(t, ValidateNamespaceUpdate(renamed, old), []want{inv("metadata.name")})
	relabeled := old.DeepCopy()
	relabeled.Labels = map[string]string{"team": "a"}
	checkErrs(t, ValidateNamespaceUpdate(relabeled, old), nil)

	active := old.DeepCopy()
	active.Status.Phase = corev1.NamespaceActive
	checkErrs(t, ValidateNamespaceStatusUpdate(active, old), nil)
	active.Status.Phase = corev1.NamespaceTerminating
	checkErrs(t, ValidateNamespaceStatusUpdate(active, old), []want{inv("status.Phase")})
}

func validNode() *corev1.Node {
	return defaulted(defaults.DefaultNode, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec:       corev1.NodeSpec{PodCIDR: "10.244.0.0/24"},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110"),
		}},
	})
}

func TestValidateNode(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(n *corev1.Node)
		want   []want
	}{
		{name: "valid", mutate: func(n *corev1.Node) {}},
		{name: "namespace set", mutate: func(n *corev1.Node) { n.Namespace = "default" }, want: []want{forb("metadata.namespace")}},
		{name: "bad pod cidr", mutate: func(n *corev1.Node) { n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.244.0.0/33", nil }, want: []want{inv("spec.podCIDRs[0]")}},
		{name: "two cidrs of one family", mutate: func(n *corev1.Node) {
			n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.244.0.0/24", []string{"10.244.0.0/24", "10.245.0.0/24"}
		}, want: []want{inv("spec.podCIDRs")}},
		{name: "dual stack cidrs", mutate: func(n *corev1.Node) {
			n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.244.0.0/24", []string{"10.244.0.0/24", "fd00::/64"}
		}},
		{name: "taint effect unsupported", mutate: func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: "Sometimes"}}
		}, want: []want{nsup("metadata.taints[0].effect")}},
		{name: "taint effect missing", mutate: func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "dedicated"}} },
			want: []want{req("metadata.taints[0].effect")}},
		{name: "duplicate taint", mutate: func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}, {Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}}
		}, want: []want{dup("metadata.taints[1]")}},
		{name: "negative capacity", mutate: func(n *corev1.Node) { n.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("-1") },
			want: []want{inv("status.capacity.cpu")}},
		{name: "fractional pods", mutate: func(n *corev1.Node) { n.Status.Allocatable[corev1.ResourcePods] = resource.MustParse("1500m") },
			want: []want{inv("status.allocatable.pods")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := validNode()
			tc.mutate(n)
			checkErrs(t, ValidateNode(n), tc.want)
		})
	}
}

func TestValidateNodeUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(n *corev1.Node)
		want   []want
	}{
		{name: "status change", mutate: func(n *corev1.Node) {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		}},
		{name: "taint added", mutate: func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}} }},
		{name: "pod cidr changed", mutate: func(n *corev1.Node) { n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.245.0.0/24", []string{"10.245.0.0/24"} },
			want: []want{forb("spec.podCIDRs")}},
		{name: "provider id changed", mutate: func(n *corev1.Node) { n.Spec.ProviderID = "other://2" }, want: []want{forb("spec.providerID")}},
		{name: "duplicate address", mutate: func(n *corev1.Node) {
			a := corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "192.168.0.10"}
			n.Status.Addresses = []corev1.NodeAddress{a, a}
		}, want: []want{dup("status.addresses[1]")}},
		{name: "external id changed", mutate: func(n *corev1.Node) { n.Spec.DoNotUseExternalID = "x" }, want: []want{forb("spec.externalID")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validNode()
			old.ObjectMeta = storedMeta(old.ObjectMeta)
			old.Namespace = ""
			old.Spec.ProviderID = "skiff://node-1"
			n := old.DeepCopy()
			tc.mutate(n)
			checkErrs(t, ValidateNodeUpdate(n, old), tc.want)
		})
	}
	// A pod CIDR may be set once.
	old := validNode()
	old.ObjectMeta = storedMeta(old.ObjectMeta)
	old.Namespace = ""
	old.Spec.PodCIDR, old.Spec.PodCIDRs = "", nil
	n := old.DeepCopy()
	n.Spec.PodCIDR = "10.244.1.0/24"
	checkErrs(t, ValidateNodeUpdate(n, old), nil)
}

func TestValidateConfigMap(t *testing.T) {
	tests := []struct {
		name string
		cm   *corev1.ConfigMap
		want []want
	}{
		{name: "valid", cm: defaulted(defaults.DefaultConfigMap, &corev1.ConfigMap{ObjectMeta: meta("cfg"), Data: map[string]string{"app.yaml": "x"}, BinaryData: map[string][]byte{"logo.png": {1}}})},
		{name: "bad key", cm: &corev1.ConfigMap{ObjectMeta: meta("cfg"), Data: map[string]string{"a b": "x"}}, want: []want{inv("data[a b]")}},
		{name: "dot-dot key", cm: &corev1.ConfigMap{ObjectMeta: meta("cfg"), Data: map[string]string{"..x": "x"}}, want: []want{inv("data[..x]")}},
		{name: "bad binary key", cm: &corev1.ConfigMap{ObjectMeta: meta("cfg"), BinaryData: map[string][]byte{"a/b": {1}}}, want: []want{inv("binaryData[a/b]")}},
		{name: "key in both", cm: &corev1.ConfigMap{ObjectMeta: meta("cfg"), Data: map[string]string{"k": "x"}, BinaryData: map[string][]byte{"k": {1}}},
			want: []want{inv("data[k]")}},
		{name: "too large", cm: &corev1.ConfigMap{ObjectMeta: meta("cfg"), Data: map[string]string{"k": strings.Repeat("x", corev1.MaxSecretSize+1)}},
			want: []want{long("[]")}},
		{name: "bad name", cm: &corev1.ConfigMap{ObjectMeta: meta("Cfg")}, want: []want{inv("metadata.name")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkErrs(t, ValidateConfigMap(tc.cm), tc.want) })
	}

	old := &corev1.ConfigMap{ObjectMeta: storedMeta(meta("cfg")), Data: map[string]string{"k": "v"}, Immutable: ptr.To(true)}
	changed := old.DeepCopy()
	changed.Data["k"] = "w"
	checkErrs(t, ValidateConfigMapUpdate(changed, old), []want{forb("data")})
	mutable := old.DeepCopy()
	mutable.Immutable = ptr.To(false)
	checkErrs(t, ValidateConfigMapUpdate(mutable, old), []want{forb("immutable")})
	relabeled := old.DeepCopy()
	relabeled.Labels = map[string]string{"a": "b"}
	checkErrs(t, ValidateConfigMapUpdate(relabeled, old), nil)

	editable := &corev1.ConfigMap{ObjectMeta: storedMeta(meta("cfg")), Data: map[string]string{"k": "v"}}
	edited := editable.DeepCopy()
	edited.Data["k"] = "w"
	edited.Immutable = ptr.To(true)
	checkErrs(t, ValidateConfigMapUpdate(edited, editable), nil)
}

func TestValidateSecret(t *testing.T) {
	tests := []struct {
		name string
		s    *corev1.Secret
		want []want
	}{
		{name: "valid opaque", s: defaulted(defaults.DefaultSecret, &corev1.Secret{ObjectMeta: meta("s"), Data: map[string][]byte{"password": []byte("x")}})},
		{name: "bad key", s: &corev1.Secret{ObjectMeta: meta("s"), Data: map[string][]byte{"pass word": nil}}, want: []want{inv("data[pass word]")}},
		{name: "bad key in stringData", s: &corev1.Secret{ObjectMeta: meta("s"), StringData: map[string]string{"a/b": "x"}}, want: []want{inv("data[a/b]")}},
		{name: "too large", s: &corev1.Secret{ObjectMeta: meta("s"), Data: map[string][]byte{"k": make([]byte, corev1.MaxSecretSize+1)}}, want: []want{long("data")}},
		{name: "tls without keys", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeTLS},
			want: []want{req("data[tls.crt]"), req("data[tls.key]")}},
		{name: "tls valid", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}},
		{name: "docker config json missing", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeDockerConfigJson},
			want: []want{req("data[.dockerconfigjson]")}},
		{name: "docker config json not json", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte("{")}},
			want: []want{inv("data[.dockerconfigjson]")}},
		{name: "docker config json valid", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeDockerConfigJson, StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}}},
		{name: "dockercfg missing", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeDockercfg}, want: []want{req("data[.dockercfg]")}},
		{name: "basic auth empty", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeBasicAuth},
			want: []want{req("data[username]"), req("data[password]")}},
		{name: "ssh auth empty", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeSSHAuth}, want: []want{req("data[ssh-privatekey]")}},
		{name: "service account token without annotation", s: &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeServiceAccountToken},
			want: []want{req("metadata.annotations[kubernetes.io/service-account.name]")}},
		{name: "custom type", s: &corev1.Secret{ObjectMeta: meta("s"), Type: "example.com/custom"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkErrs(t, ValidateSecret(tc.s), tc.want) })
	}

	old := &corev1.Secret{ObjectMeta: storedMeta(meta("s")), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"k": []byte("v")}, Immutable: ptr.To(true)}
	retyped := old.DeepCopy()
	retyped.Type = corev1.SecretTypeBasicAuth
	retyped.Data["username"] = []byte("u")
	checkErrs(t, ValidateSecretUpdate(retyped, old), []want{inv("type"), forb("data")})
	changed := old.DeepCopy()
	changed.Data["k"] = []byte("w")
	checkErrs(t, ValidateSecretUpdate(changed, old), []want{forb("data")})
	unchanged := old.DeepCopy()
	checkErrs(t, ValidateSecretUpdate(unchanged, old), nil)
}

func TestValidateServiceAccount(t *testing.T) {
	checkErrs(t, ValidateServiceAccount(&corev1.ServiceAccount{ObjectMeta: meta("builder")}), nil)
	checkErrs(t, ValidateServiceAccount(&corev1.ServiceAccount{ObjectMeta: meta("Builder")}), []want{inv("metadata.name")})
	checkErrs(t, ValidateServiceAccount(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}), []want{req("metadata.namespace")})
	old := &corev1.ServiceAccount{ObjectMeta: storedMeta(meta("builder"))}
	renamed := old.DeepCopy()
	renamed.Name = "other"
	checkErrs(t, ValidateServiceAccountUpdate(renamed, old), []want{inv("metadata.name")})
}

func TestValidateEvent(t *testing.T) {
	tests := []struct {
		name string
		ev   *corev1.Event
		want []want
	}{
		{name: "valid", ev: &corev1.Event{
			ObjectMeta:     meta("web.17a"),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
			Reason:         "Scheduled",
		}},
		{name: "cluster-scoped object in default namespace", ev: &corev1.Event{
			ObjectMeta:     meta("node-1.17a"),
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		}},
		{name: "namespace mismatch", ev: &corev1.Event{
			ObjectMeta:     meta("web.17a"),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "other", Name: "web"},
		}, want: []want{inv("involvedObject.namespace")}},
		{name: "cluster-scoped object in other namespace", ev: &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "n.1", Namespace: "team"},
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		}, want: []want{inv("involvedObject.namespace")}},
		{name: "new-style event missing fields", ev: &corev1.Event{
			ObjectMeta:     meta("web.17a"),
			EventTime:      metav1.NewMicroTime(metav1.Now().Time),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
		}, want: []want{req("reportingController"), inv("reportingController"), inv("reportingController"), req("reportingInstance"), req("action"), req("reason")}},
		{name: "bad namespace", ev: &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "e", Namespace: "Bad_NS"},
			InvolvedObject: corev1.ObjectReference{Namespace: "Bad_NS"},
		}, want: []want{inv("namespace")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateEvent(tc.ev), tc.want)
			checkErrs(t, ValidateEventUpdate(tc.ev, tc.ev.DeepCopy()), tc.want)
		})
	}
}
