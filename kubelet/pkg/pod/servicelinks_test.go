package pod

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// fakeServices serves Services from a list.
type fakeServices struct {
	list     []*corev1.Service
	unsynced bool
	err      error
}

func (f fakeServices) Services(ns string) ([]*corev1.Service, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []*corev1.Service
	for _, s := range f.list {
		if s.Namespace == ns {
			out = append(out, s)
		}
	}
	return out, nil
}

func (f fakeServices) Synced() bool { return !f.unsynced }

func svc(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func TestServiceVars(t *testing.T) {
	s := svc("ns", "redis-master", "10.96.0.11",
		corev1.ServicePort{Port: 6379},
		corev1.ServicePort{Name: "metrics-udp", Port: 9121, Protocol: corev1.ProtocolUDP})
	got := ServiceVars(s)
	want := [][2]string{
		{"REDIS_MASTER_SERVICE_HOST", "10.96.0.11"},
		{"REDIS_MASTER_SERVICE_PORT", "6379"},
		{"REDIS_MASTER_SERVICE_PORT_METRICS_UDP", "9121"},
		{"REDIS_MASTER_PORT", "tcp://10.96.0.11:6379"},
		{"REDIS_MASTER_PORT_6379_TCP", "tcp://10.96.0.11:6379"},
		{"REDIS_MASTER_PORT_6379_TCP_PROTO", "tcp"},
		{"REDIS_MASTER_PORT_6379_TCP_PORT", "6379"},
		{"REDIS_MASTER_PORT_6379_TCP_ADDR", "10.96.0.11"},
		{"REDIS_MASTER_PORT_9121_UDP", "udp://10.96.0.11:9121"},
		{"REDIS_MASTER_PORT_9121_UDP_PROTO", "udp"},
		{"REDIS_MASTER_PORT_9121_UDP_PORT", "9121"},
		{"REDIS_MASTER_PORT_9121_UDP_ADDR", "10.96.0.11"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ServiceVars =\n%v\nwant\n%v", got, want)
	}
	if v := ServiceVars(svc("ns", "v6", "fd00::10", corev1.ServicePort{Port: 80})); v[3][1] != "tcp://[fd00::10]:80" {
		t.Errorf("IPv6 link URL = %q", v[3][1])
	}
}

func TestServiceEnv(t *testing.T) {
	port := corev1.ServicePort{Name: "https", Port: 443}
	services := fakeServices{list: []*corev1.Service{
		svc("default", "kubernetes", "10.96.0.1", port),
		svc("ns", "web", "10.96.0.20", corev1.ServicePort{Port: 80}),
		svc("ns", "headless", "None", corev1.ServicePort{Port: 80}),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ext"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
		svc("other", "elsewhere", "10.96.0.30", corev1.ServicePort{Port: 80}),
		svc("default", "dflt", "10.96.0.40", corev1.ServicePort{Port: 80}),
	}}
	names := func(env map[string]string) string {
		var out []string
		for _, k := range sortedKeys(env) {
			if strings.HasSuffix(k, "_SERVICE_HOST") {
				out = append(out, k)
			}
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name    string
		ns      string
		links   *bool
		lister  ServiceLister
		want    string
		wantErr string
	}{
		{name: "namespace's services and the master's", ns: "ns", lister: services, want: "KUBERNETES_SERVICE_HOST,WEB_SERVICE_HOST"},
		{name: "enableServiceLinks false: the master's only", ns: "ns", links: ptr.To(false), lister: services, want: "KUBERNETES_SERVICE_HOST"},
		{name: "in default", ns: "default", lister: services, want: "DFLT_SERVICE_HOST,KUBERNETES_SERVICE_HOST"},
		{name: "no lister: none", ns: "ns", want: ""},
		{name: "not synced yet", ns: "ns", lister: fakeServices{unsynced: true}, wantErr: "services have not yet been read at least once"},
		{name: "list error", ns: "ns", lister: fakeServices{err: errors.New("boom")}, wantErr: "failed to list services"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tt.ns, Name: "p"}, Spec: corev1.PodSpec{EnableServiceLinks: tt.links}}
			env, err := ServiceEnv(p, tt.lister)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(env); got != tt.want {
				t.Errorf("services = %s, want %s", got, tt.want)
			}
		})
	}
}

// The container's own variables win over the services', which $(NAME)
// references may use, and which come last.
func TestResolveEnvServiceVariables(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	c := &corev1.Container{Env: []corev1.EnvVar{
		{Name: "WEB_SERVICE_PORT", Value: "mine"},
		{Name: "URL", Value: "http://$(WEB_SERVICE_HOST):$(WEB_SERVICE_PORT)"},
	}}
	ec := EnvContext{Objects: fakeObjects{}, Services: fakeServices{list: []*corev1.Service{svc("ns", "web", "10.96.0.20", corev1.ServicePort{Port: 80})}}}
	env, err := ResolveEnv(context.Background(), p, c, ec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"WEB_SERVICE_PORT=mine", "URL=http://10.96.0.20:mine",
		"WEB_PORT=tcp://10.96.0.20:80", "WEB_PORT_80_TCP=tcp://10.96.0.20:80", "WEB_PORT_80_TCP_ADDR=10.96.0.20",
		"WEB_PORT_80_TCP_PORT=80", "WEB_PORT_80_TCP_PROTO=tcp", "WEB_SERVICE_HOST=10.96.0.20",
	}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("env =\n%v\nwant\n%v", env, want)
	}
	ec.Services = fakeServices{unsynced: true}
	if _, err := ResolveEnv(context.Background(), p, c, ec); err == nil {
		t.Error("no error before the services are read")
	}
}
