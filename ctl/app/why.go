package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/trace"
)

// NewWhyCommand returns skiffctl why.
func NewWhyCommand(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "why pod/NAME",
		Short: "Explain in one paragraph why a pod is not running",
		Long: "skiffctl why reads the pod's conditions, its events (the scheduler's reasons, image pull\n" +
			"failures, probe failures) and its containers' last exits, and says why it is not Running.",
		Example: "  skiffctl why pod/web-7d4b9-x2x8q",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, ok := strings.Cut(args[0], "/")
			if !ok {
				kind, name = "pod", args[0]
			}
			if k := strings.ToLower(kind); k != "pod" && k != "pods" && k != "po" {
				return fmt.Errorf("%q: skiffctl why explains pods, as pod/NAME", args[0])
			}
			ns, _, err := f.Namespace()
			if err != nil {
				return err
			}
			cs, err := f.Clientset()
			if err != nil {
				return err
			}
			p, err := cs.CoreV1().Pods(ns).Get(cmd.Context(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			evs, err := trace.EventsOf(cmd.Context(), cs, p)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), trace.Why(p, evs, time.Now()))
			return err
		},
	}
}
