package registry

import (
	"context"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// byType maps the Go types of the table's objects and lists to their rows.
var byType = sync.OnceValues(func() (map[reflect.Type]*Resource, map[reflect.Type]*Resource) {
	objs, lists := map[reflect.Type]*Resource{}, map[reflect.Type]*Resource{}
	for _, r := range Resources() {
		objs[reflect.TypeOf(r.New())] = r
		lists[reflect.TypeOf(r.NewList())] = r
	}
	return objs, lists
})

// ForObject returns the row of the table that serves objects of obj's Go
// type, or nil.
func ForObject(obj runtime.Object) *Resource {
	objs, _ := byType()
	return objs[reflect.TypeOf(obj)]
}

// Default applies to obj the defaults of its kind's row, and to each item
// of a list the defaults of the items' kind. Objects of kinds the table does
// not serve, and typed nil pointers, are left untouched.
func Default(obj runtime.Object) {
	if obj == nil {
		return
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return
	}
	if r := ForObject(obj); r != nil {
		if r.Default != nil {
			r.Default(obj)
		}
		return
	}
	_, lists := byType()
	if r := lists[reflect.TypeOf(obj)]; r != nil && r.Default != nil {
		_ = meta.EachListItem(obj, func(item runtime.Object) error {
			r.Default(item)
			return nil
		})
	}
}

// Validate validates obj as its kind's main endpoint does on create; it
// returns nil for kinds the table does not serve.
func Validate(obj runtime.Object) field.ErrorList {
	if r := ForObject(obj); r != nil {
		return r.Strategy.Validate(context.Background(), obj)
	}
	return nil
}

// ValidateUpdate validates obj as an update of old, as its kind's main
// endpoint does; it returns nil for kinds the table does not serve.
func ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	if r := ForObject(obj); r != nil {
		return r.Strategy.ValidateUpdate(context.Background(), obj, old)
	}
	return nil
}
