package app

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeLogServer serves one pod and its log, and records the log query.
func fakeLogServer(t *testing.T) (*httptest.Server, func() url.Values) {
	t.Helper()
	var mu sync.Mutex
	var query url.Values
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "web"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/namespaces/web/pods/nginx", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(pod)
	})
	mux.HandleFunc("/api/v1/namespaces/web/pods/nginx/log", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		query = r.URL.Query()
		mu.Unlock()
		io.WriteString(w, "line 1\nline 2\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, func() url.Values { mu.Lock(); defer mu.Unlock(); return query }
}

func TestLogsRequest(t *testing.T) {
	srv, lastQuery := fakeLogServer(t)
	kc := writeTestKubeconfig(t, srv.URL)
	tests := []struct {
		name string
		args []string
		want url.Values
	}{
		{name: "defaults", args: nil, want: url.Values{"container": {"app"}}},
		{name: "all flags", args: []string{"-c", "sidecar", "-f", "--tail", "20", "--previous", "--timestamps", "--since", "5m", "--limit-bytes", "100"},
			want: url.Values{"container": {"sidecar"}, "follow": {"true"}, "tailLines": {"20"}, "previous": {"true"},
				"timestamps": {"true"}, "sinceSeconds": {"300"}, "limitBytes": {"100"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, append([]string{"logs", "nginx", "-n", "web", "--kubeconfig", kc}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if out != "line 1\nline 2\n" {
				t.Errorf("output = %q", out)
			}
			got := lastQuery()
			for k, v := range tt.want {
				if strings.Join(got[k], ",") != strings.Join(v, ",") {
					t.Errorf("query %s = %v, want %v (query %v)", k, got[k], v, got)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("query = %v, want exactly %v", got, tt.want)
			}
		})
	}
}

func TestLogsServerError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/log") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"container \"app\" in pod \"nginx\" is waiting to start: ContainerCreating","reason":"BadRequest","code":400}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nginx","namespace":"default"},"spec":{"containers":[{"name":"app"}]}}`)
	}))
	defer srv.Close()
	kc := writeTestKubeconfig(t, srv.URL)
	_, err := run(t, "logs", "nginx", "--kubeconfig", kc)
	if err == nil || !strings.Contains(err.Error(), "is waiting to start: ContainerCreating") || !strings.Contains(err.Error(), "Error from server (BadRequest)") {
		t.Errorf("logs error = %v", err)
	}
}
