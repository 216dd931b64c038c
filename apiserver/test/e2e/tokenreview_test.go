package e2e

import (
	"strings"
	"testing"
)

func TestKubectlTokenReviewAndEvents(t *testing.T) {
	k, _ := newKubectl(t)
	tr := "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: test-user-token\n"
	out := k.run("create", "-f", writeFile(t, "tr.yaml", tr), "-o", "jsonpath={.status.user.username}")
	if out != "test-user" {
		t.Errorf("token review: %q", out)
	}
	ev := `apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: e1, namespace: default}
eventTime: "2024-01-01T00:00:00.000000Z"
reportingController: skiff.dev/test
reportingInstance: i
action: Test
reason: Tested
note: hello
type: Normal
regarding: {kind: Pod, name: web, namespace: default}
`
	k.run("create", "-f", writeFile(t, "ev.yaml", ev))
	lines := strings.Split(strings.TrimSpace(k.run("get", "events")), "\n")
	if got := strings.Join(columns(lines[0]), ","); got != "LAST SEEN,TYPE,REASON,OBJECT,MESSAGE" {
		t.Errorf("get events header: %q", got)
	}
	if len(lines) != 2 || !strings.Contains(lines[1], "Tested") || !strings.Contains(lines[1], "pod/web") || !strings.Contains(lines[1], "hello") {
		t.Errorf("get events: %q", lines)
	}
	if got := k.run("get", "events.v1.events.k8s.io", "e1", "-o", "jsonpath={.note}"); got != "hello" {
		t.Errorf("events.k8s.io view: %q", got)
	}
}

// kubectl auth whoami asks SelfSubjectReview; impersonating, it names the
// impersonated user.
func TestKubectlAuthWhoami(t *testing.T) {
	k, _ := newKubectl(t)
	out := k.run("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	if out != "kubernetes-admin" {
		t.Errorf("whoami: %q", out)
	}
	out = k.run("auth", "whoami", "--as", "jane", "--as-group", "devs")
	if !strings.Contains(out, "Username    jane") || !strings.Contains(out, "[devs system:authenticated]") {
		t.Errorf("whoami as jane: %q", out)
	}
}
