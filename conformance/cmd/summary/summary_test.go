package main

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestGolden renders the two phases of testdata/run into testdata/page.md
// and compares the page with testdata/conformance.golden.md.
func TestGolden(t *testing.T) {
	page := filepath.Join(t.TempDir(), "conformance.md")
	in, err := os.ReadFile("testdata/page.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, in, 0o644); err != nil {
		t.Fatal(err)
	}
	err = mainErr([]string{"-results", "testdata/run", "-doc", page, "-causes", "testdata/causes.json",
		"-date", "2026-11-26T17:42:00Z", "-nodes", "4", "-focus", `\[sig-(api-machinery|network|node|apps)\]`})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/conformance.golden.md"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("page differs from %s (go test -update to rewrite):\n%s", golden, got)
	}
}

func TestReadRunMergesPhases(t *testing.T) {
	r, err := readRun("testdata/run")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]outcome{}
	for _, s := range r.Specs {
		got[s.Name] = s.Outcome
	}
	want := map[string]outcome{
		"[sig-api-machinery] Discovery should validate PreferredVersion for each APIGroup [Conformance]": passed,
		"[sig-network] DNS should provide DNS for services  [Conformance]":                               failed,
		"[sig-node] Pods should be submitted and removed [NodeConformance] [Conformance]":                notRun,
		"[sig-apps] Daemon set [Serial] should rollback without unnecessary restarts [Conformance]":      skipped,
		"[sig-storage] CSI mock volume should work | with a pipe":                                        failed,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outcomes = %v, want %v", got, want)
	}
	if len(r.SuiteFailures) != 1 || r.SuiteFailures[0].Name != "[SynchronizedAfterSuite]" {
		t.Errorf("suite failures = %+v, want the SynchronizedAfterSuite", r.SuiteFailures)
	}
}

func TestFirstFailureLine(t *testing.T) {
	tests := []struct {
		name, message, text string
		wantLine, wantLoc   string
	}{
		{
			name:     "text with ginkgo's marker and location",
			text:     "[FAILED] Unexpected error:\n    <*errors.errorString | 0xc000123>: \n    boom\n    {s: \"boom\"}\nIn [It] at: k8s.io/kubernetes@v1.32.4/test/e2e/x.go:12 @ 11/26/26\n",
			wantLine: "Unexpected error: boom", wantLoc: "k8s.io/kubernetes@v1.32.4/test/e2e/x.go:12",
		},
		{name: "message attribute first", message: "expected 200\ngot 404", text: "[FAILED] other", wantLine: "expected 200"},
		{name: "timed out", text: "\n[TIMEDOUT] A suite timeout occurred\n", wantLine: "A suite timeout occurred"},
		{name: "empty", wantLine: "(no failure message)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, loc := firstFailureLine(tt.message, tt.text)
			if line != tt.wantLine || loc != tt.wantLoc {
				t.Errorf("firstFailureLine() = %q, %q; want %q, %q", line, loc, tt.wantLine, tt.wantLoc)
			}
		})
	}
}

