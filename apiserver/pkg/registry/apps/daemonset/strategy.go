// Package daemonset holds the DaemonSet kind's strategies and defaults.
package daemonset

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateDaemonSet, validation.ValidateDaemonSetUpdate)

// daemonSetStrategy keeps a DaemonSet's template generation, as upstream's
// strategy keeps spec.templateGeneration and the v1 API shows it: the
// annotation deprecated.daemonset.template.generation, 1 on create (or the
// client's value when higher), one more on every update that changes the
// pod template, and never changed by a client's update or by the status
// endpoint. The DaemonSet controller labels pods with it
// (pod-template-generation).
type daemonSetStrategy struct{ rest.Generic }

// Strategy is the DaemonSet's main endpoint; StatusStrategy its status.
var (
	Strategy       = daemonSetStrategy{rest.Main(rest.WithGeneration, validated)}
	StatusStrategy = daemonSetStrategy{rest.Status(validated)}
)

// Default applies upstream's v1 defaults to a DaemonSet.
var Default = rest.Defaults(defaults.DefaultDaemonSet)

func (s daemonSetStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s.Generic.PrepareForCreate(ctx, obj)
	ds, ok := obj.(*appsv1.DaemonSet)
	if !ok {
		return
	}
	setTemplateGeneration(ds, max(templateGenerationOf(ds), 1))
}

func (s daemonSetStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.Generic.PrepareForUpdate(ctx, obj, old)
	ds, ok1 := obj.(*appsv1.DaemonSet)
	oldDS, ok2 := old.(*appsv1.DaemonSet)
	if !ok1 || !ok2 {
		return
	}
	gen := templateGenerationOf(oldDS)
	if s.SplitOf() == rest.MainEndpoint && !equality.Semantic.DeepEqual(ds.Spec.Template, oldDS.Spec.Template) {
		gen++
	}
	setTemplateGeneration(ds, gen)
}

// templateGenerationOf reads the annotation; absent or invalid is 0, as an
// unset spec.templateGeneration upstream.
func templateGenerationOf(ds *appsv1.DaemonSet) int64 {
	g, err := strconv.ParseInt(ds.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64)
	if err != nil {
		return 0
	}
	return g
}

func setTemplateGeneration(ds *appsv1.DaemonSet, g int64) {
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(g, 10)
}
