package transport

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDebugRoundTripperLevels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"kind":"ReplicaSet"}`)
	}))
	defer srv.Close()

	tests := []struct {
		level   int
		want    []string
		notWant []string
	}{
		{level: 5, notWant: []string{"POST", "curl"}},
		{level: 6, want: []string{"POST " + srv.URL + "/apis/apps/v1/namespaces/default/replicasets?fieldManager=kubectl-create 201 Created in 7 milliseconds"},
			notWant: []string{"Request Headers", "Request Body", "curl"}},
		{level: 7, want: []string{"Request Headers:\n    Authorization: Bearer <masked>\n", "Response Headers:\n", "Content-Type: application/json"},
			notWant: []string{"Request Body", "secret-token"}},
		{level: 8, want: []string{`Request Body: {"apiVersion":"apps/v1"}`, `Response Body: {"kind":"ReplicaSet"}`}, notWant: []string{"curl"}},
		{level: 10, want: []string{
			`curl -v -XPOST --cacert /pki/ca.crt --cert /pki/admin.crt --key /pki/admin.key -H 'Authorization: Bearer <masked>' -H 'Content-Type: application/json' --data-binary '{"apiVersion":"apps/v1"}' '` + srv.URL + `/apis/apps/v1/namespaces/default/replicasets?fieldManager=kubectl-create'`,
		}},
	}
	for _, tt := range tests {
		t.Run(string(rune('0'+tt.level/10))+string(rune('0'+tt.level%10)), func(t *testing.T) {
			var log bytes.Buffer
			rt := Wrap(http.DefaultTransport, tt.level, &log, TLSFiles{CAFile: "/pki/ca.crt", CertFile: "/pki/admin.crt", KeyFile: "/pki/admin.key"})
			if d, ok := rt.(*DebugRoundTripper); ok {
				clock := time.Unix(0, 0)
				d.Now = func() time.Time { clock = clock.Add(7 * time.Millisecond); return clock }
			}
			req, _ := http.NewRequest("POST", srv.URL+"/apis/apps/v1/namespaces/default/replicasets?fieldManager=kubectl-create", strings.NewReader(`{"apiVersion":"apps/v1"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer secret-token")
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != `{"kind":"ReplicaSet"}` {
				t.Errorf("the response body was consumed: %q", body)
			}
			for _, w := range tt.want {
				if !strings.Contains(log.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, log.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(log.String(), w) {
					t.Errorf("output has %q:\n%s", w, log.String())
				}
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/etc/pki/ca.crt", "/etc/pki/ca.crt"},
		{"it's", `'it'\''s'`},
		{"a b", "'a b'"},
		{"", "''"},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestMaterializePEM(t *testing.T) {
	dir := t.TempDir()
	p1, err := MaterializePEM(dir, "-ca.crt", []byte("data"))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := MaterializePEM(dir, "-ca.crt", []byte("data"))
	if err != nil || p1 != p2 {
		t.Fatalf("same content gave %s and %s (%v)", p1, p2, err)
	}
	p3, _ := MaterializePEM(dir, "-ca.crt", []byte("other"))
	if p3 == p1 {
		t.Error("different content gave the same file")
	}
}
