// Package docs checks the documentation against the code.
package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "skiff.dev/apiserver/"

// TestArchitecturePackageTable: every package under pkg/ (from go list) has
// a row in the package table of docs/architecture.md, and every package a
// row names exists. A row naming `pkg/x/...` covers pkg/x and the packages
// under it.
func TestArchitecturePackageTable(t *testing.T) {
	out, err := exec.Command("go", "list", "-find", "-f", "{{.ImportPath}}", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(p, module))
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}

	rows := tableNames(t, filepath.Join("..", "..", "..", "docs", "architecture.md"))
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md has no package table")
	}
	covers := func(row, pkg string) bool {
		if base, ok := strings.CutSuffix(row, "/..."); ok {
			return pkg == base || strings.HasPrefix(pkg, base+"/")
		}
		return row == pkg
	}
	for _, p := range pkgs {
		if !strings.HasPrefix(p, "pkg/") {
			continue
		}
		found := false
		for _, r := range rows {
			found = found || covers(r, p)
		}
		if !found {
			t.Errorf("package %s has no row in the package table of docs/architecture.md", p)
		}
	}
	for _, r := range rows {
		found := false
		for _, p := range pkgs {
			found = found || covers(r, p)
		}
		if !found {
			t.Errorf("docs/architecture.md has a row for %s, which is not a package of the apiserver module", r)
		}
	}
}

var code = regexp.MustCompile("`([^`]+)`")

// tableNames returns the names in the first cell of each row of the table
// under the "## Packages" heading.
func tableNames(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
			continue
		}
		if !in || !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}
