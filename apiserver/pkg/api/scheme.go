package api

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Codecs bundles the scheme with the serializers built on it.
type Codecs struct {
	Scheme *runtime.Scheme
	// Factory knows JSON, YAML and protobuf, for requests and responses.
	Factory serializer.CodecFactory
	// ParameterCodec decodes query parameters into ListOptions, DeleteOptions, ...
	ParameterCodec runtime.ParameterCodec
}

// AddToSchemeFuncs register every API group skiff serves. The OpenAPI
// definitions (pkg/openapi/generate.sh) cover the same groups.
func AddToSchemeFuncs() []func(*runtime.Scheme) error {
	return []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		appsv1.AddToScheme,
		authenticationv1.AddToScheme,
		authorizationv1.AddToScheme,
		autoscalingv1.AddToScheme,
		autoscalingv2.AddToScheme,
		coordinationv1.AddToScheme,
		discoveryv1.AddToScheme,
		policyv1.AddToScheme,
		rbacv1.AddToScheme,
		batchv1.AddToScheme,
		certificatesv1.AddToScheme,
		eventsv1.AddToScheme,
		flowcontrolv1.AddToScheme,
		networkingv1.AddToScheme,
		nodev1.AddToScheme,
		schedulingv1.AddToScheme,
		storagev1.AddToScheme,
		apiextensionsv1.AddToScheme,
		apiregistrationv1.AddToScheme,
	}
}

// NewCodecs returns a scheme holding every kind skiff serves, plus meta/v1.
func NewCodecs() *Codecs {
	s := runtime.NewScheme()
	for _, add := range AddToSchemeFuncs() {
		utilruntime.Must(add(s))
	}
	// meta/v1 kinds (Status, Table, WatchEvent, options) in their own group.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Group: "meta.k8s.io", Version: "v1"})
	s.AddKnownTypes(metav1.SchemeGroupVersion,
		&metav1.Table{}, &metav1.TableOptions{},
		&metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadataList{},
	)
	return &Codecs{
		Scheme:         s,
		Factory:        serializer.NewCodecFactory(s),
		ParameterCodec: runtime.NewParameterCodec(s),
	}
}
