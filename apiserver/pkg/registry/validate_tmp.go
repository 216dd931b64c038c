package registry

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateCreateTmp(runtime.Object) field.ErrorList      { return nil }
func validateUpdateTmp(_, _ runtime.Object) field.ErrorList { return nil }
