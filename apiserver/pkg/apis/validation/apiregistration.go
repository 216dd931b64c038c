package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorvalidation "k8s.io/kube-aggregator/pkg/apis/apiregistration/validation"
)

// validateAPIRegistrationKinds validates APIServices with upstream's own
// kube-aggregator validation, on the internal form the v1 object converts
// to: the name must be <version>.<group>, groupPriorityMinimum in
// (0, 20000], versionPriority in (0, 1000], a service's namespace, name
// and port, no caBundle or insecureSkipTLSVerify on a local APIService,
// not both on a remote one; on update also the metadata rules and the
// status conditions. ok is false for other kinds.
func validateAPIRegistrationKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	o, isAPIService := obj.(*apiregistrationv1.APIService)
	if !isAPIService {
		return nil, false
	}
	in, err := internalAPIService(o)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath(""), err)}, true
	}
	if old == nil {
		return aggregatorvalidation.ValidateAPIService(in), true
	}
	p, ok := old.(*apiregistrationv1.APIService)
	if !ok {
		return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("cannot validate an update of a %T to a %T", old, obj))}, true
	}
	oldIn, err := internalAPIService(p)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath(""), err)}, true
	}
	errs := aggregatorvalidation.ValidateAPIServiceUpdate(in, oldIn)
	return append(errs, aggregatorvalidation.ValidateAPIServiceStatus(&in.Status, field.NewPath("status"))...), true
}

func internalAPIService(in *apiregistrationv1.APIService) (*apiregistration.APIService, error) {
	out := &apiregistration.APIService{}
	if err := apiregistrationv1.Convert_v1_APIService_To_apiregistration_APIService(in, out, nil); err != nil {
		return nil, fmt.Errorf("converting the APIService: %w", err)
	}
	return out, nil
}
