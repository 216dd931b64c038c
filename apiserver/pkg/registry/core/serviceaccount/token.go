package serviceaccount

import (
	"context"
	"errors"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/serviceaccount"
	"skiff.dev/apiserver/pkg/storage"
)

// SubToken names the serviceaccounts/token subresource.
const SubToken = "token"

var podsGR = schema.GroupResource{Resource: "pods"}

// TokenRequest is upstream's TokenREST: a token signed for the service
// account, for expirationSeconds (an hour by default, from 10 minutes to
// 2^32 seconds), optionally bound to a pod, whose node goes into the token
// too (kubectl create token).
func TokenRequest(ctx context.Context, deps rest.TokenDeps, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	gk := authenticationv1.SchemeGroupVersion.WithKind("TokenRequest").GroupKind()
	ttl := int64(3600)
	if tr.Spec.ExpirationSeconds != nil {
		ttl = *tr.Spec.ExpirationSeconds
	}
	if ttl < 600 || ttl > 1<<32 {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("spec", "expirationSeconds"), ttl, "may not specify a duration less than 10 minutes or greater than 2^32 seconds")})
	}
	saObj, err := deps.ServiceAccounts.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	sa := saObj.(*corev1.ServiceAccount)
	var pod, node *serviceaccount.Ref
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		if ref.Kind != "Pod" || (ref.APIVersion != "" && ref.APIVersion != "v1") {
			return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.NotSupported(field.NewPath("spec", "boundObjectRef", "kind"), ref.Kind, []string{"Pod"})})
		}
		p, err := deps.Pods.Get(ctx, ns, ref.Name)
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil, apierrors.NewNotFound(podsGR, ref.Name)
			}
			return nil, err
		}
		po := p.(*corev1.Pod)
		if ref.UID != "" && ref.UID != po.UID {
			return nil, apierrors.NewConflict(podsGR, ref.Name, errUIDMismatch)
		}
		pod = &serviceaccount.Ref{Name: po.Name, UID: string(po.UID)}
		// The pod's node goes into the token too (its UID when the
		// Node object is there), as upstream's.
		if po.Spec.NodeName != "" {
			node = &serviceaccount.Ref{Name: po.Spec.NodeName}
			if deps.Nodes != nil {
				if n, err := deps.Nodes.Get(ctx, "", po.Spec.NodeName); err == nil {
					node.UID = string(n.(*corev1.Node).UID)
				}
			}
		}
	}
	now := time.Now()
	token, exp, err := deps.Issuer.Issue(ns, serviceaccount.Ref{Name: sa.Name, UID: string(sa.UID)}, pod, node, tr.Spec.Audiences, time.Duration(ttl)*time.Second, now)
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

type uidMismatch struct{}

func (uidMismatch) Error() string {
	return "the UID in the bound object reference does not match the pod"
}

var errUIDMismatch = uidMismatch{}
