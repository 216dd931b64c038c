package componentbase

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goModJSON is the part of `go mod edit -json` and `go work edit -json` read here.
type goModJSON struct {
	Module  struct{ Path string }
	Require []struct{ Path string }
	Use     []struct{ DiskPath string }
}

func goEditJSON(t *testing.T, dir string, args ...string) goModJSON {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr)
	}
	var m goModJSON
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return m
}

// requireCycle returns one cycle in the graph of requires between modules
// (module path -> the modules it requires), as the list of modules along it with
// the first repeated at the end, or nil when there is none.
func requireCycle(graph map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(string) []string
	visit = func(m string) []string {
		state[m] = onPath
		path = append(path, m)
		for _, r := range graph[m] {
			switch state[r] {
			case onPath:
				i := slices.Index(path, r)
				return append(slices.Clone(path[i:]), r)
			case unseen:
				if c := visit(r); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[m] = done
		return nil
	}
	roots := make([]string, 0, len(graph))
	for m := range graph {
		roots = append(roots, m)
	}
	slices.Sort(roots)
	for _, m := range roots {
		if state[m] == unseen {
			if c := visit(m); c != nil {
				return c
			}
		}
	}
	return nil
}

func TestRequireCycle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  []string
	}{
		{"none", map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": nil}, nil},
		{"two modules require each other", map[string][]string{"a": {"b"}, "b": {"a"}}, []string{"a", "b", "a"}},
		{"three", map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, []string{"a", "b", "c", "a"}},
		{"self", map[string][]string{"a": {"a"}}, []string{"a", "a"}},
	} {
		if got := requireCycle(tc.graph); !slices.Equal(got, tc.want) {
			t.Errorf("%s: requireCycle = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWorkspaceModulesHaveNoRequireCycle reads go.work and every go.mod it uses
// and fails when a workspace module requires, directly or through others, a
// module that requires it back (issue 27: apiserver and ctl used to require each
// other).
func TestWorkspaceModulesHaveNoRequireCycle(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	work := goEditJSON(t, root, "work", "edit", "-json")
	if len(work.Use) < 2 {
		t.Fatalf("go.work in %s uses %d modules, want the whole workspace", root, len(work.Use))
	}
	mods := map[string]goModJSON{}
	for _, u := range work.Use {
		m := goEditJSON(t, root, "mod", "edit", "-json", filepath.Join(u.DiskPath, "go.mod"))
		mods[m.Module.Path] = m
	}
	if _, ok := mods["skiff.dev/component-base"]; !ok {
		t.Fatalf("go.work does not use component-base: %v", work.Use)
	}
	graph := map[string][]string{}
	for path, m := range mods {
		graph[path] = nil
		for _, r := range m.Require {
			if _, inWorkspace := mods[r.Path]; inWorkspace {
				graph[path] = append(graph[path], r.Path)
			}
		}
	}
	if c := requireCycle(graph); c != nil {
		t.Fatalf("workspace modules require each other: %s", strings.Join(c, " -> "))
	}
}
