package validation

import (
	"fmt"
	"net/url"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/celpolicy"
)

// webhook is what mutating and validating webhooks share.
type webhook struct {
	name                    string
	clientConfig            *admissionregistrationv1.WebhookClientConfig
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	matchPolicy             *admissionregistrationv1.MatchPolicyType
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          *int32
	admissionReviewVersions []string
	reinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType
	matchConditions         []admissionregistrationv1.MatchCondition
}

// ValidateMutatingWebhookConfiguration checks a configuration as upstream's
// admissionregistration validation does for v1.
func ValidateMutatingWebhookConfiguration(obj *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	hooks := make([]webhook, len(obj.Webhooks))
	for i := range obj.Webhooks {
		w := &obj.Webhooks[i]
		hooks[i] = webhook{w.Name, &w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.ReinvocationPolicy, w.MatchConditions}
	}
	return append(allErrs, validateWebhooks(hooks, true)...)
}

// ValidateValidatingWebhookConfiguration checks a configuration as
// upstream's admissionregistration validation does for v1.
func ValidateValidatingWebhookConfiguration(obj *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	hooks := make([]webhook, len(obj.Webhooks))
	for i := range obj.Webhooks {
		w := &obj.Webhooks[i]
		hooks[i] = webhook{w.Name, &w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, nil, w.MatchConditions}
	}
	return append(allErrs, validateWebhooks(hooks, false)...)
}

var (
	supportedOperations   = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create), string(admissionregistrationv1.Update), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Connect))
	supportedScopes       = sets.New(string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope), string(admissionregistrationv1.AllScopes))
	supportedFailure      = sets.New(string(admissionregistrationv1.Ignore), string(admissionregistrationv1.Fail))
	supportedMatch        = sets.New(string(admissionregistrationv1.Exact), string(admissionregistrationv1.Equivalent))
	supportedSideEffects  = sets.New(string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	supportedReinvocation = sets.New(string(admissionregistrationv1.NeverReinvocationPolicy), string(admissionregistrationv1.IfNeededReinvocationPolicy))
	reviewVersions        = sets.New("v1", "v1beta1")
)

func validateWebhooks(hooks []webhook, mutating bool) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, w := range hooks {
		p := field.NewPath("webhooks").Index(i)
		if w.name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(w.name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), w.name, msg))
			}
			if len(strings.Split(w.name, ".")) < 3 {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), w.name, "should be a domain with at least three segments separated by dots"))
			}
			if names.Has(w.name) {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), w.name))
			}
			names.Insert(w.name)
		}
		for j, r := range w.rules {
			rp := p.Child("rules").Index(j)
			if len(r.Operations) == 0 {
				allErrs = append(allErrs, field.Required(rp.Child("operations"), ""))
			}
			for k, op := range r.Operations {
				if !supportedOperations.Has(string(op)) {
					allErrs = append(allErrs, field.NotSupported(rp.Child("operations").Index(k), op, sets.List(supportedOperations)))
				}
			}
			if len(r.APIGroups) == 0 {
				allErrs = append(allErrs, field.Required(rp.Child("apiGroups"), ""))
			}
			if len(r.APIVersions) == 0 {
				allErrs = append(allErrs, field.Required(rp.Child("apiVersions"), ""))
			}
			if len(r.Resources) == 0 {
				allErrs = append(allErrs, field.Required(rp.Child("resources"), ""))
			}
			if r.Scope != nil && !supportedScopes.Has(string(*r.Scope)) {
				allErrs = append(allErrs, field.NotSupported(rp.Child("scope"), *r.Scope, sets.List(supportedScopes)))
			}
		}
		if w.failurePolicy != nil && !supportedFailure.Has(string(*w.failurePolicy)) {
			allErrs = append(allErrs, field.NotSupported(p.Child("failurePolicy"), *w.failurePolicy, sets.List(supportedFailure)))
		}
		if w.matchPolicy != nil && !supportedMatch.Has(string(*w.matchPolicy)) {
			allErrs = append(allErrs, field.NotSupported(p.Child("matchPolicy"), *w.matchPolicy, sets.List(supportedMatch)))
		}
		if w.sideEffects == nil {
			allErrs = append(allErrs, field.Required(p.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(sets.List(supportedSideEffects), ", "))))
		} else if !supportedSideEffects.Has(string(*w.sideEffects)) {
			allErrs = append(allErrs, field.NotSupported(p.Child("sideEffects"), *w.sideEffects, sets.List(supportedSideEffects)))
		}
		if w.timeoutSeconds != nil && (*w.timeoutSeconds < 1 || *w.timeoutSeconds > 30) {
			allErrs = append(allErrs, field.Invalid(p.Child("timeoutSeconds"), *w.timeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
		}
		if len(w.admissionReviewVersions) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("admissionReviewVersions"), fmt.Sprintf("must specify one of %v", strings.Join(sets.List(reviewVersions), ", "))))
		} else {
			known := false
			for _, v := range w.admissionReviewVersions {
				known = known || reviewVersions.Has(v)
			}
			if !known {
				allErrs = append(allErrs, field.Invalid(p.Child("admissionReviewVersions"), w.admissionReviewVersions, fmt.Sprintf("must include at least one of %v", strings.Join(sets.List(reviewVersions), ", "))))
			}
		}
		if mutating && w.reinvocationPolicy != nil && !supportedReinvocation.Has(string(*w.reinvocationPolicy)) {
			allErrs = append(allErrs, field.NotSupported(p.Child("reinvocationPolicy"), *w.reinvocationPolicy, sets.List(supportedReinvocation)))
		}
		opts := metav1validation.LabelSelectorValidationOptions{}
		if w.namespaceSelector != nil {
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(w.namespaceSelector, opts, p.Child("namespaceSelector"))...)
		}
		if w.objectSelector != nil {
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(w.objectSelector, opts, p.Child("objectSelector"))...)
		}
		allErrs = append(allErrs, validateClientConfig(w.clientConfig, p.Child("clientConfig"))...)
		if len(w.matchConditions) > 0 {
			// Compiled as upstream's: one that does not compile is
			// Invalid ("compilation failed: ...").
			env, err := celpolicy.NewEnv()
			if err != nil {
				allErrs = append(allErrs, field.InternalError(p.Child("matchConditions"), err))
			} else {
				allErrs = append(allErrs, validateMatchConditions(env, w.matchConditions, p.Child("matchConditions"))...)
			}
		}
	}
	return allErrs
}

