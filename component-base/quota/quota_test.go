package quota

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/component-base/quota/quotatest"
)

// The fixtures live in component-base/quota/quotatest.
var (
	t0             = quotatest.T0
	list           = quotatest.List
	container      = quotatest.Container
	newPod         = quotatest.NewPod
	withContainers = quotatest.WithContainers
	withInit       = quotatest.WithInit
	inPhase        = quotatest.InPhase
	deadline       = quotatest.Deadline
	priority       = quotatest.Priority
	deletedAt      = quotatest.DeletedAt
	scoped         = quotatest.Scoped
	pcReq          = quotatest.PCReq
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		gr   string
		obj  any
		want corev1.ResourceList
	}{
		{
			name: "best-effort pod",
			obj:  newPod("p", withContainers(container(nil, nil))),
			want: list("count/pods", "1", "pods", "1"),
		},
		{
			name: "requests and limits of two containers add up",
			obj: newPod("p", withContainers(
				container(list("cpu", "100m", "memory", "64Mi"), list("cpu", "200m", "memory", "128Mi")),
				container(list("cpu", "250m"), list("memory", "64Mi")))),
			want: list("count/pods", "1", "pods", "1", "cpu", "350m", "requests.cpu", "350m", "memory", "64Mi",
				"requests.memory", "64Mi", "limits.cpu", "200m", "limits.memory", "192Mi"),
		},
		{
			name: "the largest init container wins over the sum",
			obj: newPod("p", withContainers(container(list("cpu", "100m"), nil)),
				withInit(container(list("cpu", "500m"), nil), container(list("cpu", "50m"), nil))),
			want: list("count/pods", "1", "pods", "1", "cpu", "500m", "requests.cpu", "500m"),
		},
		{
			name: "a sidecar adds to the sum and to the init containers after it",
			obj: newPod("p", withContainers(container(list("cpu", "100m"), nil)),
				withInit(
					container(list("cpu", "50m"), nil),
					corev1.Container{Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
						Resources: corev1.ResourceRequirements{Requests: list("cpu", "200m")}},
					container(list("cpu", "250m"), nil))),
			// Containers 100m + sidecar 200m = 300m; the last init container
			// runs beside the sidecar: 250m + 200m = 450m, the peak.
			want: list("count/pods", "1", "pods", "1", "cpu", "450m", "requests.cpu", "450m"),
		},
		{
			name: "overhead is added to requests, and to limits only where set",
			obj: newPod("p", withContainers(container(list("cpu", "100m"), list("cpu", "100m"))), func(p *corev1.Pod) {
				p.Spec.Overhead = list("cpu", "10m", "memory", "10Mi")
			}),
			want: list("count/pods", "1", "pods", "1", "cpu", "110m", "requests.cpu", "110m", "limits.cpu", "110m",
				"memory", "10Mi", "requests.memory", "10Mi"),
		},
		{
			name: "hugepages and extended resources",
			obj:  newPod("p", withContainers(container(list("hugepages-2Mi", "4Mi", "example.com/gpu", "1"), nil))),
			want: list("count/pods", "1", "pods", "1", "hugepages-2Mi", "4Mi", "requests.hugepages-2Mi", "4Mi",
				"requests.example.com/gpu", "1"),
		},
		{
			name: "a succeeded pod counts only as an object",
			obj:  newPod("p", withContainers(container(list("cpu", "1"), nil)), inPhase(corev1.PodSucceeded)),
			want: list("count/pods", "1"),
		},
		{
			name: "a failed pod counts only as an object",
			obj:  newPod("p", withContainers(container(list("cpu", "1"), nil)), inPhase(corev1.PodFailed)),
			want: list("count/pods", "1"),
		},
		{
			name: "a pod terminating within its grace period still counts",
			obj:  newPod("p", withContainers(container(list("cpu", "1"), nil)), deletedAt(t0.Add(-10*time.Second), 30)),
			want: list("count/pods", "1", "pods", "1", "cpu", "1", "requests.cpu", "1"),
		},
		{
			name: "a pod stuck terminating past its grace period no longer counts",
			obj:  newPod("p", withContainers(container(list("cpu", "1"), nil)), deletedAt(t0.Add(-time.Minute), 30)),
			want: list("count/pods", "1"),
		},
		{
			name: "ClusterIP service",
			gr:   "services",
			obj:  &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}},
			want: list("count/services", "1", "services", "1"),
		},
		{
			name: "NodePort service counts its ports",
			gr:   "services",
			obj:  &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}},
			want: list("count/services", "1", "services", "1", "services.nodeports", "2"),
		},
		{
			name: "LoadBalancer without node ports counts only explicit ones",
			gr:   "services",
			obj: &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: ptr.To(false),
				Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080}, {Port: 443}}}},
			want: list("count/services", "1", "services", "1", "services.nodeports", "1", "services.loadbalancers", "1"),
		},
		{
			name: "claim with a class, storage rounded up",
			gr:   "persistentvolumeclaims",
			obj: &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("gold"),
				Resources: corev1.VolumeResourceRequirements{Requests: list("storage", "1500m")}}},
			want: list("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "2",
				"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "2"),
		},
		{
			name: "configmap",
			gr:   "configmaps",
			obj:  &corev1.ConfigMap{},
			want: list("count/configmaps", "1", "configmaps", "1"),
		},
		{
			name: "secret known by metadata only",
			gr:   "secrets",
			obj:  &metav1.PartialObjectMetadata{},
			want: list("count/secrets", "1", "secrets", "1"),
		},
		{
			name: "any other kind is an object count",
			gr:   "deployments.apps",
			obj:  &metav1.PartialObjectMetadata{},
			want: list("count/deployments.apps", "1"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			grName := tt.gr
			if grName == "" {
				grName = "pods"
			}
			gr, ok := ParseCountName(corev1.ResourceName("count/" + grName))
			if !ok {
				t.Fatalf("bad test resource %q", grName)
			}
			got := Usage(gr, tt.obj, t0)
			if !Equal(got, tt.want) {
				t.Errorf("Usage = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestResourceFor(t *testing.T) {
	tests := []struct {
		name   corev1.ResourceName
		want   string
		wantOK bool
	}{
		{"pods", "pods", true},
		{"requests.cpu", "pods", true},
		{"limits.memory", "pods", true},
		{"cpu", "pods", true},
		{"requests.hugepages-2Mi", "pods", true},
		{"requests.example.com/gpu", "pods", true},
		{"services.nodeports", "services", true},
		{"requests.storage", "persistentvolumeclaims", true},
		{"gold.storageclass.storage.k8s.io/requests.storage", "persistentvolumeclaims", true},
		{"configmaps", "configmaps", true},
		{"secrets", "secrets", true},
		{"resourcequotas", "resourcequotas", true},
		{"replicationcontrollers", "replicationcontrollers", true},
		{"count/deployments.apps", "deployments.apps", true},
		{"count/widgets.example.com", "widgets.example.com", true},
		{"count/serviceaccounts", "serviceaccounts", true},
		{"count/", "", false},
		{"example.com/gpu", "", false},
		{"bogus", "", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			gr, ok := ResourceFor(tt.name)
			if ok != tt.wantOK || (ok && gr.String() != tt.want) {
				t.Errorf("ResourceFor(%q) = %v, %v; want %q, %v", tt.name, gr, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestMatchesScopes(t *testing.T) {
	bestEffort := newPod("be", withContainers(container(nil, nil)))
	burstable := newPod("bu", withContainers(container(list("cpu", "100m"), nil)))
	zeroRequest := newPod("zero", withContainers(container(list("cpu", "0"), nil)))
	storageOnly := newPod("storage", withContainers(container(list("ephemeral-storage", "1Gi"), nil)))
	initLimit := newPod("init", withContainers(container(nil, nil)), withInit(container(nil, list("memory", "1Mi"))))
	job := newPod("job", deadline(60))
	high := newPod("high", priority("high"))
	crossNS := newPod("cross", func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone", Namespaces: []string{"other"}}},
		}}
	})
	tests := []struct {
		name  string
		quota *corev1.ResourceQuota
		obj   any
		want  bool
	}{
		{"no scopes match anything", scoped(nil), &corev1.ConfigMap{}, true},
		{"a scoped quota never matches other kinds", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}), &corev1.ConfigMap{}, false},
		{"BestEffort: no requests", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}), bestEffort, true},
		{"BestEffort: a cpu request", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}), burstable, false},
		{"BestEffort: a zero request still best effort", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}), zeroRequest, true},
		{"BestEffort: only ephemeral storage", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}), storageOnly, true},
		{"BestEffort: an init container limit", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}), initLimit, false},
		{"NotBestEffort", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}), burstable, true},
		{"Terminating: active deadline", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}), job, true},
		{"Terminating: none", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}), bestEffort, false},
		{"NotTerminating", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}), bestEffort, true},
		{"NotTerminating: active deadline", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}), job, false},
		{"two scopes must both hold", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeTerminating}), bestEffort, false},
		{"PriorityClass In", scoped(nil, pcReq(corev1.ScopeSelectorOpIn, "high", "medium")), high, true},
		{"PriorityClass In: other class", scoped(nil, pcReq(corev1.ScopeSelectorOpIn, "low")), high, false},
		{"PriorityClass In: no class", scoped(nil, pcReq(corev1.ScopeSelectorOpIn, "high")), bestEffort, false},
		{"PriorityClass NotIn", scoped(nil, pcReq(corev1.ScopeSelectorOpNotIn, "low")), high, true},
		{"PriorityClass NotIn: no class", scoped(nil, pcReq(corev1.ScopeSelectorOpNotIn, "low")), bestEffort, true},
		{"PriorityClass NotIn: listed", scoped(nil, pcReq(corev1.ScopeSelectorOpNotIn, "high")), high, false},
		{"PriorityClass Exists", scoped(nil, pcReq(corev1.ScopeSelectorOpExists)), high, true},
		{"PriorityClass Exists: no class", scoped(nil, pcReq(corev1.ScopeSelectorOpExists)), bestEffort, false},
		{"PriorityClass DoesNotExist", scoped(nil, pcReq(corev1.ScopeSelectorOpDoesNotExist)), bestEffort, true},
		{"PriorityClass DoesNotExist: a class", scoped(nil, pcReq(corev1.ScopeSelectorOpDoesNotExist)), high, false},
		{"scopes and selector together", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}, pcReq(corev1.ScopeSelectorOpIn, "high")), high, true},
		{"CrossNamespacePodAffinity", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeCrossNamespacePodAffinity}), crossNS, true},
		{"CrossNamespacePodAffinity: none", scoped([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeCrossNamespacePodAffinity}), bestEffort, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MatchesScopes(tt.quota, tt.obj); got != tt.want {
				t.Errorf("MatchesScopes = %v, want %v", got, tt.want)
			}
		})
	}
}
