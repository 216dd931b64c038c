package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"skiff.dev/ctl/pkg/cli"
)

// selection is how a verb names the live objects it works on: -f
// manifests, TYPE NAME..., TYPE/NAME..., or TYPE with -l or --all.
type selection struct {
	Files         []string
	Recursive     bool
	Selector      string
	All           bool
	AllNamespaces bool
}

// liveObject is an object read from the server with its mapping.
type liveObject struct {
	*unstructured.Unstructured
	mapping *meta.RESTMapping
	// field is "labels" or "annotations" for label and annotate.
	field string
}

func (l liveObject) current() map[string]string {
	if l.field == "annotations" {
		return l.GetAnnotations()
	}
	return l.GetLabels()
}

// live fetches the selected objects.
func (s selection) live(ctx context.Context, f *cli.Factory, in io.Reader, args []string) ([]liveObject, error) {
	dyn, err := f.Dynamic()
	if err != nil {
		return nil, err
	}
	if len(s.Files) > 0 {
		if len(args) > 0 {
			return nil, fmt.Errorf("give either -f or resource arguments, not both")
		}
		objs, err := readManifests(f, in, s.Files, s.Recursive)
		if err != nil {
			return nil, err
		}
		var out []liveObject
		var errs []error
		for _, o := range objs {
			u, err := resourceClient(dyn, o.Mapping, o.GetNamespace()).Get(ctx, o.GetName(), metav1.GetOptions{})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, liveObject{Unstructured: u, mapping: o.Mapping})
		}
		return out, errors.Join(errs...)
	}
	r, err := f.NewResolver()
	if err != nil {
		return nil, err
	}
	targets, err := r.Targets(args)
	if err != nil {
		return nil, err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	if s.AllNamespaces {
		ns = ""
	}
	var out []liveObject
	var errs []error
	for _, t := range targets {
		rc := resourceClient(dyn, t.Mapping, ns)
		if len(t.Names) > 0 {
			for _, n := range t.Names {
				u, err := rc.Get(ctx, n, metav1.GetOptions{})
				if err != nil {
					errs = append(errs, err)
					continue
				}
				out = append(out, liveObject{Unstructured: u, mapping: t.Mapping})
			}
			continue
		}
		if s.Selector == "" && !s.All {
			return nil, fmt.Errorf("name the %s objects, or select them with -l or --all", cli.KindName(t.Mapping))
		}
		list, err := rc.List(ctx, metav1.ListOptions{LabelSelector: s.Selector})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for i := range list.Items {
			out = append(out, liveObject{Unstructured: &list.Items[i], mapping: t.Mapping})
		}
	}
	return out, errors.Join(errs...)
}
