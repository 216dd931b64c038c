package endpoints

import (
	"net/url"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testPod(annotations map[string]string, names ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: annotations}}
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n})
	}
	return p
}

func TestPodContainer(t *testing.T) {
	withInit := testPod(nil, "a", "b")
	withInit.Spec.InitContainers = []corev1.Container{{Name: "init"}}
	for _, tc := range []struct {
		name, container string
		pod             *corev1.Pod
		want, wantErr   string
	}{
		{name: "the only container", pod: testPod(nil, "a"), want: "a"},
		{name: "named", pod: testPod(nil, "a", "b"), container: "b", want: "b"},
		{name: "named init container", pod: withInit, container: "init", want: "init"},
		{name: "annotation", pod: testPod(map[string]string{DefaultContainerAnnotation: "b"}, "a", "b"), want: "b"},
		{name: "named wins over annotation", pod: testPod(map[string]string{DefaultContainerAnnotation: "b"}, "a", "b"), container: "a", want: "a"},
		{name: "annotation of a missing container", pod: testPod(map[string]string{DefaultContainerAnnotation: "z"}, "a", "b"),
			wantErr: "a container name must be specified for pod x, choose one of: [a b]"},
		{name: "several", pod: testPod(nil, "a", "b"), wantErr: "a container name must be specified for pod x, choose one of: [a b]"},
		{name: "several with init", pod: withInit, wantErr: "a container name must be specified for pod x, choose one of: [init a b]"},
		{name: "none", pod: testPod(nil), wantErr: "a container name must be specified for pod x"},
		{name: "unknown", pod: testPod(nil, "a"), container: "q", wantErr: "container q is not valid for pod x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := podContainer(tc.pod, tc.container)
			if tc.wantErr != "" {
				if !apierrors.IsBadRequest(err) || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want 400 %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("podContainer = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestLogQuery(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		want        url.Values
		container   string
		insecure    bool
		wantInvalid bool
	}{
		{name: "none", query: "", want: url.Values{}},
		{name: "all", query: "container=c&follow=true&previous=1&timestamps=true&sinceSeconds=10&tailLines=5&limitBytes=100",
			container: "c",
			want: url.Values{"follow": {"true"}, "previous": {"true"}, "timestamps": {"true"}, "sinceSeconds": {"10"},
				"tailLines": {"5"}, "limitBytes": {"100"}}},
		{name: "sinceTime", query: "sinceTime=2024-01-02T03:04:05Z", want: url.Values{"sinceTime": {"2024-01-02T03:04:05Z"}}},
		{name: "false values", query: "follow=false&previous=0&timestamps=false", want: url.Values{}},
		{name: "insecure backend is not passed on", query: "insecureSkipTLSVerifyBackend=true", want: url.Values{}, insecure: true},
		{name: "tailLines 0", query: "tailLines=0", want: url.Values{"tailLines": {"0"}}},
		{name: "negative tailLines", query: "tailLines=-1", wantInvalid: true},
		{name: "limitBytes 0", query: "limitBytes=0", wantInvalid: true},
		{name: "sinceSeconds 0", query: "sinceSeconds=0", wantInvalid: true},
		{name: "both since", query: "sinceSeconds=5&sinceTime=2024-01-02T03:04:05Z", wantInvalid: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			opts, err := parseLogOptions(q)
			if tc.wantInvalid {
				if !apierrors.IsInvalid(err) {
					t.Fatalf("err = %v, want Invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := logQuery(opts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("logQuery = %v, want %v", got, tc.want)
			}
			if opts.Container != tc.container || opts.InsecureSkipTLSVerifyBackend != tc.insecure {
				t.Errorf("container %q insecure %v, want %q %v", opts.Container, opts.InsecureSkipTLSVerifyBackend, tc.container, tc.insecure)
			}
		})
	}
	for _, bad := range []string{"tailLines=x", "sinceTime=yesterday", "limitBytes=1.5"} {
		q, _ := url.ParseQuery(bad)
		if _, err := parseLogOptions(q); !apierrors.IsBadRequest(err) {
			t.Errorf("%s: err = %v, want 400", bad, err)
		}
	}
}

func TestStreamQuery(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		command     bool
		want        url.Values
	}{
		{name: "kubectl exec", query: "command=echo&command=hi&container=c&stdin=false&stdout=true&stderr=true&tty=false", command: true,
			want: url.Values{"command": {"echo", "hi"}, "output": {"1"}, "stdout": {"1"}, "error": {"1"}, "stderr": {"1"}}},
		{name: "interactive", query: "command=sh&stdin=true&stdout=true&tty=true", command: true,
			want: url.Values{"command": {"sh"}, "input": {"1"}, "stdin": {"1"}, "output": {"1"}, "stdout": {"1"}, "tty": {"1"}}},
		{name: "attach drops command", query: "command=sh&stdout=true", command: false,
			want: url.Values{"output": {"1"}, "stdout": {"1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			if got := streamQuery(q, tc.command); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("streamQuery = %v, want %v", got, tc.want)
			}
		})
	}
	q, _ := url.ParseQuery("ports=8080&ports=9090")
	if got := portForwardQuery(q); got.Get("port") != "8080,9090" {
		t.Errorf("portForwardQuery = %v, want port=8080,9090", got)
	}
}

func TestAggregatedVersion(t *testing.T) {
	for _, tc := range []struct{ accept, want string }{
		{"", ""},
		{"application/json", ""},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", "v2"},
		{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", "v2beta1"},
		{"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", ""},
		{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList", ""},
		{"application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""},
	} {
		if got := aggregatedVersion(tc.accept); got != tc.want {
			t.Errorf("aggregatedVersion(%q) = %q, want %q", tc.accept, got, tc.want)
		}
	}
}

func TestToResourceDiscovery(t *testing.T) {
	in := []metav1.APIResource{
		{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: []string{"get"}, ShortNames: []string{"po"}, Categories: []string{"all"}},
		{Name: "pods/eviction", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}},
		{Name: "pods/log", Namespaced: true, Kind: "Pod", Verbs: []string{"get"}},
		{Name: "nodes", SingularName: "node", Kind: "Node", Verbs: []string{"list"}},
	}
	out := toResourceDiscovery(in)
	if len(out) != 2 || out[0].Resource != "pods" || out[1].Resource != "nodes" {
		t.Fatalf("resources = %+v", out)
	}
	pods := out[0]
	if pods.Scope != "Namespaced" || out[1].Scope != "Cluster" || pods.SingularResource != "pod" || pods.ResponseKind.Kind != "Pod" ||
		!reflect.DeepEqual(pods.ShortNames, []string{"po"}) || !reflect.DeepEqual(pods.Categories, []string{"all"}) {
		t.Errorf("pods = %+v", pods)
	}
	if len(pods.Subresources) != 2 || pods.Subresources[0].Subresource != "eviction" ||
		*pods.Subresources[0].ResponseKind != (metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}) ||
		pods.Subresources[1].Subresource != "log" || !reflect.DeepEqual(pods.Subresources[1].Verbs, []string{"get"}) {
		t.Errorf("pods subresources = %+v", pods.Subresources)
	}
}
