package pod

import (
	"net/url"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func podWith(annotations map[string]string, names ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: annotations}}
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n})
	}
	return p
}

func TestPodContainer(t *testing.T) {
	withInit := podWith(nil, "a", "b")
	withInit.Spec.InitContainers = []corev1.Container{{Name: "init"}}
	for _, tc := range []struct {
		name, container string
		pod             *corev1.Pod
		want, wantErr   string
	}{
		{name: "the only container", pod: podWith(nil, "a"), want: "a"},
		{name: "named", pod: podWith(nil, "a", "b"), container: "b", want: "b"},
		{name: "named init container", pod: withInit, container: "init", want: "init"},
		{name: "annotation", pod: podWith(map[string]string{DefaultContainerAnnotation: "b"}, "a", "b"), want: "b"},
		{name: "named wins over annotation", pod: podWith(map[string]string{DefaultContainerAnnotation: "b"}, "a", "b"), container: "a", want: "a"},
		{name: "annotation of a missing container", pod: podWith(map[string]string{DefaultContainerAnnotation: "z"}, "a", "b"),
			wantErr: "a container name must be specified for pod x, choose one of: [a b]"},
		{name: "several", pod: podWith(nil, "a", "b"), wantErr: "a container name must be specified for pod x, choose one of: [a b]"},
		{name: "several with init", pod: withInit, wantErr: "a container name must be specified for pod x, choose one of: [init a b]"},
		{name: "none", pod: podWith(nil), wantErr: "a container name must be specified for pod x"},
		{name: "unknown", pod: podWith(nil, "a"), container: "q", wantErr: "container q is not valid for pod x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Container(tc.pod, tc.container)
			if tc.wantErr != "" {
				if !apierrors.IsBadRequest(err) || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want 400 %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Container = %q, %v; want %q", got, err, tc.want)
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
			opts, err := LogOptions(q)
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
		if _, err := LogOptions(q); !apierrors.IsBadRequest(err) {
			t.Errorf("%s: err = %v, want 400", bad, err)
		}
	}
}

func TestStreamQuery(t *testing.T) {
	for _, tc := range []struct {
		name, sub, query string
		want             url.Values
	}{
		{name: "kubectl exec", sub: SubExec, query: "command=echo&command=hi&container=c&stdin=false&stdout=true&stderr=true&tty=false",
			want: url.Values{"command": {"echo", "hi"}, "output": {"1"}, "stdout": {"1"}, "error": {"1"}, "stderr": {"1"}}},
		{name: "interactive", sub: SubExec, query: "command=sh&stdin=true&stdout=true&tty=true",
			want: url.Values{"command": {"sh"}, "input": {"1"}, "stdin": {"1"}, "output": {"1"}, "stdout": {"1"}, "tty": {"1"}}},
		{name: "attach drops command", sub: SubAttach, query: "command=sh&stdout=true",
			want: url.Values{"output": {"1"}, "stdout": {"1"}}},
		{name: "ports, repeated and comma-separated", sub: SubPortForward, query: "ports=8080&ports=9090,53",
			want: url.Values{"port": {"8080,9090,53"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			opts, err := ConnectOptions(tc.sub, q)
			if err != nil {
				t.Fatal(err)
			}
			if got := streamQuery(opts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("streamQuery = %v, want %v", got, tc.want)
			}
		})
	}
	// A port that is not one is upstream's 400, before anything else.
	for _, bad := range []string{"ports=http", "ports=70000", "ports=-1"} {
		q, _ := url.ParseQuery(bad)
		if _, err := ConnectOptions(SubPortForward, q); !apierrors.IsBadRequest(err) {
			t.Errorf("%s: err = %v, want 400", bad, err)
		}
	}
}
