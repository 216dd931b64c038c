package integration

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/ctl/app"
)

// result is the outcome of one skiffctl run.
type result struct {
	out, errOut string
	err         error
}

// skiffctl runs the command in-process against ts with stdin.
func skiffctl(t *testing.T, ts *testserver.TestServer, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return skiffctlCtx(ctx, ts, stdin, args...)
}

// skiffctlCtx runs skiffctl until it returns or ctx ends.
func skiffctlCtx(ctx context.Context, ts *testserver.TestServer, stdin string, args ...string) result {
	cmd := app.NewSkiffctlCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(append([]string{"--kubeconfig", ts.Kubeconfig}, args...))
	err := cmd.ExecuteContext(ctx)
	return result{out: out.String(), errOut: errOut.String(), err: err}
}

// must runs skiffctl and fails the test on error.
func must(t *testing.T, ts *testserver.TestServer, stdin string, args ...string) string {
	t.Helper()
	r := skiffctl(t, ts, stdin, args...)
	if r.err != nil {
		t.Fatalf("skiffctl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.err, r.out, r.errOut)
	}
	return r.out
}
