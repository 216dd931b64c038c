package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/storage"
)

// ToStatusError turns any error into the StatusError a client receives. It
// is the one place where storage sentinels become HTTP codes and reasons.
func ToStatusError(err error, gr schema.GroupResource, name string) *apierrors.StatusError {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return &apierrors.StatusError{ErrStatus: status.Status()}
	}
	var expiredContinue *storage.ContinueExpiredError
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, storage.ErrAlreadyExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, storage.ErrConflict):
		return apierrors.NewConflict(gr, name, errors.New(conflictMessage(err)))
	case errors.As(err, &expiredContinue):
		e := apierrors.NewResourceExpired(expiredContinue.Error())
		e.ErrStatus.ListMeta.Continue = expiredContinue.Continue
		return e
	case errors.Is(err, storage.ErrGone):
		return apierrors.NewResourceExpired(err.Error())
	case errors.Is(err, storage.ErrTooLargeResourceVersion):
		e := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %v", err), 1)
		e.ErrStatus.Details = &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}, RetryAfterSeconds: 1}
		return e
	case errors.Is(err, storage.ErrTooLarge):
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the object is too large to store: %v", err))
	case errors.Is(err, storage.ErrInvalid):
		return apierrors.NewBadRequest(err.Error())
	case errors.Is(err, storage.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		// No Retry-After: clients should see the failure now, not retry silently.
		return apierrors.NewTimeoutError(fmt.Sprintf("the storage did not answer in time: %v", err), 0)
	case errors.Is(err, storage.ErrUnavailable):
		return apierrors.NewServiceUnavailable(fmt.Sprintf("the storage is unavailable: %v", err))
	case errors.Is(err, context.Canceled):
		return apierrors.NewTimeoutError("the request was cancelled", 0)
	}
	return apierrors.NewInternalError(err)
}

// writeError answers with the Status for err, in the negotiated format.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error, gr schema.GroupResource, name string) {
	se := ToStatusError(err, gr, name)
	status := se.Status()
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if status.Status == "" {
		status.Status = metav1.StatusFailure
	}
	code := int(status.Code)
	if code == 0 {
		code = http.StatusInternalServerError
		status.Code = int32(code)
	}
	if status.Details != nil && status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(status.Details.RetryAfterSeconds))
	}
	h.writeObject(w, r, code, &status)
}

func conflictMessage(err error) string {
	// Strip the sentinel's own text: "conflict: <message>".
	msg := err.Error()
	prefix := storage.ErrConflict.Error() + ": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

// schemaGR names no resource, for errors outside a resource request.
var schemaGR = schema.GroupResource{}

// notFoundPath is upstream's answer for a path that serves nothing.
func notFoundPath(path string) error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "get", schema.GroupResource{}, "", "the server could not find the requested resource", 0, false)
}

func newNotAcceptable(msg string) error {
	return apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "", schema.GroupResource{}, "", msg, 0, false)
}

func newUnsupportedMediaType(contentType string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got %q)", contentType),
	}}
}
