package integration

import (
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"skiff.dev/apiserver/pkg/testserver"
)

// buildSkiffctl builds the skiffctl binary into a temporary directory.
func buildSkiffctl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "skiffctl")
	cmd := exec.Command("go", "build", "-o", bin, "skiff.dev/ctl/cmd/skiffctl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinary runs the built skiffctl: seed 003's step 1 (create -f
// replicaset.yaml -v 10), and exit statuses.
func TestBinary(t *testing.T) {
	bin := buildSkiffctl(t)
	ts := testserver.Start(t, nil)
	rsFile := writeFile(t, "replicaset.yaml", replicaSetManifest)
	runBin := func(args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(bin, append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...)
		cmd.Env = append(cmd.Environ(), "XDG_CACHE_HOME="+t.TempDir())
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	stdout, stderr, code := runBin("create", "-f", rsFile, "-v", "10")
	if code != 0 || stdout != "replicaset.apps/my-replicaset created\n" {
		t.Fatalf("create -v 10: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	// The POST appears as a curl command, then its body, status line and
	// response, in that order.
	order := []*regexp.Regexp{
		regexp.MustCompile(`curl -v -XPOST --cacert \S+ --cert \S+ --key \S+ -H 'Accept: application/json' -H 'Content-Type: application/json' -H 'User-Agent: skiffctl/\S+ \(linux/\w+\)' --data-binary '\{"apiVersion":"apps/v1","kind":"ReplicaSet".*\}' 'https://127\.0\.0\.1:\d+/apis/apps/v1/namespaces/default/replicasets\?fieldManager=kubectl-create&fieldValidation=Strict'`),
		regexp.MustCompile(`Request Body: \{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":\{"name":"my-replicaset","namespace":"default"\}`),
		regexp.MustCompile(`POST https://127\.0\.0\.1:\d+/apis/apps/v1/namespaces/default/replicasets\?fieldManager=kubectl-create&fieldValidation=Strict 201 Created in \d+ milliseconds`),
		regexp.MustCompile(`Response Body: \{"kind":"ReplicaSet","apiVersion":"apps/v1","metadata":\{"name":"my-replicaset","namespace":"default","uid":"`),
	}
	pos := 0
	for _, re := range order {
		loc := re.FindStringIndex(stderr[pos:])
		if loc == nil {
			t.Fatalf("-v 10 output lacks %s after offset %d:\n%s", re, pos, stderr)
		}
		pos += loc[1]
	}

	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"get", "nope"}, `error: the server doesn't have a resource type "nope"`},
		{[]string{"get", "rs", "missing"}, `Error from server (NotFound): replicasets.apps "missing" not found`},
		{[]string{"create", "-f", rsFile}, `Error from server (AlreadyExists)`},
		{[]string{"frobnicate"}, `error: unknown command "frobnicate"`},
		{[]string{"get", "pods", "--bogus-flag"}, `error: unknown flag: --bogus-flag`},
	} {
		_, stderr, code := runBin(tt.args...)
		if code == 0 {
			t.Errorf("skiffctl %s exited 0", strings.Join(tt.args, " "))
		}
		if !strings.Contains(stderr, tt.wantErr) {
			t.Errorf("skiffctl %s: stderr %q lacks %q", strings.Join(tt.args, " "), stderr, tt.wantErr)
		}
	}
}
