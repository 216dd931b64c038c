package app

import (
	"bytes"
	"strings"
	"testing"

	"skiff.dev/apiserver/pkg/server"
)

// --help names every built-in group-version, wrapped at word boundaries.
func TestHelpListsServedGroupVersions(t *testing.T) {
	cmd := NewAPIServerCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(out.String()) {
		words[strings.TrimRight(w, ",;")] = true
	}
	gvs := server.ServedGroupVersions()
	if len(gvs) < 20 || gvs[0] != "core/v1" {
		t.Fatalf("served group-versions: %v", gvs)
	}
	for _, gv := range append(gvs, "authentication.k8s.io/v1", "apps/v1", "batch/v1", "metrics.k8s.io/v1beta1") {
		if !words[gv] {
			t.Errorf("--help does not name %s:\n%s", gv, out.String())
		}
	}
}
