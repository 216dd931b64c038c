package etcd3

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// reflectAppend appends obj (a pointer) to the slice v, as a value when the
// slice holds values (XList.Items is []X).
func reflectAppend(v reflect.Value, obj runtime.Object) reflect.Value {
	ov := reflect.ValueOf(obj)
	if v.Type().Elem().Kind() != reflect.Ptr {
		ov = ov.Elem()
	}
	return reflect.Append(v, ov)
}

func reflectMakeSlice(v reflect.Value) reflect.Value {
	return reflect.MakeSlice(v.Type(), 0, 0)
}
