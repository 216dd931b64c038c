package openapi

import (
	"fmt"
	"sort"

	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Models returns the OpenAPI v3 schemas of resources' kinds and of every
// type they refer to, named as upstream names them and marked with
// x-kubernetes-group-version-kind: the models server-side apply's type
// converter reads (upstream builds its own the same way, from its v3
// config). With no resources, it covers every kind of the built-in scheme.
func Models(resources []Resource) (map[string]*spec.Schema, error) {
	t, err := newRegistry()
	if err != nil {
		return nil, err
	}
	t.addCustom(resources)
	getDefinitions := customDefinitions(resources)
	var names []string
	if len(resources) == 0 {
		defs := getDefinitions(func(string) spec.Ref { return spec.Ref{} })
		for name := range t.gvks {
			if _, ok := defs[name]; ok {
				names = append(names, name)
			}
		}
		sort.Strings(names)
	}
	for _, r := range resources {
		name, err := t.typeOf(r.gvk())
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	cfg := v3Config(options{version: "unversioned"}, t, newOperationNamer(), getDefinitions)
	models, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, names...)
	if err != nil {
		return nil, fmt.Errorf("openapi: building models: %w", err)
	}
	return models, nil
}
