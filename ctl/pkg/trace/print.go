package trace

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Print writes each trace as a timeline: every step's offset from the
// first, its duration, the component that recorded it and where it was
// read, the slowest step marked with "<- slowest".
func Print(w io.Writer, traces []Trace) error {
	for i, tr := range traces {
		if i > 0 {
			fmt.Fprintln(w)
		}
		node := tr.Node
		if node == "" {
			node = "<no node>"
		}
		fmt.Fprintf(w, "pod/%s (namespace %s, node %s, %s): %s from first to last step\n",
			tr.Pod, tr.Namespace, node, orPending(corev1.PodPhase(tr.Phase)), fmtDur(tr.Total))
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "AT\tDURATION\tSTEP\tBY\tFROM\tDETAIL")
		coarse := false
		for i, s := range tr.Steps {
			dur := fmtDur(s.Duration)
			if i > 0 && (s.Precision >= time.Second || tr.Steps[i-1].Precision >= time.Second) {
				dur, coarse = "~"+dur, true
			}
			if s.Slowest {
				dur += " <- slowest"
			}
			d := s.Detail
			if s.Skew > 0 {
				d = strings.TrimPrefix(d+fmt.Sprintf("; stamped %s before the step it follows (clock skew)", fmtDur(s.Skew)), "; ")
			}
			fmt.Fprintf(tw, "+%s\t%s\t%s\t%s\t%s\t%s\n", fmtDur(s.Offset), dur, s.Name, s.Component, s.Source, d)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if coarse {
			fmt.Fprintln(w, "  ~: one end of the step is a record the API keeps to the second (creationTimestamp, a condition, an event without eventTime)")
		}
		for _, m := range tr.Missing {
			fmt.Fprintf(w, "  not yet: %s\n", m)
		}
	}
	return nil
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}
