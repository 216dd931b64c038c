package openapi

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
)

// Descriptions of the parameters that are not fields of an options struct.
const (
	prettyDescription    = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."
	namespaceDescription = "object name and auth scope, such as for teams and projects"
	pathDescription      = "path to the resource"
)

// parameter is a common.Parameter of a route.
type parameter struct {
	name, description string
	required          bool
	kind              common.ParameterKind
	dataType          string
}

var _ common.Parameter = parameter{}

func (p parameter) Name() string               { return p.name }
func (p parameter) Description() string        { return p.description }
func (p parameter) Required() bool             { return p.required }
func (p parameter) Kind() common.ParameterKind { return p.kind }
func (p parameter) DataType() string           { return p.dataType }
func (p parameter) AllowMultiple() bool        { return false }

func pathParam(name, description string) parameter {
	return parameter{name: name, description: description, required: true, kind: common.PathParameterKind, dataType: "string"}
}

func queryParam(name, description, dataType string) parameter {
	return parameter{name: name, description: description, kind: common.QueryParameterKind, dataType: dataType}
}

func bodyParam(required bool) parameter {
	return parameter{name: "body", required: required, kind: common.BodyParameterKind}
}

func prettyParam() parameter {
	return queryParam("pretty", prettyDescription, "string")
}

// swaggerDocumented is implemented by the API types, whose generated
// SwaggerDoc method maps JSON field names to their documentation.
type swaggerDocumented interface {
	SwaggerDoc() map[string]string
}

// optionParams turns the fields of an options struct (metav1.ListOptions,
// corev1.PodLogOptions, ...) into query parameters, as the upstream API server
// does: one parameter per JSON field of a scalar or string-slice type,
// documented from SwaggerDoc; nested structs and the fields named in exclude
// are left out.
func optionParams(options interface{}, exclude ...string) []parameter {
	v := reflect.ValueOf(options)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	t := v.Type()
	if t.Kind() != reflect.Struct {
		return nil
	}
	var docs map[string]string
	if d, ok := options.(swaggerDocumented); ok {
		docs = d.SwaggerDoc()
	}
	var params []parameter
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct || ft.Kind() == reflect.Interface {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || slices.Contains(exclude, name) {
			continue
		}
		dataType, ok := paramDataType(ft)
		if !ok {
			continue
		}
		params = append(params, queryParam(name, docs[name], dataType))
	}
	return params
}

// paramDataType maps a field type to the simple type of its query parameter.
// A slice of strings is one string parameter, as upstream documents it.
func paramDataType(t reflect.Type) (string, bool) {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean", true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer", true
	case reflect.Float32, reflect.Float64:
		return "number", true
	case reflect.String:
		return "string", true
	case reflect.Slice:
		elem := t.Elem()
		if elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		switch elem.Kind() {
		case reflect.String:
			return "string", true
		case reflect.Int32:
			return "integer", true
		}
	}
	return "", false
}
