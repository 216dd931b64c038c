// Command summary reads the JUnit reports of a `make conformance` run and
// writes its results into docs/conformance.md, between the markers
// "<!-- BEGIN RESULTS -->" and "<!-- END RESULTS -->" (the rest of the
// page is written by hand): passed, failed and skipped counts per SIG
// among the [Conformance] tests, the total out of the release's count, the
// date and the cluster's shape, and each failing test with its first
// failure line and its cause from conformance/causes.json.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if err := mainErr(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
}

func mainErr(args []string) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	var o options
	results := fs.String("results", "", "directory with the run's junit_*.xml files (and nodes.json, version.json)")
	doc := fs.String("doc", "docs/conformance.md", "page to write the results into")
	causes := fs.String("causes", "conformance/causes.json", "known causes of failures: [{\"match\": \"<part of a test name>\", \"failure\": \"<part of the first failure line>\", \"cause\": \"...\"}]")
	date := fs.String("date", "", "date of the run (RFC 3339); default: the reports' start, else now")
	fs.StringVar(&o.Focus, "focus", `\[Conformance\]`, "the FOCUS regexp of the run")
	runs := fs.String("runs", "", "the names of the kept runs whose reports -results holds, comma-separated (run.sh's CONFORMANCE_RUN)")
	fs.IntVar(&o.Nodes, "nodes", 0, "ginkgo's parallel nodes in the parallel phase")
	fs.IntVar(&o.Total, "total", 411, "[Conformance] tests of the release")
	fs.StringVar(&o.KubeVersion, "kube-version", "v1.32.4", "release of e2e.test")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *results == "" {
		return fmt.Errorf("-results is required")
	}
	if *runs != "" {
		o.Runs = strings.Split(*runs, ",")
	}
	r, err := readRun(*results)
	if err != nil {
		return err
	}
	o.Date = time.Now().UTC()
	// ginkgo writes the start in the machine's local time, without a zone.
	if d, err := time.ParseInLocation("2006-01-02T15:04:05", r.Started, time.Local); err == nil {
		o.Date = d.UTC()
	}
	if *date != "" {
		d, err := time.Parse(time.RFC3339, *date)
		if err != nil {
			return fmt.Errorf("-date: %w", err)
		}
		o.Date = d.UTC()
	}
	if o.Causes, err = readCauses(*causes); err != nil {
		return err
	}
	o.Shape = clusterShape(filepath.Join(*results, "nodes.json"), filepath.Join(*results, "version.json"))
	section := render(r, o)
	old, err := os.ReadFile(*doc)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	page, err := splice(old, section)
	if err != nil {
		return fmt.Errorf("%s: %w", *doc, err)
	}
	if err := os.WriteFile(*doc, page, 0o644); err != nil {
		return err
	}
	t := tally(r.Specs)
	fmt.Printf("summary: %d [Conformance] tests ran of %d: %d passed, %d failed, %d skipped; written to %s\n",
		t.all.ran(), o.Total, t.all.Passed, t.all.Failed, t.all.Skipped, *doc)
	return nil
}

// cause says why tests fail on skiff: those whose name contains Match and
// whose first failure line contains Failure (an empty one matches all).
type cause struct {
	Match   string `json:"match,omitempty"`
	Failure string `json:"failure,omitempty"`
	Cause   string `json:"cause"`
}

func readCauses(path string) ([]cause, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cs []cause
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, c := range cs {
		if strings.TrimSpace(c.Match) == "" && strings.TrimSpace(c.Failure) == "" || strings.TrimSpace(c.Cause) == "" {
			return nil, fmt.Errorf("%s: entry %d needs a cause and a match or a failure", path, i)
		}
	}
	return cs, nil
}

const (
	beginMarker = "<!-- BEGIN RESULTS: written by conformance/cmd/summary; edit conformance/causes.json, not this part -->"
	endMarker   = "<!-- END RESULTS -->"
)

// splice puts the results section between the markers of page; a page
// without them gets a title and the section.
func splice(page []byte, section string) ([]byte, error) {
	s := string(page)
	i, j := strings.Index(s, "<!-- BEGIN RESULTS"), strings.Index(s, endMarker)
	switch {
	case i < 0 && j < 0:
		if strings.TrimSpace(s) == "" {
			s = "# Conformance\n"
		}
		return []byte(strings.TrimRight(s, "\n") + "\n\n" + beginMarker + "\n" + section + endMarker + "\n"), nil
	case i < 0 || j < i:
		return nil, fmt.Errorf("the results markers are out of order or one is missing")
	}
	return []byte(s[:i] + beginMarker + "\n" + section + s[j:]), nil
}
