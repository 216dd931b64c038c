package storage

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func metaOf(obj runtime.Object) (metav1.Object, error) {
	return meta.Accessor(obj)
}

// ParseResourceVersion turns a resourceVersion string into an etcd revision.
// "" and "0" are 0.
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	for _, c := range rv {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: resourceVersion %q is not a valid revision", ErrInvalid, rv)
		}
	}
	v, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%w: resourceVersion %q is not a valid revision", ErrInvalid, rv)
	}
	return v, nil
}

// SetResourceVersion writes rev into obj's metadata (or list metadata).
func SetResourceVersion(obj runtime.Object, rev int64) error {
	s := ""
	if rev > 0 {
		s = strconv.FormatInt(rev, 10)
	}
	if l, ok := obj.(metav1.ListInterface); ok {
		l.SetResourceVersion(s)
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion(s)
	return nil
}

// ObjectRevision reads obj's resourceVersion as a revision.
func ObjectRevision(obj runtime.Object) (int64, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	return ParseResourceVersion(m.GetResourceVersion())
}
