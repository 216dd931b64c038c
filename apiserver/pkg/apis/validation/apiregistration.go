package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorvalidation "k8s.io/kube-aggregator/pkg/apis/apiregistration/validation"
)

// ValidateAPIService validates an APIService with upstream's own
// kube-aggregator validation, on the internal form the v1 object converts
// to: the name must be <version>.<group>, groupPriorityMinimum in
// (0, 20000], versionPriority in (0, 1000], a service's namespace, name
// and port, no caBundle or insecureSkipTLSVerify on a local APIService,
// not both on a remote one.
func ValidateAPIService(o *apiregistrationv1.APIService) field.ErrorList {
	in, err := internalAPIService(o)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath(""), err)}
	}
	return aggregatorvalidation.ValidateAPIService(in)
}

// ValidateAPIServiceUpdate validates an update of an APIService: the
// metadata rules, the spec and the status conditions, as upstream's.
func ValidateAPIServiceUpdate(o, p *apiregistrationv1.APIService) field.ErrorList {
	in, err := internalAPIService(o)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath(""), err)}
	}
	oldIn, err := internalAPIService(p)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath(""), err)}
	}
	errs := aggregatorvalidation.ValidateAPIServiceUpdate(in, oldIn)
	return append(errs, aggregatorvalidation.ValidateAPIServiceStatus(&in.Status, field.NewPath("status"))...)
}

func internalAPIService(in *apiregistrationv1.APIService) (*apiregistration.APIService, error) {
	out := &apiregistration.APIService{}
	if err := apiregistrationv1.Convert_v1_APIService_To_apiregistration_APIService(in, out, nil); err != nil {
		return nil, fmt.Errorf("converting the APIService: %w", err)
	}
	return out, nil
}