func validateClientConfig(c *admissionregistrationv1.WebhookClientConfig, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case c.URL != nil && c.Service != nil:
		allErrs = append(allErrs, field.Required(p, "exactly one of url or service is required"))
	case c.URL != nil:
		u, err := url.Parse(*c.URL)
		switch {
		case err != nil:
			allErrs = append(allErrs, field.Invalid(p.Child("url"), *c.URL, err.Error()))
		case u.Scheme != "https":
			allErrs = append(allErrs, field.Invalid(p.Child("url"), *c.URL, "'https' is the only allowed URL scheme"))
		case u.Host == "":
			allErrs = append(allErrs, field.Invalid(p.Child("url"), *c.URL, "host must be specified"))
		case u.User != nil:
			allErrs = append(allErrs, field.Invalid(p.Child("url"), *c.URL, "user information is not permitted in the URL"))
		case u.Fragment != "" || u.RawQuery != "":
			allErrs = append(allErrs, field.Invalid(p.Child("url"), *c.URL, "fragments and query parameters are not permitted"))
		}
	case c.Service != nil:
		sp := p.Child("service")
		if c.Service.Name == "" {
			allErrs = append(allErrs, field.Required(sp.Child("name"), "service name is required"))
		}
		if c.Service.Namespace == "" {
			allErrs = append(allErrs, field.Required(sp.Child("namespace"), "service namespace is required"))
		}
		if c.Service.Path != nil && *c.Service.Path != "" && !strings.HasPrefix(*c.Service.Path, "/") {
			allErrs = append(allErrs, field.Invalid(sp.Child("path"), *c.Service.Path, "must start with a '/'"))
		}
		if c.Service.Port != nil {
			for _, msg := range utilvalidation.IsValidPortNum(int(*c.Service.Port)) {
				allErrs = append(allErrs, field.Invalid(sp.Child("port"), *c.Service.Port, msg))
			}
		}
	default:
		allErrs = append(allErrs, field.Required(p, "exactly one of url or service is required"))
	}
	return allErrs
}

// ValidateMutatingWebhookConfigurationUpdate validates an update: the
// metadata rules and the configuration as on create.
func ValidateMutatingWebhookConfigurationUpdate(o, p *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateMutatingWebhookConfiguration(o)...)
}

// ValidateValidatingWebhookConfigurationUpdate validates an update: the
// metadata rules and the configuration as on create.
func ValidateValidatingWebhookConfigurationUpdate(o, p *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateValidatingWebhookConfiguration(o)...)
}
