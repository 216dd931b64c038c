package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/serviceaccount"
	"skiff.dev/apiserver/pkg/storage"
)

// SubToken names the serviceaccounts/token subresource.
const SubToken = "token"

// TokenRequest is upstream's TokenREST: a token signed for the service
// account, for expirationSeconds (an hour by default, from 10 minutes to
// 2^32 seconds), optionally bound to a pod (whose node goes into the token
// too), a secret or a node of the core group (kubectl create token
// --bound-object-kind). The bound object must exist, with the UID the
// reference names when it names one; a pod must run as the service account.
func TokenRequest(ctx context.Context, deps rest.TokenDeps, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	gk := authenticationv1.SchemeGroupVersion.WithKind("TokenRequest").GroupKind()
	ttl := int64(3600)
	if tr.Spec.ExpirationSeconds != nil {
		ttl = *tr.Spec.ExpirationSeconds
	}
	if ttl < 600 || ttl > 1<<32 {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("spec", "expirationSeconds"), ttl, "may not specify a duration less than 10 minutes or greater than 2^32 seconds")})
	}
	// The body's name and namespace, when given, must be the URL's.
	if tr.Name != "" && tr.Name != name {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), tr.Name, "must match the service account name if specified")})
	}
	if tr.Namespace != "" && tr.Namespace != ns {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), tr.Namespace, "must match the service account namespace if specified")})
	}
	saObj, err := deps.ServiceAccounts.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	sa := saObj.(*corev1.ServiceAccount)
	var bound serviceaccount.Bound
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		if bound, err = bind(ctx, deps, ns, name, ref); err != nil {
			return nil, err
		}
	}
	now := time.Now()
	token, exp, err := deps.Issuer.Issue(ns, serviceaccount.Ref{Name: sa.Name, UID: string(sa.UID)}, bound, tr.Spec.Audiences, time.Duration(ttl)*time.Second, now)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	tr.Name, tr.Namespace = name, ns
	tr.CreationTimestamp = metav1.NewTime(now.Truncate(time.Second))
	tr.Spec.ExpirationSeconds = &ttl
	if len(tr.Spec.Audiences) == 0 {
		tr.Spec.Audiences = []string{deps.Issuer.Issuer}
	}
	tr.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(exp.Truncate(time.Second))}
	return tr, nil
}

// bind looks up the object ref names, as upstream's TokenREST: a Pod, a
// Secret or a Node of the core group (the version is not looked at), which
// must exist (404 of its resource) and have ref's UID when ref names one
// (409); a pod must run as the service account (400); any other kind is
// refused (400, upstream's "cannot bind token to object of type").
func bind(ctx context.Context, deps rest.TokenDeps, ns, saName string, ref *authenticationv1.BoundObjectReference) (serviceaccount.Bound, error) {
	var b serviceaccount.Bound
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var getter rest.Getter
	var resource, objNS string
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		getter, resource, objNS = deps.Pods, "pods", ns
	case gvk.Group == "" && gvk.Kind == "Secret":
		getter, resource, objNS = deps.Secrets, "secrets", ns
	case gvk.Group == "" && gvk.Kind == "Node":
		getter, resource = deps.Nodes, "nodes"
	default:
		return b, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if getter == nil {
		return b, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s: %s are not served", gvk.String(), resource))
	}
	obj, err := getter.Get(ctx, objNS, ref.Name)
	if err != nil {
		if notFound(err) {
			return b, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, ref.Name)
		}
		return b, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return b, apierrors.NewInternalError(err)
	}
	if ref.UID != "" && ref.UID != m.GetUID() {
		return b, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	self := &serviceaccount.Ref{Name: m.GetName(), UID: string(m.GetUID())}
	switch gvk.Kind {
	case "Pod":
		pod := obj.(*corev1.Pod)
		if pod.Spec.ServiceAccountName != saName {
			return b, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", saName))
		}
		b.Pod = self
		// The pod's node goes into the token too (its UID when the
		// Node object is there), as upstream's.
		if pod.Spec.NodeName != "" {
			b.Node = &serviceaccount.Ref{Name: pod.Spec.NodeName}
			if deps.Nodes != nil {
				n, err := deps.Nodes.Get(ctx, "", pod.Spec.NodeName)
				switch {
				case err == nil:
					b.Node.UID = string(n.(*corev1.Node).UID)
				case !notFound(err):
					return b, apierrors.NewInternalError(err)
				}
			}
		}
	case "Secret":
		b.Secret = self
	case "Node":
		b.Node = self
	}
	return b, nil
}

func notFound(err error) bool {
	return errors.Is(err, storage.ErrNotFound) || apierrors.IsNotFound(err)
}
