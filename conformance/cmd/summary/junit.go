package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The JUnit XML that e2e.test writes with --report-dir (ginkgo's reporter,
// failure messages only in the element's text).
type junitSuites struct {
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Time      float64     `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Status  string        `xml:"status,attr"`
	Time    float64       `xml:"time,attr"`
	Skipped *junitMessage `xml:"skipped"`
	Failure *junitMessage `xml:"failure"`
	Error   *junitMessage `xml:"error"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// outcome of one spec over every report of a run.
type outcome int

// A spec filtered out of one phase and run in the other has the outcome of
// the phase that ran it; a spec that ran in several runs (the kept subsets
// of run.sh's CONFORMANCE_RUN, a test run again alone) has the outcome of
// the latest run that ran it (by the reports' start).
const (
	notRun  outcome = iota // filtered out by focus or skip
	skipped                // skipped at run time (e2eskipper)
	passed
	failed
)

// spec is one test of the suite, as the run ended for it.
type spec struct {
	Name    string // without ginkgo's "[It] "
	Outcome outcome
	Seconds float64
	// Failure is the first line of the failure and Location where it
	// happened, for a failed spec; Reason why it was skipped at run time.
	Failure, Location, Reason string
}

// run is every report of a conformance run merged.
type run struct {
	Specs []spec
	// SuiteFailures are the suite-level nodes (BeforeSuite, AfterSuite,
	// ...) that failed.
	SuiteFailures []spec
	Seconds       float64
	Started       string
	// Last is the start of the latest report.
	Last string
}

// readRun reads every junit_*.xml file under dir (one per phase).
func readRun(dir string) (*run, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "junit_") && strings.HasSuffix(d.Name(), ".xml") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no junit_*.xml under %s", dir)
	}
	sort.Strings(files)
	r := &run{}
	byName := map[string]*spec{}
	started := map[string]string{} // spec name: start of the report that ran it
	var order []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var js junitSuites
		if err := xml.Unmarshal(b, &js); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, s := range js.Suites {
			r.Seconds += s.Time
			if r.Started == "" || (s.Timestamp != "" && s.Timestamp < r.Started) {
				r.Started = s.Timestamp
			}
			if s.Timestamp > r.Last {
				r.Last = s.Timestamp
			}
			for _, c := range s.Cases {
				sp, isIt := fromCase(c)
				if !isIt {
					if sp.Outcome == failed {
						r.SuiteFailures = append(r.SuiteFailures, sp)
					}
					continue
				}
				prev, ok := byName[sp.Name]
				if !ok {
					order = append(order, sp.Name)
					byName[sp.Name] = &sp
					started[sp.Name] = s.Timestamp
					continue
				}
				if later(sp, s.Timestamp, *prev, started[sp.Name]) {
					*prev = sp
					started[sp.Name] = s.Timestamp
				}
			}
		}
	}
	for _, n := range order {
		r.Specs = append(r.Specs, *byName[n])
	}
	return r, nil
}

// later says whether sp (from a report started at start) replaces prev
// (from one started at prevStart): a spec that ran replaces one that did not;
// of two that ran, the later report's; else the higher outcome (failed over
// passed over skipped).
func later(sp spec, start string, prev spec, prevStart string) bool {
	ran := func(o outcome) bool { return o != notRun }
	switch {
	case !ran(sp.Outcome):
		return false
	case !ran(prev.Outcome):
		return true
	case start != prevStart:
		return start > prevStart
	}
	return sp.Outcome > prev.Outcome
}

var leafType = regexp.MustCompile(`^\[([A-Za-z]+)\]\s*`)

// fromCase reads one test case; isIt is false for suite-level nodes.
func fromCase(c junitCase) (sp spec, isIt bool) {
	sp.Name, isIt = c.Name, true
	if m := leafType.FindStringSubmatch(c.Name); m != nil {
		isIt = m[1] == "It"
		if isIt {
			sp.Name = strings.TrimPrefix(c.Name, m[0])
		}
	}
	sp.Seconds = c.Time
	switch {
	case c.Failure != nil || c.Error != nil:
		m := c.Failure
		if m == nil {
			m = c.Error
		}
		sp.Outcome = failed
		sp.Failure, sp.Location = firstFailureLine(m.Message, m.Text)
	case c.Skipped != nil:
		// "skipped - <reason>" when the test skipped itself; "skipped"
		// (filtered out) or "pending" when it did not run.
		if reason, ok := strings.CutPrefix(c.Skipped.Message, "skipped - "); ok {
			sp.Outcome, sp.Reason = skipped, firstLine(reason)
		}
	case c.Status == "passed":
		sp.Outcome = passed
	default:
		sp.Outcome = failed
		sp.Failure = "ended " + c.Status
	}
	return sp, isIt
}

var (
	failurePrefix = regexp.MustCompile(`^\[(FAILED|TIMEDOUT|PANICKED!?|INTERRUPTED|ABORTED)\]\s*`)
	locationLine  = regexp.MustCompile(`^In \[[A-Za-z]+\] at: (\S+)`)
	gomegaType    = regexp.MustCompile(`<\*?[^<>]*\| 0x[0-9a-f]+>:?\s*`)
)

// firstFailureLine is the first line of a failure (from the message
// attribute, else the element's text without ginkgo's [FAILED] marker),
// continued while it ends with a colon ("Unexpected error:" is followed by
// the error), without gomega's "<*type | 0xc000>:" noise; and the
// file:line where it happened.
func firstFailureLine(message, text string) (line, location string) {
	for _, l := range strings.Split(text, "\n") {
		if m := locationLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			location = m[1]
			break
		}
	}
	src := text
	if strings.TrimSpace(message) != "" {
		src = message
	}
	var parts []string
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(failurePrefix.ReplaceAllString(strings.TrimSpace(l), ""))
		l = strings.TrimSpace(gomegaType.ReplaceAllString(l, ""))
		if l == "" || locationLine.MatchString(l) {
			if len(parts) > 0 && l != "" {
				break
			}
			continue
		}
		parts = append(parts, l)
		if !strings.HasSuffix(l, ":") || len(parts) == 4 {
			break
		}
	}
	if len(parts) == 0 {
		return "(no failure message)", location
	}
	return strings.Join(parts, " "), location
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
