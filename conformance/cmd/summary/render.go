package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// options are what the page says about the run besides its reports.
type options struct {
	Focus string
	// Runs names the kept runs (CONFORMANCE_RUN) whose reports are added
	// up on the page; empty or one: a single run.
	Runs        []string
	Nodes       int
	Total       int
	KubeVersion string
	Date        time.Time
	Shape       []string
	Causes      []cause
}

// DefaultFocus is the focus of a full run.
const DefaultFocus = `\[Conformance\]`

type counts struct{ Passed, Failed, Skipped, NotRun int }

func (c counts) ran() int { return c.Passed + c.Failed + c.Skipped }

func (c *counts) add(o outcome) {
	switch o {
	case passed:
		c.Passed++
	case failed:
		c.Failed++
	case skipped:
		c.Skipped++
	default:
		c.NotRun++
	}
}

type tallies struct {
	all   counts
	bySIG map[string]*counts
	sigs  []string
	// conformance are the [Conformance] specs, in report order.
	conformance []spec
}

var sigName = regexp.MustCompile(`\[(sig-[a-z0-9-]+)\]`)

// sigOf is the first [sig-xxx] of a test's name.
func sigOf(name string) string {
	if m := sigName.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return "(no sig)"
}

func isConformance(name string) bool { return strings.Contains(name, "[Conformance]") }

func tally(specs []spec) tallies {
	t := tallies{bySIG: map[string]*counts{}}
	for _, s := range specs {
		if !isConformance(s.Name) {
			continue
		}
		t.conformance = append(t.conformance, s)
		sig := sigOf(s.Name)
		c, ok := t.bySIG[sig]
		if !ok {
			c = &counts{}
			t.bySIG[sig] = c
			t.sigs = append(t.sigs, sig)
		}
		c.add(s.Outcome)
		t.all.add(s.Outcome)
	}
	sort.Strings(t.sigs)
	return t
}

// render writes the results section of the page.
func render(r *run, o options) string {
	t := tally(r.Specs)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("\n## Last run\n\n")
	added := len(o.Runs) > 1
	if added {
		p("**Added up from %d runs, not one run: not a conformance result.** The runs kept in `conformance/_output/runs` (%s), each with a `FOCUS` of its own, together ran %d of the %d [Conformance] tests of %s; of a test that ran in several, the latest run's outcome counts, and a test none of them ran is counted as not run below.\n\n",
			len(o.Runs), strings.Join(o.Runs, ", "), t.all.ran(), o.Total, o.KubeVersion)
	} else if o.Focus != DefaultFocus {
		p("**This is a subset, not a conformance result.** The run was limited with `FOCUS='%s'`: %d of the %d [Conformance] tests of %s ran; the others are counted as not run below.\n\n",
			o.Focus, t.all.ran(), o.Total, o.KubeVersion)
	}
	if last, err := time.ParseInLocation("2006-01-02T15:04:05", r.Last, time.Local); added && err == nil && last.UTC().After(o.Date) {
		p("- Dates: the first run started %s, the last %s\n", o.Date.Format("2006-01-02 15:04 MST"), last.UTC().Format("2006-01-02 15:04 MST"))
	} else {
		p("- Date: %s\n", o.Date.Format("2006-01-02 15:04 MST"))
	}
	subset := added || o.Focus != DefaultFocus
	p("- Suite: upstream's `e2e.test` %s", o.KubeVersion)
	if !subset {
		p(", focus `%s`", o.Focus)
	}
	if o.Nodes > 0 {
		p(", the parallel tests on %d ginkgo nodes, then the `[Serial]` ones on one", o.Nodes)
	}
	p("\n")
	if r.Seconds > 0 {
		p("- Duration: %s", (time.Duration(r.Seconds * float64(time.Second))).Round(time.Second))
		if added {
			p(", the runs' phases added up")
		}
		p("\n")
	}
	if added {
		p("- Cluster (of the latest run):\n")
	} else {
		p("- Cluster:\n")
	}
	for _, l := range o.Shape {
		p("  - %s\n", l)
	}
	p("- Result: **%d passed of %d** [Conformance] tests; %d failed, %d skipped at run time, %d not run.\n",
		t.all.Passed, o.Total, t.all.Failed, t.all.Skipped, o.Total-t.all.ran())
	if n := len(t.conformance); n != o.Total {
		p("  (The reports list %d [Conformance] tests, not %d.)\n", n, o.Total)
	}

	p("\n### Per SIG\n\n")
	p("| SIG | passed | failed | skipped | not run |\n|---|---:|---:|---:|---:|\n")
	for _, sig := range t.sigs {
		c := t.bySIG[sig]
		p("| %s | %d | %d | %d | %d |\n", sig, c.Passed, c.Failed, c.Skipped, c.NotRun)
	}
	p("| **total** | **%d** | **%d** | **%d** | **%d** |\n", t.all.Passed, t.all.Failed, t.all.Skipped, t.all.NotRun)

	p("\n### Failures\n\n")
	var fails []spec
	for _, s := range t.conformance {
		if s.Outcome == failed {
			fails = append(fails, s)
		}
	}
	if len(fails) == 0 {
		p("None.\n")
	} else {
		p("The cause column comes from `conformance/causes.json`; \"not analysed yet\" marks a failure nobody has looked into.\n\n")
		p("| test | first failure line | cause |\n|---|---|---|\n")
		for _, s := range fails {
			line := s.Failure
			if s.Location != "" {
				line += " (" + shortLocation(s.Location) + ")"
			}
			p("| %s | %s | %s |\n", cell(s.Name), cell(line), cell(causeOf(s, o.Causes)))
		}
	}
	var skips []spec
	for _, s := range t.conformance {
		if s.Outcome == skipped {
			skips = append(skips, s)
		}
	}
	if len(skips) > 0 {
		p("\n### Skipped at run time\n\n| test | reason |\n|---|---|\n")
		for _, s := range skips {
			p("| %s | %s |\n", cell(s.Name), cell(s.Reason))
		}
	}
	if subset && t.all.Passed > 0 {
		p("\n### Passed\n\n")
		for _, s := range t.conformance {
			if s.Outcome == passed {
				p("- %s\n", cell(s.Name))
			}
		}
	}
	if len(r.SuiteFailures) > 0 {
		p("\n### Suite-level failures\n\n| node | first failure line |\n|---|---|\n")
		for _, s := range r.SuiteFailures {
			p("| %s | %s |\n", cell(s.Name), cell(s.Failure))
		}
	}
	p("\n")
	return b.String()
}

// causeOf is the first cause that matches the failed spec.
func causeOf(s spec, causes []cause) string {
	for _, c := range causes {
		if strings.Contains(s.Name, c.Match) && strings.Contains(s.Failure, c.Failure) {
			return c.Cause
		}
	}
	return "_not analysed yet_"
}

// shortLocation keeps the path from the module's name on:
// k8s.io/kubernetes@v1.32.4/test/e2e/x.go:12 -> test/e2e/x.go:12.
func shortLocation(loc string) string {
	if i := strings.Index(loc, "/test/e2e/"); i >= 0 {
		return loc[i+1:]
	}
	return loc
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	s = strings.ReplaceAll(s, ">", "&gt;")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
