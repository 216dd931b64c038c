package serving

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SubjectAccessReviewer asks the API server whether a user may get a
// non-resource path, as upstream's delegated authorization does.
type SubjectAccessReviewer struct {
	Client kubernetes.Interface
}

// Authorize creates a SubjectAccessReview for (user, groups, get path).
func (a SubjectAccessReviewer) Authorize(ctx context.Context, user string, groups []string, path string) (bool, string, error) {
	review, err := a.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	return review.Status.Allowed, review.Status.Reason, nil
}
