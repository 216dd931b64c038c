package integration

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/server"
)

func TestAuditLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	ts := start(t, func(o *server.Options) { o.AuditLogPath = path })
	secret := "hunter2-do-not-log"
	if _, err := ts.Client.CoreV1().Secrets("default").Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"},
		StringData: map[string]string{"password": secret}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alice := clientAs(t, ts, "alice")
	_, _ = alice.CoreV1().Secrets("default").Get(ctx(t), "creds", metav1.GetOptions{})
	// A service account token's requests carry its credential ID, as
	// upstream's audit events do.
	if _, err := ts.Client.CoreV1().ServiceAccounts("default").Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := ts.Client.CoreV1().ServiceAccounts("default").CreateToken(ctx(t), "audited", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	credentialID := "JTI=" + jwtClaims(t, tr.Status.Token)["jti"].(string)
	_, _ = clientWithToken(t, ts, tr.Status.Token).CoreV1().Secrets("default").Get(ctx(t), "creds", metav1.GetOptions{})
	resp, err := http.Get(ts.URL + "/api/v1/namespaces") // no client certificate: TLS fails or 401
	if err == nil {
		resp.Body.Close()
	}

	type line struct {
		Verb string
		User struct {
			Username string
			Groups   []string
			Extra    map[string][]string
		}
		ObjectRef      *struct{ Resource, Namespace, Name string }
		ResponseStatus struct{ Code int }
		Annotations    map[string]string
	}
	var lines []line
	if err := waitFor(t, func() error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), secret) || strings.Contains(string(data), base64.StdEncoding.EncodeToString([]byte(secret))) {
			t.Fatal("the audit log contains the secret's value")
		}
		lines = nil
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var ev line
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("not one JSON object per line: %v: %q", err, l)
			}
			lines = append(lines, ev)
		}
		for _, want := range []struct {
			user, verb, name string
			code             int
			extra            string
		}{{"kubernetes-admin", "create", "", 201, ""}, {"alice", "get", "creds", 403, ""},
			{"system:serviceaccount:default:audited", "get", "creds", 403, credentialID}} {
			found := false
			for _, ev := range lines {
				if ev.User.Username == want.user && ev.Verb == want.verb && ev.ObjectRef != nil && ev.ObjectRef.Resource == "secrets" &&
					ev.ObjectRef.Name == want.name && ev.ResponseStatus.Code == want.code && ev.Annotations["skiff.dev/latency"] != "" &&
					strings.Join(ev.User.Extra["authentication.kubernetes.io/credential-id"], ",") == want.extra {
					found = true
				}
			}
			if !found {
				return &missing{want.user + " " + want.verb}
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("audit log: %v (%d lines)", err, len(lines))
	}
}

type missing struct{ what string }

func (m *missing) Error() string { return "no audit line for " + m.what }
