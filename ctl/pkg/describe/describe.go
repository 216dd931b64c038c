package describe

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Owner is one link of an object's owner chain.
type Owner struct {
	Kind, Name string
	// Missing is set when the owner no longer exists.
	Missing bool
}

// Input is everything Describe prints.
type Input struct {
	Object *unstructured.Unstructured
	// Owners is the controller chain, nearest first.
	Owners []Owner
	Events []corev1.Event
	// Controls lists the objects this one controls ("ReplicaSet/web-7d9c").
	Controls []string
	// Now is the time ages are computed against.
	Now time.Time
}

// Describe writes in to w.
func Describe(w io.Writer, in Input) error {
	p := &writer{w: w}
	o := in.Object
	p.field(0, "Name", o.GetName())
	if ns := o.GetNamespace(); ns != "" {
		p.field(0, "Namespace", ns)
	}
	p.field(0, "Kind", o.GetKind())
	p.field(0, "API Version", o.GetAPIVersion())
	p.multi(0, "Labels", keyValues(o.GetLabels(), "="))
	p.multi(0, "Annotations", keyValues(o.GetAnnotations(), ": "))
	ts := o.GetCreationTimestamp()
	p.field(0, "Created", fmt.Sprintf("%s (%s ago)", ts.UTC().Format(time.RFC3339), age(in.Now, ts.Time)))
	if dt := o.GetDeletionTimestamp(); dt != nil {
		p.field(0, "Deleting Since", dt.UTC().Format(time.RFC3339))
	}
	if fins := o.GetFinalizers(); len(fins) > 0 {
		p.field(0, "Finalizers", strings.Join(fins, ", "))
	}
	if len(in.Owners) > 0 {
		p.field(0, "Controlled By", ownerString(in.Owners[0]))
		chain := []string{o.GetKind() + "/" + o.GetName()}
		for _, ow := range in.Owners {
			chain = append(chain, ownerString(ow))
		}
		p.field(0, "Owner Chain", strings.Join(chain, " <- "))
	}
	if len(in.Controls) > 0 {
		p.multi(0, "Controls", in.Controls)
	}
	for _, section := range []string{"spec", "data", "stringData", "status"} {
		v, ok := o.Object[section]
		if !ok {
			continue
		}
		if o.GetKind() == "Secret" {
			v = hideSecretValues(v)
		}
		p.value(0, smartLabel(section), v, section == "data" || section == "stringData")
	}
	if o.GetKind() == "Pod" {
		p.podTimeline(o, ts.Time)
	}
	p.events(in.Events, in.Now)
	return p.err
}

func ownerString(o Owner) string {
	s := o.Kind + "/" + o.Name
	if o.Missing {
		s += " (gone)"
	}
	return s
}

type writer struct {
	w   io.Writer
	err error
}

func (p *writer) printf(format string, args ...any) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, format, args...)
}

// field prints "Label:  value" with the value in column 14 at depth 0,
// as kubectl aligns its top-level fields.
func (p *writer) field(depth int, label, value string) {
	indent := strings.Repeat("  ", depth)
	key := indent + label + ":"
	pad := 14 - len(key)
	if pad < 2 {
		pad = 2
	}
	p.printf("%s%s%s\n", key, strings.Repeat(" ", pad), value)
}

func (p *writer) multi(depth int, label string, lines []string) {
	if len(lines) == 0 {
		p.field(depth, label, "<none>")
		return
	}
	p.field(depth, label, lines[0])
	for _, l := range lines[1:] {
		p.printf("%s%s\n", strings.Repeat(" ", 14), l)
	}
}

// verbatimKeys are the fields whose keys are data (labels, config), not
// schema field names, and are printed as they are.
var verbatimKeys = map[string]bool{
	"labels": true, "annotations": true, "matchLabels": true, "selector": true,
	"nodeSelector": true, "data": true, "stringData": true, "binaryData": true,
	"capacity": true, "allocatable": true, "limits": true, "requests": true,
}

// scalarMap reports a map whose values are all scalars, such as labels.
func scalarMap(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, val := range m {
		switch val.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// hideSecretValues replaces a Secret's values by their sizes.
func hideSecretValues(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		out[k] = fmt.Sprintf("%d bytes", len(fmt.Sprint(val)))
	}
	return out
}

// value prints a nested value with readable labels; the keys of a map
// are printed as they are when verbatim is set.
func (p *writer) value(depth int, label string, v any, verbatim bool) {
	indent := strings.Repeat("  ", depth)
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			p.printf("%s%s:  <none>\n", indent, label)
			return
		}
		p.printf("%s%s:\n", indent, label)
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if t[k] == nil {
				continue
			}
			name := smartLabel(k)
			if verbatim {
				name = k
			}
			p.value(depth+1, name, t[k], verbatimKeys[k] && scalarMap(t[k]))
		}
	case []any:
		if len(t) == 0 {
			p.printf("%s%s:  <none>\n", indent, label)
			return
		}
		p.printf("%s%s:\n", indent, label)
		for _, item := range t {
			if m, ok := item.(map[string]any); ok {
				p.listItem(depth+1, m)
				continue
			}
			p.printf("%s  %v\n", indent, item)
		}
	default:
		p.printf("%s%s:  %v\n", indent, label, t)
	}
}

