package app

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/printers"
)

// EventsOptions are the flags of skiffctl events.
type EventsOptions struct {
	AllNamespaces bool
	For           string
	Types         []string
	Watch         bool
	NoHeaders     bool
}

// NewEventsCommand returns skiffctl events.
func NewEventsCommand(f *cli.Factory) *cobra.Command {
	o := &EventsOptions{}
	cmd := &cobra.Command{
		Use:   "events [--for TYPE/NAME] [--types Warning,Normal] [-w]",
		Short: "List Events, oldest first, as kubectl events does",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr(), time.Now)
		},
	}
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Events of every namespace.")
	cmd.Flags().StringVar(&o.For, "for", "", "Only the Events of this object, as TYPE/NAME (e.g. pod/nginx).")
	cmd.Flags().StringSliceVar(&o.Types, "types", nil, "Only these event types (Normal, Warning).")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for new Events.")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "Leave out the header line.")
	return cmd
}

// Run lists (and watches) the Events.
func (o *EventsOptions) Run(ctx context.Context, f *cli.Factory, out, errOut io.Writer, now func() time.Time) error {
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	if o.AllNamespaces {
		ns = ""
	}
	sel := fields.Set{}
	if o.For != "" {
		kind, name, ok := strings.Cut(o.For, "/")
		if !ok || name == "" {
			return fmt.Errorf("--for=%s: use TYPE/NAME, e.g. pod/nginx", o.For)
		}
		r, err := f.NewResolver()
		if err != nil {
			return err
		}
		m, err := r.Mapping(kind)
		if err != nil {
			return err
		}
		sel["involvedObject.kind"] = m.GroupVersionKind.Kind
		sel["involvedObject.name"] = name
	}
	cs, err := f.Clientset()
	if err != nil {
		return err
	}
	opts := metav1.ListOptions{FieldSelector: sel.AsSelector().String()}
	list, err := cs.CoreV1().Events(ns).List(ctx, opts)
	if err != nil {
		return err
	}
	items := o.filter(list.Items)
	c := printers.NewColumns(out)
	if err := o.Print(c, items, now(), !o.NoHeaders && (len(items) > 0 || o.Watch)); err != nil {
		return err
	}
	if len(items) == 0 && !o.Watch {
		if ns == "" {
			fmt.Fprintln(errOut, "No events found.")
		} else {
			fmt.Fprintf(errOut, "No events found in %s namespace.\n", ns)
		}
		return nil
	}
	if !o.Watch {
		return nil
	}
	opts.ResourceVersion = list.ResourceVersion
	w, err := cs.CoreV1().Events(ns).Watch(ctx, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			e, isEvent := ev.Object.(*corev1.Event)
			if !isEvent || ev.Type == watch.Deleted || len(o.filter([]corev1.Event{*e})) == 0 {
				continue
			}
			c.Add(o.row(*e, now())...)
			if err := c.Flush(); err != nil {
				return err
			}
		}
	}
}

// Print queues the header (if header) and one row per Event, oldest
// first, and flushes.
func (o *EventsOptions) Print(c *printers.Columns, items []corev1.Event, now time.Time, header bool) error {
	sort.SliceStable(items, func(i, j int) bool { return lastSeen(items[i]).Before(lastSeen(items[j])) })
	if header {
		h := []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}
		if o.AllNamespaces {
			h = append([]string{"NAMESPACE"}, h...)
		}
		c.Add(h...)
	}
	for _, e := range items {
		c.Add(o.row(e, now)...)
	}
	return c.Flush()
}

func (o *EventsOptions) filter(items []corev1.Event) []corev1.Event {
	if len(o.Types) == 0 {
		return items
	}
	var out []corev1.Event
	for _, e := range items {
		for _, t := range o.Types {
			if strings.EqualFold(e.Type, t) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func (o *EventsOptions) row(e corev1.Event, now time.Time) []string {
	seen := "<unknown>"
	if t := lastSeen(e); !t.IsZero() {
		seen = duration.HumanDuration(now.Sub(t))
	}
	object := e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name
	row := []string{seen, e.Type, e.Reason, object, strings.TrimSpace(e.Message)}
	if o.AllNamespaces {
		row = append([]string{e.Namespace}, row...)
	}
	return row
}

func lastSeen(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
