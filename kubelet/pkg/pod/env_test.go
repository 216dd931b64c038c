package pod

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestResolveEnv(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", ServiceAccountName: "sa"},
	}
	objs := fakeObjects{
		configMaps: map[string]*corev1.ConfigMap{"ns/cfg": {Data: map[string]string{"greeting": "hello", "B": "2", "A": "1"}}},
		secrets:    map[string]*corev1.Secret{"ns/sec": {Data: map[string][]byte{"password": []byte("s3cret")}}},
	}
	ec := EnvContext{Objects: objs, PodIPs: []string{"10.244.1.5"}, HostIP: "192.0.2.2",
		NodeAllocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourceCPU: resource.MustParse("4")}}
	field := func(p string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: p}}
	}
	res := func(r, div string) *corev1.EnvVarSource {
		s := &corev1.ResourceFieldSelector{Resource: r}
		if div != "" {
			s.Divisor = resource.MustParse(div)
		}
		return &corev1.EnvVarSource{ResourceFieldRef: s}
	}
	tests := []struct {
		name    string
		c       corev1.Container
		want    []string
		wantErr string
	}{
		{
			name: "plain values and expansion of earlier names",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "A", Value: "x"}, {Name: "B", Value: "$(A)-y"}, {Name: "C", Value: "$(MISSING) $$(A)"},
			}},
			want: []string{"A=x", "B=x-y", "C=$(MISSING) $(A)"},
		},
		{
			name: "field refs",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "NAME", ValueFrom: field("metadata.name")}, {Name: "NS", ValueFrom: field("metadata.namespace")},
				{Name: "UID", ValueFrom: field("metadata.uid")}, {Name: "NODE", ValueFrom: field("spec.nodeName")},
				{Name: "SA", ValueFrom: field("spec.serviceAccountName")}, {Name: "IP", ValueFrom: field("status.podIP")},
				{Name: "HOST", ValueFrom: field("status.hostIP")}, {Name: "APP", ValueFrom: field("metadata.labels['app']")},
				{Name: "ANN", ValueFrom: field("metadata.annotations['a']")},
			}},
			want: []string{"NAME=web", "NS=ns", "UID=uid-1", "NODE=node-1", "SA=sa", "IP=10.244.1.5", "HOST=192.0.2.2", "APP=web", "ANN=b"},
		},
		{
			name: "resource refs with divisors, limits default to allocatable",
			c: corev1.Container{
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				Env: []corev1.EnvVar{
					{Name: "REQ_CPU", ValueFrom: res("requests.cpu", "1m")},
					{Name: "REQ_CPU_CORES", ValueFrom: res("requests.cpu", "")},
					{Name: "LIM_MEM", ValueFrom: res("limits.memory", "1Mi")},
					{Name: "LIM_CPU", ValueFrom: res("limits.cpu", "")},
				},
			},
			want: []string{"REQ_CPU=250", "REQ_CPU_CORES=1", "LIM_MEM=64", "LIM_CPU=4"},
		},
		{
			name: "config map and secret keys",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "G", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "greeting"}}},
				{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "password"}}},
				{Name: "OPT", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k", Optional: ptr.To(true)}}},
			}},
			want: []string{"G=hello", "P=s3cret"},
		},
		{
			name: "envFrom in key order with prefix, env overrides",
			c: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}},
					{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Optional: ptr.To(true)}},
				},
				Env: []corev1.EnvVar{{Name: "A", Value: "override"}},
			},
			want: []string{"A=override", "B=2", "greeting=hello", "S_password=s3cret"},
		},
		{
			name:    "missing config map",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "G", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k"}}}}},
			wantErr: `configmap "nope"`,
		},
		{
			name:    "missing key",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "G", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "k"}}}}},
			wantErr: "couldn't find key k in Secret ns/sec",
		},
		{
			name:    "unsupported field",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: field("spec.bogus")}}},
			wantErr: `unsupported fieldPath "spec.bogus"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveEnv(context.Background(), pod, &tt.c, ec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("env = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCgroupResources(t *testing.T) {
	tests := []struct {
		name   string
		r      corev1.ResourceRequirements
		mem    int64
		shares uint64
		quota  int64
		period uint64
	}{
		{name: "best effort", shares: 2},
		{
			name: "requests and limits",
			r: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
			mem: 128 << 20, shares: 512, quota: 100000, period: 100000,
		},
		{
			name:   "tiny limit is raised to 1ms",
			r:      corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m")}},
			shares: 5, quota: 1000, period: 100000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, shares, quota, period := CgroupResources(tt.r)
			if mem != tt.mem || shares != tt.shares || quota != tt.quota || period != tt.period {
				t.Errorf("got %d %d %d %d, want %d %d %d %d", mem, shares, quota, period, tt.mem, tt.shares, tt.quota, tt.period)
			}
		})
	}
}