// listItem prints a map in a list; its name (or first key) leads.
func (p *writer) listItem(depth int, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "name") != (keys[j] == "name") {
			return keys[i] == "name"
		}
		return keys[i] < keys[j]
	})
	indent := strings.Repeat("  ", depth)
	for i, k := range keys {
		if i == 0 {
			if _, scalar := m[k].(map[string]any); !scalar {
				if _, list := m[k].([]any); !list {
					p.printf("%s- %s:  %v\n", indent, smartLabel(k), m[k])
					continue
				}
			}
			p.printf("%s-\n", indent)
		}
		p.value(depth+1, smartLabel(k), m[k], verbatimKeys[k] && scalarMap(m[k]))
	}
}

// podTimeline prints the pod's conditions in the order they happened,
// with the time each took from the pod's creation.
func (p *writer) podTimeline(o *unstructured.Unstructured, created time.Time) {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	type step struct {
		name, status, reason string
		at                   time.Time
	}
	var steps []step
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		s := step{name: str(m["type"]), status: str(m["status"]), reason: str(m["reason"])}
		if t, err := time.Parse(time.RFC3339, str(m["lastTransitionTime"])); err == nil {
			s.at = t
		}
		steps = append(steps, s)
	}
	if len(steps) == 0 {
		return
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at.Before(steps[j].at) })
	p.printf("Path:\n")
	line := func(cells ...string) {
		p.printf("%s\n", strings.TrimRight(fmt.Sprintf("  %-16s %-7s %-9s %s", cells[0], cells[1], cells[2], cells[3]), " "))
	}
	line("STEP", "STATUS", "AFTER", "REASON")
	line("Created", "True", "0s", "")
	for _, s := range steps {
		after := "-"
		if !s.at.IsZero() {
			after = s.at.Sub(created).Round(time.Second).String()
		}
		line(s.name, s.status, after, s.reason)
	}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func (p *writer) events(events []corev1.Event, now time.Time) {
	if len(events) == 0 {
		p.printf("Events:       <none>\n")
		return
	}
	sort.SliceStable(events, func(i, j int) bool { return eventTime(events[i]).Before(eventTime(events[j])) })
	rows := [][]string{{"Type", "Reason", "Age", "From", "Message"}, {"----", "------", "----", "----", "-------"}}
	for _, e := range events {
		rows = append(rows, []string{e.Type, e.Reason, eventAge(e, now), eventSource(e), strings.TrimSpace(e.Message)})
	}
	widths := make([]int, 5)
	for _, r := range rows {
		for i, c := range r[:4] {
			widths[i] = max(widths[i], len(c))
		}
	}
	p.printf("Events:\n")
	for _, r := range rows {
		line := "  "
		for i, c := range r {
			if i < 4 {
				line += c + strings.Repeat(" ", widths[i]-len(c)+2)
			} else {
				line += c
			}
		}
		p.printf("%s\n", strings.TrimRight(line, " "))
	}
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// eventAge prints "10s", or "2m (x3 over 5m)" for a repeated event, as
// kubectl describe does.
func eventAge(e corev1.Event, now time.Time) string {
	last := eventTime(e)
	first := e.FirstTimestamp.Time
	if first.IsZero() {
		first = last
	}
	count := e.Count
	if e.Series != nil {
		count = e.Series.Count
	}
	if count > 1 {
		return fmt.Sprintf("%s (x%d over %s)", age(now, last), count, age(now, first))
	}
	return age(now, last)
}

func eventSource(e corev1.Event) string {
	src := e.Source.Component
	if src == "" {
		src = e.ReportingController
	}
	if e.Source.Host != "" {
		src += ", " + e.Source.Host
	}
	return src
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func keyValues(m map[string]string, sep string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		v := m[k]
		if len(v) > 120 {
			v = v[:120] + "..."
		}
		out[i] = k + sep + v
	}
	return out
}

// smartLabel turns "containerPort" into "Container Port", as kubectl's
// generic describer does.
func smartLabel(s string) string {
	var b strings.Builder
	runes := []rune(s)
	for i, r := range runes {
		if i == 0 {
			b.WriteRune(unicode.ToUpper(r))
			continue
		}
		prevLower := unicode.IsLower(runes[i-1]) || unicode.IsDigit(runes[i-1])
		nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
		if unicode.IsUpper(r) && (prevLower || nextLower && unicode.IsUpper(runes[i-1])) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ControllerOf returns the controller owner reference of o, if any.
func ControllerOf(o *unstructured.Unstructured) *metav1.OwnerReference {
	for _, r := range o.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			ref := r
			return &ref
		}
	}
	refs := o.GetOwnerReferences()
	if len(refs) > 0 {
		return &refs[0]
	}
	return nil
}
