package registry

import (
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// apiRegistrationResources is apiregistration.k8s.io/v1 APIService, the
// aggregation layer's registry: cluster-scoped, with a status subresource
// (the availability controller's Available condition), in the
// api-extensions category, updates naming the resourceVersion they read,
// as upstream's kube-aggregator strategy.
func apiRegistrationResources() []*Resource {
	return []*Resource{
		{
			Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService", Resource: "apiservices",
			SingularName: "apiservice", EtcdPrefix: "apiregistration.k8s.io/apiservices", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &apiregistrationv1.APIService{} },
			NewList:  func() runtime.Object { return &apiregistrationv1.APIServiceList{} },
			Strategy: main(conditionalUpdate), StatusStrategy: status(conditionalUpdate),
			// spec.service.port defaults to 443, as upstream's v1 defaults.
			Default: func(obj runtime.Object) {
				if a, ok := obj.(*apiregistrationv1.APIService); ok && a != nil {
					apiregistrationv1.SetObjectDefaults_APIService(a)
				}
			},
		},
	}
}