func TestSplice(t *testing.T) {
	tests := []struct {
		name, page, want string
		wantErr          bool
	}{
		{name: "new page", page: "", want: "# Conformance\n\n" + beginMarker + "\nX\n" + endMarker + "\n"},
		{name: "page without markers", page: "# Title\ntext\n", want: "# Title\ntext\n\n" + beginMarker + "\nX\n" + endMarker + "\n"},
		{name: "replaces between the markers", page: "a\n<!-- BEGIN RESULTS -->\nold\n" + endMarker + "\nb\n", want: "a\n" + beginMarker + "\nX\n" + endMarker + "\nb\n"},
		{name: "end before begin", page: endMarker + "\n<!-- BEGIN RESULTS -->\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splice([]byte(tt.page), "X\n")
			if (err != nil) != tt.wantErr {
				t.Fatalf("splice() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && string(got) != tt.want {
				t.Errorf("splice() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCauseOf(t *testing.T) {
	causes := []cause{
		{Match: "[sig-network] DNS", Cause: "dns"},
		{Failure: "SPDY is not served", Cause: "spdy"},
		{Match: "Pods", Failure: "websocket", Cause: "logs"},
	}
	tests := []struct {
		name, test, failure, want string
	}{
		{name: "by name", test: "[sig-network] DNS should work", failure: "timeout", want: "dns"},
		{name: "by failure line", test: "[sig-storage] EmptyDir x", failure: "unable to upgrade connection: SPDY is not served", want: "spdy"},
		{name: "name and failure line", test: "[sig-node] Pods logs", failure: "Failed to open websocket", want: "logs"},
		{name: "name without its failure line", test: "[sig-node] Pods logs", failure: "other", want: "_not analysed yet_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := causeOf(spec{Name: tt.test, Failure: tt.failure}, causes); got != tt.want {
				t.Errorf("causeOf() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadCausesRejectsIncompleteEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "causes.json")
	if err := os.WriteFile(path, []byte(`[{"match": "x"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readCauses(path); err == nil {
		t.Error("readCauses() accepted an entry without a cause")
	}
}

// Two kept runs: a test that failed in the first and passed when it ran
// again alone has the later outcome; one the later run filtered out keeps
// the first run's.
func TestReadRunLaterRunWins(t *testing.T) {
	dir := t.TempDir()
	suite := func(start string, cases string) string {
		return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="Kubernetes e2e suite" time="10" timestamp="` + start + `">` + cases + `</testsuite></testsuites>`
	}
	write := func(name, body string) {
		p := filepath.Join(dir, name, "parallel", "junit_01.xml")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The later run's directory sorts first: the start decides, not the name.
	write("b-sig-apps", suite("2026-11-27T04:30:00",
		`<testcase name="[It] [sig-apps] Job should run [Conformance]" status="failed" time="300"><failure message="timed out"></failure></testcase>`+
			`<testcase name="[It] [sig-apps] Job should fail [Conformance]" status="failed" time="5"><failure message="boom"></failure></testcase>`+
			`<testcase name="[It] [sig-apps] CronJob should run [Conformance]" status="passed" time="5"></testcase>`))
	write("a-rerun", suite("2026-11-27T05:00:00",
		`<testcase name="[It] [sig-apps] Job should run [Conformance]" status="passed" time="60"></testcase>`+
			`<testcase name="[It] [sig-apps] Job should fail [Conformance]" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>`+
			`<testcase name="[It] [sig-apps] CronJob should run [Conformance]" status="failed" time="5"><failure message="later failure"></failure></testcase>`))
	r, err := readRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]outcome{}
	for _, s := range r.Specs {
		got[s.Name] = s.Outcome
	}
	want := map[string]outcome{
		"[sig-apps] Job should run [Conformance]":     passed,
		"[sig-apps] Job should fail [Conformance]":    failed,
		"[sig-apps] CronJob should run [Conformance]": failed,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outcomes = %v, want %v", got, want)
	}
}

// TestAddedUpRuns: a page written from several kept runs says so, names
// them and does not pass their union of focuses off as one run's.
func TestAddedUpRuns(t *testing.T) {
	page := filepath.Join(t.TempDir(), "conformance.md")
	if err := mainErr([]string{"-results", "testdata/run", "-doc", page, "-causes", "testdata/causes.json",
		"-nodes", "4", "-runs", "sig-apps,two-nodes", "-focus", `(\[sig-apps\])|(\[Serial\])`}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"**Added up from 2 runs, not one run: not a conformance result.** The runs kept in `conformance/_output/runs` (sig-apps, two-nodes)",
		", the runs' phases added up\n", "- Cluster (of the latest run):\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "The run was limited") {
		t.Errorf("page calls the runs one limited run:\n%s", got)
	}
}
