package lifecycle

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

func clientgoScheme() *runtime.Scheme { return scheme.Scheme }
