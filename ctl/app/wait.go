package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/jsonpath"

	"skiff.dev/ctl/pkg/cli"
)

// WaitOptions are the flags of skiffctl wait.
type WaitOptions struct {
	For       string
	Timeout   time.Duration
	Selector  string
	All       bool
	Files     []string
	Recursive bool
}

// NewWaitCommand returns skiffctl wait.
func NewWaitCommand(f *cli.Factory) *cobra.Command {
	o := &WaitOptions{Timeout: 30 * time.Second}
	cmd := &cobra.Command{
		Use:   "wait (TYPE NAME | TYPE/NAME | TYPE -l SELECTOR | -f FILE) --for=condition=C[=VALUE] | --for=delete | --for=jsonpath='{EXPR}'=VALUE",
		Short: "Wait until objects have a condition, a field value, or are gone",
		Example: `  skiffctl wait pod/nginx --for=condition=Ready --timeout=60s
  skiffctl wait deploy/web --for=condition=Available=True
  skiffctl wait pod/nginx --for=jsonpath='{.status.phase}'=Running
  skiffctl wait pod/nginx --for=delete`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
		ValidArgsFunction: completeResources(f),
	}
	fs := cmd.Flags()
	fs.StringVar(&o.For, "for", "", "condition=NAME[=VALUE] (VALUE defaults to True), delete, or jsonpath='{EXPR}'=VALUE.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for each object.")
	fs.StringVarP(&o.Selector, "selector", "l", "", "Wait for the objects with these labels.")
	fs.BoolVar(&o.All, "all", false, "Wait for every object of the type in the namespace.")
	addFileFlags(cmd, &o.Files, &o.Recursive)
	return cmd
}

// condition is a parsed --for.
type condition struct {
	desc  string
	check func(*unstructured.Unstructured) (bool, string)
	// gone is true for --for=delete.
	gone bool
}

// parseFor parses --for.
func parseFor(s string) (*condition, error) {
	switch {
	case s == "delete":
		return &condition{desc: "deleted", gone: true}, nil
	case strings.HasPrefix(s, "condition="):
		spec := strings.TrimPrefix(s, "condition=")
		name, value, ok := strings.Cut(spec, "=")
		if !ok {
			value = "True"
		}
		if name == "" {
			return nil, fmt.Errorf("--for=%s: name the condition, e.g. --for=condition=Ready", s)
		}
		return &condition{desc: "condition met", check: func(u *unstructured.Unstructured) (bool, string) {
			return conditionIs(u, name, value)
		}}, nil
	case strings.HasPrefix(s, "jsonpath="):
		spec := strings.TrimPrefix(s, "jsonpath=")
		i := strings.LastIndex(spec, "}=")
		if i < 0 || !strings.HasPrefix(spec, "{") {
			return nil, fmt.Errorf("--for=%s: use jsonpath='{.status.phase}'=Running", s)
		}
		expr, want := spec[:i+1], spec[i+2:]
		jp := jsonpath.New("wait").AllowMissingKeys(true)
		if err := jp.Parse(expr); err != nil {
			return nil, fmt.Errorf("--for: bad JSONPath %s: %w", expr, err)
		}
		return &condition{desc: "condition met", check: func(u *unstructured.Unstructured) (bool, string) {
			var buf bytes.Buffer
			if err := jp.Execute(&buf, u.Object); err != nil {
				return false, err.Error()
			}
			return buf.String() == want, fmt.Sprintf("%s is %q", expr, buf.String())
		}}, nil
	}
	return nil, fmt.Errorf("--for=%q: use condition=NAME[=VALUE], delete, or jsonpath='{EXPR}'=VALUE", s)
}

func conditionIs(u *unstructured.Unstructured, name, value string) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || !strings.EqualFold(fmt.Sprint(m["type"]), name) {
			continue
		}
		status := fmt.Sprint(m["status"])
		return strings.EqualFold(status, value), fmt.Sprintf("condition %s is %s (reason %v)", name, status, m["reason"])
	}
	return false, fmt.Sprintf("condition %s not reported yet", name)
}

// Run waits for each object in turn.
func (o *WaitOptions) Run(ctx context.Context, f *cli.Factory, in io.Reader, out, errOut io.Writer, args []string) error {
	cond, err := parseFor(o.For)
	if err != nil {
		return err
	}
	sel := selection{Files: o.Files, Recursive: o.Recursive, Selector: o.Selector, All: o.All}
	objs, err := sel.live(ctx, f, in, args)
	if err != nil {
		if cond.gone && isNotFound(err) && len(objs) == 0 {
			return nil
		}
		return err
	}
	if len(objs) == 0 {
		return fmt.Errorf("no matching resources found")
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return err
	}
	var errs []error
	for _, obj := range objs {
		rc := resourceClient(dyn, obj.mapping, obj.GetNamespace())
		label := displayName(obj.mapping, obj.GetName())
		if cond.gone {
			err = waitGone(ctx, rc, obj.GetName(), string(obj.GetUID()), o.Timeout, errOut, label)
		} else {
			err = waitCondition(ctx, rc, obj.GetName(), cond, o.Timeout, errOut, label)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "%s %s\n", label, cond.desc)
	}
	return errors.Join(errs...)
}

func waitCondition(ctx context.Context, rc getter, name string, cond *condition, timeout time.Duration, errOut io.Writer, label string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start, lastReport := time.Now(), time.Now()
	state := ""
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			// Transient: keep waiting until the deadline, and report it.
			state = "last error: " + err.Error()
			return false, nil
		}
		ok, s := cond.check(u)
		state = s
		if !ok && time.Since(lastReport) >= 5*time.Second {
			lastReport = time.Now()
			fmt.Fprintf(errOut, "waiting for %s: %s (%s)\n", label, s, time.Since(start).Round(time.Second))
		}
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("timed out after %s waiting for %s: %s", timeout, label, state)
	}
	return err
}

// getter reads one object.
type getter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
}
