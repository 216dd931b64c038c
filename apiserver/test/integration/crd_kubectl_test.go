package integration

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/apiserver/pkg/testserver"
)

const kubectlCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
      description: The cron spec defining the interval a CronJob is run
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        description: CronTab runs a command on a schedule.
        properties:
          spec:
            type: object
            description: Spec holds the schedule and the image.
            properties:
              cronSpec:
                type: string
                description: The schedule in cron format.
              image:
                type: string
                description: The image the job runs.
              replicas:
                type: integer
                default: 1
`

const kubectlCR = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
  namespace: default
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
`

// kubectl runs the real kubectl against ts and returns its combined output
// and exit code.
func kubectl(t *testing.T, ctx context.Context, ts *testserver.TestServer, args ...string) (string, int) {
	t.Helper()
	out, err := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("kubectl %v: %v", args, err)
	return "", -1
}

func mustKubectl(t *testing.T, ctx context.Context, ts *testserver.TestServer, args ...string) string {
	t.Helper()
	out, code := kubectl(t, ctx, ts, args...)
	if code != 0 {
		t.Fatalf("kubectl %v: exit %d: %s", args, code, out)
	}
	return out
}

func TestCustomResourceKubectl(t *testing.T) {
	if _, err := os.Stat("/usr/bin/kubectl"); err != nil {
		t.Skip("no kubectl at /usr/bin/kubectl")
	}
	ts := testserver.Start(t, nil)
	c := ctx(t)
	dir := t.TempDir()
	crdFile, crFile := filepath.Join(dir, "crd.yaml"), filepath.Join(dir, "cr.yaml")
	if err := os.WriteFile(crdFile, []byte(kubectlCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crFile, []byte(kubectlCR), 0o600); err != nil {
		t.Fatal(err)
	}

	out := mustKubectl(t, c, ts, "apply", "-f", crdFile)
	if !strings.Contains(out, "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created") {
		t.Errorf("apply CRD: %s", out)
	}
	mustKubectl(t, c, ts, "wait", "--for=condition=Established", "--timeout=30s", "crd/crontabs.stable.example.com")

	// Established means served: the first apply of an instance succeeds.
	out = mustKubectl(t, c, ts, "apply", "-f", crFile)
	if !strings.Contains(out, "crontab.stable.example.com/my-new-cron-object created") {
		t.Fatalf("apply CR: %s", out)
	}

	t.Run("get prints the printer columns", func(t *testing.T) {
		out := mustKubectl(t, c, ts, "get", "crontabs")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !regexp.MustCompile(`^NAME\s+SPEC\s+REPLICAS\s+AGE$`).MatchString(lines[0]) {
			t.Fatalf("kubectl get crontabs:\n%s", out)
		}
		if !regexp.MustCompile(`^my-new-cron-object\s+\* \* \* \* \*/5\s+1\s+\d+s$`).MatchString(lines[1]) {
			t.Errorf("row: %q", lines[1])
		}
		out = mustKubectl(t, c, ts, "get", "ct", "my-new-cron-object", "-o", "jsonpath={.spec.replicas}")
		if out != "1" {
			t.Errorf("short name and default: %q", out)
		}
	})

	t.Run("explain", func(t *testing.T) {
		// The OpenAPI documents follow the CRD within seconds (upstream's
		// are eventually consistent too).
		err := wait.PollUntilContextTimeout(c, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			code, body := raw(t, ts, http.MethodGet, "/openapi/v3", "", nil)
			return code == http.StatusOK && strings.Contains(string(body), "apis/stable.example.com/v1"), nil
		})
		if err != nil {
			t.Fatalf("stable.example.com/v1 never published in /openapi/v3: %v", err)
		}
		out := mustKubectl(t, c, ts, "explain", "crontab.spec")
		for _, want := range []string{"GROUP:      stable.example.com", "KIND:       CronTab", "VERSION:    v1", "Spec holds the schedule and the image.", "cronSpec", "The schedule in cron format.", "image", "replicas"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain crontab.spec lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("diff", func(t *testing.T) {
		out, code := kubectl(t, c, ts, "diff", "-f", crFile)
		if code != 0 {
			t.Errorf("diff of the applied object: exit %d: %s", code, out)
		}
		changed := strings.Replace(kubectlCR, "my-awesome-cron-image", "my-better-cron-image", 1)
		if err := os.WriteFile(crFile, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code = kubectl(t, c, ts, "diff", "-f", crFile)
		if code != 1 || !strings.Contains(out, "-  image: my-awesome-cron-image") || !strings.Contains(out, "+  image: my-better-cron-image") {
			t.Errorf("diff of a changed object: exit %d:\n%s", code, out)
		}
		// diff is a dry run: nothing changed on the server.
		out = mustKubectl(t, c, ts, "get", "crontab", "my-new-cron-object", "-o", "jsonpath={.spec.image}")
		if out != "my-awesome-cron-image" {
			t.Errorf("image after diff = %q", out)
		}
	})

	t.Run("server-side apply", func(t *testing.T) {
		ssaFile := filepath.Join(dir, "ssa.yaml")
		cr := strings.Replace(kubectlCR, "my-new-cron-object", "ssa-cron", 1)
		if err := os.WriteFile(ssaFile, []byte(cr), 0o600); err != nil {
			t.Fatal(err)
		}
		out := mustKubectl(t, c, ts, "apply", "--server-side", "-f", ssaFile)
		if strings.TrimSpace(out) != "crontab.stable.example.com/ssa-cron serverside-applied" {
			t.Errorf("apply --server-side: %q", out)
		}
		out = mustKubectl(t, c, ts, "get", "crontab", "ssa-cron", "--show-managed-fields", "-o",
			`jsonpath={.spec.replicas} {.metadata.managedFields[0].manager} {.metadata.managedFields[0].operation} {.metadata.managedFields[0].fieldsV1.f:spec}`)
		if out != `1 kubectl Apply {"f:cronSpec":{},"f:image":{}}` {
			t.Errorf("after apply (default, owner, owned fields): %q", out)
		}
		changed := strings.Replace(cr, "my-awesome-cron-image", "other-image", 1)
		if err := os.WriteFile(ssaFile, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := kubectl(t, c, ts, "diff", "--server-side", "-f", ssaFile)
		if code != 1 || !strings.Contains(out, "+  image: other-image") {
			t.Errorf("diff --server-side: exit %d:\n%s", code, out)
		}
		out, code = kubectl(t, c, ts, "apply", "--server-side", "--field-manager", "other", "-f", ssaFile)
		if code == 0 || !strings.Contains(out, `conflict with "kubectl": .spec.image`) {
			t.Errorf("conflicting apply: exit %d: %s", code, out)
		}
		mustKubectl(t, c, ts, "apply", "--server-side", "-f", ssaFile)
		if out := mustKubectl(t, c, ts, "get", "crontab", "ssa-cron", "-o", "jsonpath={.spec.image}"); out != "other-image" {
			t.Errorf("image after the owner's apply: %q", out)
		}
		bogus := strings.Replace(changed, "  image: other-image\n", "  image: other-image\n  bogus: 1\n", 1)
		if err := os.WriteFile(ssaFile, []byte(bogus), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code = kubectl(t, c, ts, "apply", "--server-side", "-f", ssaFile)
		if code == 0 || !strings.Contains(out, "(BadRequest)") || !strings.Contains(out, ".spec.bogus: field not declared in schema") {
			t.Errorf("apply of an undeclared field: exit %d: %s", code, out)
		}
	})

	t.Run("apply a changed CRD", func(t *testing.T) {
		changed := strings.Replace(kubectlCRD, "The image the job runs.", "The container image the job runs.", 1)
		if err := os.WriteFile(crdFile, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
		out := mustKubectl(t, c, ts, "apply", "-f", crdFile)
		if !strings.Contains(out, "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com configured") {
			t.Errorf("re-apply: %s", out)
		}
		out = mustKubectl(t, c, ts, "get", "crd", "crontabs.stable.example.com", "-o", "jsonpath={.metadata.generation} {.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.image.description}")
		if out != "2 The container image the job runs." {
			t.Errorf("after re-apply: %q", out)
		}
		out = mustKubectl(t, c, ts, "get", "crds")
		if !regexp.MustCompile(`(?m)^NAME\s+CREATED AT\ncrontabs\.stable\.example\.com\s+\S+Z$`).MatchString(strings.TrimSpace(out)) {
			t.Errorf("kubectl get crds:\n%s", out)
		}
	})

	t.Run("delete the CRD", func(t *testing.T) {
		mustKubectl(t, c, ts, "delete", "-f", crdFile, "--wait=true", "--timeout=30s")
		out, code := kubectl(t, c, ts, "get", "crontabs.stable.example.com")
		if code == 0 {
			t.Errorf("get after the CRD is deleted: %s", out)
		}
	})
}
