package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

const replicasPolicyYAML = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas-limit
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    message: "at most 5 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicas-limit-binding
spec:
  policyName: replicas-limit
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: default
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicas-limit-warn
spec:
  policyName: replicas-limit
  validationActions: [Warn]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: warned
`

func deploymentYAML(ns string, replicas string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ` + ns + `
spec:
  replicas: ` + replicas + `
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: busybox
`
}

// TestKubectlValidatingAdmissionPolicy applies a policy and its bindings
// with the real kubectl, lists them with upstream's columns, and shows a
// denial and a warning as kubectl prints them.
func TestKubectlValidatingAdmissionPolicy(t *testing.T) {
	k, _ := newKubectl(t)
	out := k.run("apply", "-f", writeFile(t, "policy.yaml", replicasPolicyYAML))
	for _, want := range []string{
		"validatingadmissionpolicy.admissionregistration.k8s.io/replicas-limit created",
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/replicas-limit-binding created",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	for _, tc := range []struct{ resource, header, row string }{
		{"validatingadmissionpolicies", "NAME,VALIDATIONS,PARAMKIND,AGE", "replicas-limit,1,<unset>"},
		{"validatingadmissionpolicybindings", "NAME,POLICYNAME,PARAMREF,AGE", "replicas-limit-binding,replicas-limit,<unset>"},
	} {
		lines := strings.Split(strings.TrimSpace(k.run("get", tc.resource)), "\n")
		if got := strings.Join(columns(lines[0]), ","); got != tc.header {
			t.Errorf("%s header: %s, want %s", tc.resource, got, tc.header)
		}
		if cells := columns(lines[1]); len(cells) < 3 || strings.Join(cells[:3], ",") != tc.row {
			t.Errorf("%s row: %q, want prefix %q", tc.resource, lines[1], tc.row)
		}
	}

	for _, field := range []string{"validatingadmissionpolicy.spec.validations.messageExpression", "validatingadmissionpolicybinding.spec.validationActions"} {
		if out, err := k.try("explain", field); err != nil || !strings.Contains(out, "FIELD:") {
			t.Errorf("kubectl explain %s: %v\n%s", field, err, out)
		}
	}

	// The policy reaches the plugin through its watch: retry until denied.
	six := writeFile(t, "six.yaml", deploymentYAML("default", "6"))
	want := `The deployments "web" is invalid: : ValidatingAdmissionPolicy 'replicas-limit' with binding 'replicas-limit-binding' denied request: at most 5 replicas`
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		out, err := k.try("apply", "-f", six)
		last = out
		if err == nil {
			k.run("delete", "deployment", "web", "-n", "default")
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("never denied; last output:\n%s", last)
	}
	if !strings.Contains(last, want) {
		t.Errorf("kubectl's denial:\n%s\nwant it to contain:\n%s", last, want)
	}
	if out := k.run("apply", "-f", writeFile(t, "five.yaml", deploymentYAML("default", "5"))); !strings.Contains(out, "deployment.apps/web created") {
		t.Errorf("5 replicas: %s", out)
	}

	// A Warn binding: kubectl prints the warning and the object is created.
	k.run("create", "namespace", "warned")
	out = k.run("apply", "-f", writeFile(t, "warned.yaml", deploymentYAML("warned", "6")))
	if want := "Warning: Validation failed for ValidatingAdmissionPolicy 'replicas-limit' with binding 'replicas-limit-warn': at most 5 replicas"; !strings.Contains(out, want) ||
		!strings.Contains(out, "deployment.apps/web created") {
		t.Errorf("kubectl apply with a Warn binding:\n%s\nwant %q and the deployment created", out, want)
	}

	// A policy that does not compile is refused at create.
	bad := strings.Replace(replicasPolicyYAML[:strings.Index(replicasPolicyYAML, "---")], "object.spec.replicas <= 5", "object.spec.replicas <=", 1)
	bad = strings.Replace(bad, "name: replicas-limit", "name: broken", 1)
	out, err = k.try("apply", "-f", writeFile(t, "bad.yaml", bad))
	if err == nil || !strings.Contains(out, "spec.validations[0].expression: Invalid value: \"object.spec.replicas <=\": compilation failed: ERROR: <input>:1:") {
		t.Errorf("a policy that does not compile: err %v\n%s", err, out)
	}
}
