package apiextensions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/webhook"
)

// conversionTimeout bounds one call to a conversion webhook, as upstream's
// fixed 30 seconds.
const conversionTimeout = 30 * time.Second

// converter converts custom resources to another version of their CRD,
// in place.
type converter interface {
	convert(objs []*unstructured.Unstructured, to schema.GroupVersion) error
}

// newConverter is the CRD's conversion: None, or its webhook.
func newConverter(crd *apiextensionsv1.CustomResourceDefinition, clients *webhook.Clients) converter {
	c := crd.Spec.Conversion
	if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil {
		return noneConverter{}
	}
	cc := c.Webhook.ClientConfig
	e := webhook.Endpoint{URL: cc.URL, CABundle: cc.CABundle}
	if cc.Service != nil {
		e.Namespace, e.Name, e.Port, e.Path = cc.Service.Namespace, cc.Service.Name, cc.Service.Port, cc.Service.Path
	}
	review := "apiextensions.k8s.io/v1"
	if !slices.Contains(c.Webhook.ConversionReviewVersions, "v1") {
		review = "apiextensions.k8s.io/v1beta1" // the same shape
	}
	return &webhookConverter{crd: crd.Name, clients: clients, endpoint: e, review: review}
}

// noneConverter is the strategy None: only apiVersion changes.
type noneConverter struct{}

func (noneConverter) convert(objs []*unstructured.Unstructured, to schema.GroupVersion) error {
	for _, o := range objs {
		o.SetAPIVersion(to.String())
	}
	return nil
}

// webhookConverter sends the objects not at the wanted version to the
// CRD's conversion webhook in one ConversionReview (apiextensions.k8s.io/v1),
// as upstream does.
type webhookConverter struct {
	crd      string
	clients  *webhook.Clients
	endpoint webhook.Endpoint
	// review is the ConversionReview's apiVersion the webhook accepts.
	review string
}

func (w *webhookConverter) convert(objs []*unstructured.Unstructured, to schema.GroupVersion) error {
	var todo []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetAPIVersion() != to.String() {
			todo = append(todo, o)
		}
	}
	if len(todo) == 0 || w.clients == nil {
		if len(todo) > 0 {
			return w.failed(to, fmt.Errorf("no webhook client"))
		}
		return nil
	}
	req := &apiextensionsv1.ConversionRequest{UID: types.UID(uuid.NewString()), DesiredAPIVersion: to.String()}
	for _, o := range todo {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return w.failed(to, err)
		}
		req.Objects = append(req.Objects, runtime.RawExtension{Raw: raw})
	}
	body, err := json.Marshal(apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: w.review, Kind: "ConversionReview"},
		Request:  req,
	})
	if err != nil {
		return w.failed(to, err)
	}
	data, err := w.clients.Post(context.Background(), w.endpoint, body, conversionTimeout)
	if err != nil {
		return w.failed(to, err)
	}
	converted, err := w.answer(data, req, todo, to)
	if err != nil {
		return w.failed(to, err)
	}
	for i, o := range todo {
		o.Object = converted[i].Object
	}
	return nil
}

// answer checks the webhook's ConversionReview and returns the converted
// objects, with the metadata of the originals: a webhook may change labels
// and annotations only, as upstream keeps it.
func (w *webhookConverter) answer(data []byte, req *apiextensionsv1.ConversionRequest, in []*unstructured.Unstructured, to schema.GroupVersion) ([]*unstructured.Unstructured, error) {
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return nil, fmt.Errorf("the answer is not a ConversionReview: %v", err)
	}
	resp := review.Response
	switch {
	case resp == nil:
		return nil, fmt.Errorf("the ConversionReview has no response")
	case resp.UID != req.UID:
		return nil, fmt.Errorf("the webhook answered for uid %q, expected %q", resp.UID, req.UID)
	case resp.Result.Status != metav1.StatusSuccess:
		return nil, fmt.Errorf("the webhook failed the conversion: %s", resp.Result.Message)
	case len(resp.ConvertedObjects) != len(in):
		return nil, fmt.Errorf("the webhook returned %d objects for %d", len(resp.ConvertedObjects), len(in))
	}
	out := make([]*unstructured.Unstructured, len(in))
	for i, raw := range resp.ConvertedObjects {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw.Raw, &u.Object); err != nil || u.Object == nil {
			return nil, fmt.Errorf("converted object %d is not an object: %v", i, err)
		}
		if u.GetAPIVersion() != to.String() {
			return nil, fmt.Errorf("converted object %d has apiVersion %q, expected %q", i, u.GetAPIVersion(), to)
		}
		if u.GetKind() != in[i].GetKind() {
			return nil, fmt.Errorf("converted object %d has kind %q, expected %q", i, u.GetKind(), in[i].GetKind())
		}
		meta, _ := runtime.DeepCopyJSONValue(in[i].Object["metadata"]).(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := u.Object["metadata"].(map[string]any)[k]; ok {
				meta[k] = v
			} else {
				delete(meta, k)
			}
		}
		u.Object["metadata"] = meta
		out[i] = u
	}
	return out, nil
}

// failed is upstream's error for a conversion that could not be made: a
// 500 naming the webhook.
func (w *webhookConverter) failed(to schema.GroupVersion, err error) error {
	return apierrors.NewInternalError(fmt.Errorf("conversion webhook for %s failed: %v", w.crd, err))
}

// validateConversion checks spec.conversion as upstream: a webhook needs a
// client config (a URL or a service) and review versions that include v1
// or v1beta1.
func validateConversion(c *apiextensionsv1.CustomResourceConversion, p *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	switch c.Strategy {
	case apiextensionsv1.NoneConverter:
		if c.Webhook != nil {
			errs = append(errs, field.Forbidden(p.Child("webhook"), "should not be set when strategy is not set to Webhook"))
		}
	case apiextensionsv1.WebhookConverter:
		wp := p.Child("webhook")
		if c.Webhook == nil {
			return append(errs, field.Required(wp, "required when strategy is set to Webhook"))
		}
		cc := c.Webhook.ClientConfig
		switch {
		case cc == nil:
			errs = append(errs, field.Required(wp.Child("clientConfig"), "required when strategy is set to Webhook"))
		case (cc.URL == nil) == (cc.Service == nil):
			errs = append(errs, field.Required(wp.Child("clientConfig"), "exactly one of url or service is required"))
		}
		if !slices.Contains(c.Webhook.ConversionReviewVersions, "v1") && !slices.Contains(c.Webhook.ConversionReviewVersions, "v1beta1") {
			errs = append(errs, field.Invalid(wp.Child("conversionReviewVersions"), c.Webhook.ConversionReviewVersions,
				"must include at least one of v1, v1beta1"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("strategy"), c.Strategy, []string{string(apiextensionsv1.NoneConverter), string(apiextensionsv1.WebhookConverter)}))
	}
	return errs
}
