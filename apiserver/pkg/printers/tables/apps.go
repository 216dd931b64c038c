package tables

import (
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Column descriptions upstream shares between workload kinds.
const (
	containersDescription = "Names of each container in the template."
	imagesDescription     = "Images referenced by each container in the template."
)

// replicas dereferences spec.replicas; a nil pointer converts to 0 in
// upstream's internal types.
func replicas(r *int32) int64 {
	if r == nil {
		return 0
	}
	return int64(*r)
}

func (p *printer) printReplicaSet(obj *appsv1.ReplicaSet) metav1.TableRow {
	names, images := layoutContainerCells(obj.Spec.Template.Spec.Containers)
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells: []interface{}{
			obj.Name,
			replicas(obj.Spec.Replicas),
			int64(obj.Status.Replicas),
			int64(obj.Status.ReadyReplicas),
			p.since(obj.CreationTimestamp),
			names,
			images,
			metav1.FormatLabelSelector(obj.Spec.Selector),
		},
	}
}

func (p *printer) printDeployment(obj *appsv1.Deployment) metav1.TableRow {
	selectorString := "<invalid>"
	if selector, err := metav1.LabelSelectorAsSelector(obj.Spec.Selector); err == nil {
		selectorString = selector.String()
	}
	names, images := layoutContainerCells(obj.Spec.Template.Spec.Containers)
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells: []interface{}{
			obj.Name,
			fmt.Sprintf("%d/%d", int64(obj.Status.ReadyReplicas), replicas(obj.Spec.Replicas)),
			int64(obj.Status.UpdatedReplicas),
			int64(obj.Status.AvailableReplicas),
			p.since(obj.CreationTimestamp),
			names,
			images,
			selectorString,
		},
	}
}

// Upstream takes these descriptions from extensions/v1beta1; the texts are
// kept identical by using the same types.
// ReplicaSet prints appsv1.ReplicaSet objects and lists.
var ReplicaSet = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Desired", Type: "integer", Description: extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
		ageColumn(),
		{Name: "Containers", Type: "string", Priority: 1, Description: containersDescription},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesDescription},
		{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
	}, p.printReplicaSet, func(l *appsv1.ReplicaSetList) []appsv1.ReplicaSet { return l.Items })
}}

// Deployment prints appsv1.Deployment objects and lists.
var Deployment = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Up-to-date", Type: "string", Description: extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
		{Name: "Available", Type: "string", Description: extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
		ageColumn(),
		{Name: "Containers", Type: "string", Priority: 1, Description: containersDescription},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesDescription},
		{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.DeploymentSpec{}.SwaggerDoc()["selector"]},
	}, p.printDeployment, func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items })
}}
