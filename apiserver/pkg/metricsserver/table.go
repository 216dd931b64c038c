package metricsserver

import (
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// wantsTable says whether the Accept header asks for a Table (as kubectl
// get does) before any plain media type.
func wantsTable(accept string) bool {
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		if params["as"] == "Table" && params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1") &&
			(mt == "application/json" || mt == "application/yaml") {
			return true
		}
		if params["as"] == "" {
			return false
		}
	}
	return false
}

// table is metrics-server's table of node or pod metrics: Name, one
// column per resource (cpu, memory; a pod's summed over its containers)
// and Window. Each row carries the object's metadata
// (includeObject=Metadata, the default).
func table(obj runtime.Object, includeObject string) (*metav1.Table, error) {
	if includeObject != "" && includeObject != "None" && includeObject != "Metadata" && includeObject != "Object" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("includeObject %q: want None, Metadata or Object", includeObject))
	}
	type row struct {
		meta   metav1.ObjectMeta
		usage  corev1.ResourceList
		window metav1.Duration
		full   runtime.Object
	}
	var rows []row
	var list metav1.ListMeta
	add := func(full runtime.Object, meta metav1.ObjectMeta, window metav1.Duration, usages ...corev1.ResourceList) {
		sum := corev1.ResourceList{}
		for _, u := range usages {
			for k, v := range u {
				q := sum[k]
				q.Add(v)
				sum[k] = q
			}
		}
		rows = append(rows, row{meta: meta, usage: sum, window: window, full: full})
	}
	podUsages := func(p *metricsv1beta1.PodMetrics) []corev1.ResourceList {
		out := make([]corev1.ResourceList, 0, len(p.Containers))
		for _, c := range p.Containers {
			out = append(out, c.Usage)
		}
		return out
	}
	switch o := obj.(type) {
	case *metricsv1beta1.NodeMetrics:
		add(o, o.ObjectMeta, o.Window, o.Usage)
	case *metricsv1beta1.NodeMetricsList:
		list = o.ListMeta
		for i := range o.Items {
			m := &o.Items[i]
			m.TypeMeta = metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "NodeMetrics"}
			add(m, m.ObjectMeta, m.Window, m.Usage)
		}
	case *metricsv1beta1.PodMetrics:
		add(o, o.ObjectMeta, o.Window, podUsages(o)...)
	case *metricsv1beta1.PodMetricsList:
		list = o.ListMeta
		for i := range o.Items {
			m := &o.Items[i]
			m.TypeMeta = metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "PodMetrics"}
			add(m, m.ObjectMeta, m.Window, podUsages(m)...)
		}
	default:
		return nil, fmt.Errorf("no table for %T", obj)
	}
	t := &metav1.Table{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
		ListMeta: list,
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: "Name of the resource"},
			{Name: string(corev1.ResourceCPU), Type: "string", Format: "quantity"},
			{Name: string(corev1.ResourceMemory), Type: "string", Format: "quantity"},
			{Name: "Window", Type: "string", Format: "duration"},
		},
		Rows: []metav1.TableRow{},
	}
	for _, r := range rows {
		cpu, mem := r.usage[corev1.ResourceCPU], r.usage[corev1.ResourceMemory]
		tr := metav1.TableRow{Cells: []interface{}{r.meta.Name, cpu.String(), mem.String(), r.window.Duration.String()}}
		var embed any
		switch includeObject {
		case "None":
		case "Object":
			embed = r.full
		default: // Metadata
			embed = &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
				ObjectMeta: r.meta,
			}
		}
		if embed != nil {
			raw, err := json.Marshal(embed)
			if err != nil {
				return nil, err
			}
			tr.Object = runtime.RawExtension{Raw: raw}
		}
		t.Rows = append(t.Rows, tr)
	}
	return t, nil
}
