package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/manifest"
)

// exactArgs is cobra.ExactArgs with a message that says what to type.
func exactArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s", msg)
		}
		return nil
	}
}

func jsonIndent(v any) ([]byte, error) { return json.MarshalIndent(v, "", "    ") }

// resourceClient returns the dynamic client of mapping in ns (ignored for
// cluster-scoped kinds; "" for all namespaces).
func resourceClient(dyn dynamic.Interface, m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return dyn.Resource(m.Resource).Namespace(ns)
	}
	return dyn.Resource(m.Resource)
}

// namespaced reports a namespaced kind.
func namespaced(m *meta.RESTMapping) bool { return m.Scope.Name() == meta.RESTScopeNameNamespace }

// resolved is a manifest object with its REST mapping.
type resolved struct {
	*manifest.Object
	Mapping *meta.RESTMapping
}

// readManifests reads -f, resolves each object's kind and sets the
// namespace of namespaced objects: the object's own, which must agree with
// an explicit -n, else the request's.
func readManifests(f *cli.Factory, in io.Reader, files []string, recursive bool) ([]resolved, error) {
	objs, err := (&manifest.Reader{Stdin: in, Recursive: recursive}).Read(files)
	if err != nil {
		return nil, err
	}
	r, err := f.NewResolver()
	if err != nil {
		return nil, err
	}
	ns, explicit, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	out := make([]resolved, 0, len(objs))
	for _, o := range objs {
		m, err := r.MappingForKind(o.GroupVersionKind())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Where(), err)
		}
		if namespaced(m) {
			switch objNS := o.GetNamespace(); {
			case objNS == "":
				o.SetNamespace(ns)
			case explicit && objNS != ns:
				return nil, fmt.Errorf("%s: the namespace of %s %q is %q, which does not match --namespace=%s",
					o.Where(), o.GetKind(), o.GetName(), objNS, ns)
			}
		} else {
			o.SetNamespace("")
		}
		out = append(out, resolved{Object: o, Mapping: m})
	}
	return out, nil
}

// displayName returns "kind.group/name" as kubectl prints it.
func displayName(m *meta.RESTMapping, name string) string { return cli.KindName(m) + "/" + name }

// waitGone polls until the object is gone, or the deadline passes. It
// reports progress on errOut every few seconds.
func waitGone(parent context.Context, rc dynamic.ResourceInterface, name string, uid string, timeout time.Duration, errOut io.Writer, label string) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	start := time.Now()
	// The first report comes after 2s, later ones every 5s.
	lastReport := start.Add(-3 * time.Second)
	var lastState string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		obj, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if isNotFound(err) {
				return true, nil
			}
			// Transient: keep waiting until the deadline, and report it.
			lastState = "last error: " + err.Error()
			return false, nil
		}
		if uid != "" && string(obj.GetUID()) != uid {
			return true, nil
		}
		lastState = goneState(obj)
		if time.Since(lastReport) >= 5*time.Second {
			lastReport = time.Now()
			fmt.Fprintf(errOut, "waiting for %s to be gone (%s, %s)\n", label, lastState, time.Since(start).Round(time.Second))
		}
		return false, nil
	})
	if err != nil && parent.Err() != nil {
		return fmt.Errorf("interrupted while waiting for %s to be gone (%s)", label, lastState)
	}
	if err != nil {
		return fmt.Errorf("timed out after %s waiting for %s to be gone (%s); it is still being deleted (pass --wait=false not to wait)",
			timeout, label, lastState)
	}
	return err
}

// goneState describes why an object is still there.
func goneState(obj *unstructured.Unstructured) string {
	if obj.GetDeletionTimestamp() == nil {
		return "not yet marked for deletion"
	}
	if fins := obj.GetFinalizers(); len(fins) > 0 {
		return "waiting for finalizers " + strings.Join(fins, ", ")
	}
	if fins, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "finalizers"); obj.GetKind() == "Namespace" && len(fins) > 0 {
		return "terminating: the namespace controller has yet to empty it and remove spec.finalizers " + strings.Join(fins, ", ")
	}
	return "terminating"
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// restGetter is the REST client interface the table fetchers use.
type restGetter = rest.Interface

// dynamicInterface is the dynamic client.
type dynamicInterface = dynamic.Interface

func parseGroupVersion(s string) (schema.GroupVersion, error) {
	gv, err := schema.ParseGroupVersion(s)
	if err != nil {
		return gv, fmt.Errorf("bad apiVersion %q: %w", s, err)
	}
	return gv, nil
}

func runtimeFromUnstructured(m map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}
