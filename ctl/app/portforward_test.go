package app

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilexec "k8s.io/client-go/util/exec"
)

func portsPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}},
			{Name: "side", Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolUDP}}},
		}},
	}
}

func TestPodPorts(t *testing.T) {
	got, err := podPorts(portsPod(), []string{"80", "8000:80", ":http", "http", "9000:metrics"})
	want := []string{"80", "8000:80", ":8080", "8080", "9000:9090"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("podPorts = %v %v, want %v", got, err, want)
	}
	if _, err := podPorts(portsPod(), []string{"grpc"}); err == nil || err.Error() != "Pod 'web' does not have a named port 'grpc'" {
		t.Errorf("unknown named port: %v", err)
	}
}

func TestServicePorts(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
		{Name: "web", Port: 80, TargetPort: intstr.FromString("http")},
		{Name: "raw", Port: 81, TargetPort: intstr.FromInt32(8081)},
		{Name: "same", Port: 82},
	}}}
	got, err := servicePorts(svc, portsPod(), []string{"80", "7000:web", "raw", ":82"})
	want := []string{"80:8080", "7000:8080", "81:8081", ":82"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("servicePorts = %v %v, want %v", got, err, want)
	}
	if _, err := servicePorts(svc, portsPod(), []string{"99"}); err == nil || err.Error() != "Service web does not have a service port 99" {
		t.Errorf("unknown service port: %v", err)
	}
}

func TestPickContainer(t *testing.T) {
	var errOut bytes.Buffer
	p := portsPod()
	if c, err := pickContainer(p, "", false, &errOut); err != nil || c != "app" || errOut.String() != "Defaulted container \"app\" out of: app, side\n" {
		t.Errorf("default: %q %v %q", c, err, errOut.String())
	}
	errOut.Reset()
	if c, _ := pickContainer(p, "", true, &errOut); c != "app" || errOut.Len() != 0 {
		t.Errorf("quiet: %q %q", c, errOut.String())
	}
	p.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "side"}
	if c, _ := pickContainer(p, "", false, &errOut); c != "side" {
		t.Errorf("annotated default = %q", c)
	}
	if _, err := pickContainer(p, "nope", false, &errOut); err == nil || err.Error() != "container nope not found in pod web" {
		t.Errorf("unknown container: %v", err)
	}
}

func TestExitCodeAndErrorLines(t *testing.T) {
	var b bytes.Buffer
	err := error(exitCodeError{utilexec.CodeExitError{Err: errors.New("command terminated with exit code 7"), Code: 7}})
	PrintError(&b, err)
	var status interface{ ExitStatus() int }
	if b.String() != "command terminated with exit code 7\n" || !errors.As(err, &status) || status.ExitStatus() != 7 {
		t.Errorf("exit code error printed %q", b.String())
	}
	b.Reset()
	PrintError(&b, kubectlErrors([]error{aggregate([]error{errors.New("a"), errors.New("b")})}))
	if b.String() != "a\nb\n" {
		t.Errorf("one node's errors printed %q", b.String())
	}
	b.Reset()
	PrintError(&b, kubectlErrors([]error{errors.New("plain")}))
	if b.String() != "error: plain\n" {
		t.Errorf("a plain error printed %q", b.String())
	}
}

func TestExposed(t *testing.T) {
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "app", "ports": []any{map[string]any{"containerPort": int64(53), "protocol": "UDP"}, map[string]any{"containerPort": int64(80)}},
			}}}},
		},
	}}
	sel, ports, protos, err := exposed(deploy)
	if err != nil || !reflect.DeepEqual(sel, map[string]string{"app": "web"}) || !reflect.DeepEqual(ports, []int32{53, 80}) || protos[53] != corev1.ProtocolUDP {
		t.Fatalf("exposed = %v %v %v %v", sel, ports, protos, err)
	}
	svc, err := (&ExposeOptions{}).Service("web", sel, deploy.GetLabels(), ports, protos)
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.ServicePort{
		{Name: "port-1", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
		{Name: "port-2", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
	}
	if !reflect.DeepEqual(svc.Spec.Ports, want) {
		t.Errorf("ports = %+v", svc.Spec.Ports)
	}
	unstructured.SetNestedField(deploy.Object, []any{map[string]any{"key": "app", "operator": "Exists"}}, "spec", "selector", "matchExpressions")
	if _, _, _, err := exposed(deploy); err == nil || !strings.Contains(err.Error(), "to map-based selector format") {
		t.Errorf("matchExpressions: %v", err)
	}
	if _, err := (&ExposeOptions{}).Service("x", sel, nil, nil, nil); err == nil {
		t.Error("a Service with no port was made")
	}
	if _, err := (&ExposeOptions{Port: "80", SessionAffinity: "Sticky"}).Service("x", sel, nil, nil, nil); err == nil {
		t.Error("a bad session affinity was accepted")
	}
}

func TestRunPod(t *testing.T) {
	o := &RunOptions{Image: "nginx", Restart: "Never", Labels: "a=b", Env: []string{"X=1"}, Port: "80", Command: true}
	p, err := o.Pod("web", []string{"sh", "-c", "true"})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Spec.Containers[0]
	if p.Labels["a"] != "b" || p.Labels["run"] != "" || c.Name != "web" || !reflect.DeepEqual(c.Command, []string{"sh", "-c", "true"}) ||
		c.Args != nil || c.Ports[0].ContainerPort != 80 || c.Env[0].Value != "1" || p.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("pod = %+v", p)
	}
	for _, bad := range []*RunOptions{
		{Image: "nginx", Restart: "Sometimes"},
		{Image: "nginx", Restart: "Always", Port: "http"},
		{Image: "nginx", Restart: "Always", Labels: "a"},
		{Image: "nginx", Restart: "Always", Env: []string{"=1"}},
		{Restart: "Always"},
	} {
		if _, err := bad.Pod("web", nil); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
	if _, err := (&RunOptions{Image: "nginx", Restart: "Always"}).Pod("Not_A_Name", nil); err == nil {
		t.Error("a bad pod name was accepted")
	}
}
