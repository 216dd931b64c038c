package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/util/retry"
)

// ControllerRevisionHashLabel is the label of a ControllerRevision that
// holds the hash of its data (upstream's history.ControllerRevisionHashLabel).
// Pods carry the name of their revision under
// appsv1.ControllerRevisionHashLabelKey ("controller-revision-hash").
const ControllerRevisionHashLabel = "controller.kubernetes.io/hash"

// maxPrefixLength keeps "<prefix>-<hash>" within a DNS subdomain name
// (253 characters): the hash is at most 10 characters.
const maxPrefixLength = 223

// ControllerRevisionName is "<prefix>-<hash>", the prefix cut to 223
// characters.
func ControllerRevisionName(prefix, hash string) string {
	if len(prefix) > maxPrefixLength {
		prefix = prefix[:maxPrefixLength]
	}
	return fmt.Sprintf("%s-%s", prefix, hash)
}

// NewControllerRevision returns a revision of parent (of kind parentKind)
// holding data, labelled with templateLabels and its hash, numbered
// revision, owned by parent and named from its hash with collisionCount.
// It is not created.
func NewControllerRevision(parent metav1.Object, parentKind schema.GroupVersionKind, templateLabels map[string]string,
	data runtime.RawExtension, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	labelMap := make(map[string]string, len(templateLabels)+1)
	for k, v := range templateLabels {
		labelMap[k] = v
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       parent.GetNamespace(),
			Labels:          labelMap,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, parentKind)},
		},
		Data:     data,
		Revision: revision,
	}
	hash := HashControllerRevision(cr, collisionCount)
	cr.Name = ControllerRevisionName(parent.GetName(), hash)
	cr.Labels[ControllerRevisionHashLabel] = hash
	return cr
}

// HashControllerRevision hashes revision's data as upstream does: FNV-32
// of the raw bytes (or of the deep-printed object), then probe in decimal
// when set, encoded with rand.SafeEncodeString.
func HashControllerRevision(revision *appsv1.ControllerRevision, probe *int32) string {
	hf := fnv.New32()
	if len(revision.Data.Raw) > 0 {
		hf.Write(revision.Data.Raw)
	}
	if revision.Data.Object != nil {
		// As upstream's hashutil.DeepHashObject, which resets the hasher.
		hf.Reset()
		fmt.Fprintf(hf, "%v", dump.ForHash(revision.Data.Object))
	}
	if probe != nil {
		hf.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(hf.Sum32()))
}

// SortControllerRevisions sorts revisions by revision number, then
// creation time, then name, oldest first.
func SortControllerRevisions(revisions []*appsv1.ControllerRevision) {
	sort.SliceStable(revisions, func(i, j int) bool {
		a, b := revisions[i], revisions[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// EqualRevision reports whether lhs and rhs hold the same data. Their hash
// labels, when both parse as numbers, must also agree (upstream's check).
func EqualRevision(lhs, rhs *appsv1.ControllerRevision) bool {
	if lhs == nil || rhs == nil {
		return lhs == rhs
	}
	lh, lok := parseHash(lhs)
	rh, rok := parseHash(rhs)
	if lok && rok && lh != rh {
		return false
	}
	return bytes.Equal(lhs.Data.Raw, rhs.Data.Raw) && apiequality.Semantic.DeepEqual(lhs.Data.Object, rhs.Data.Object)
}

func parseHash(cr *appsv1.ControllerRevision) (uint32, bool) {
	hs, ok := cr.Labels[ControllerRevisionHashLabel]
	if !ok {
		return 0, false
	}
	h, err := strconv.ParseInt(hs, 10, 32)
	if err != nil {
		return 0, false
	}
	return uint32(h), true
}

// FindEqualRevisions returns the revisions of revisions that are
// EqualRevision to needle, in their order.
func FindEqualRevisions(revisions []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var eq []*appsv1.ControllerRevision
	for _, r := range revisions {
		if EqualRevision(r, needle) {
			eq = append(eq, r)
		}
	}
	return eq
}

// NextRevision is one more than the highest revision number of revisions,
// which must be sorted (SortControllerRevisions); 1 when there is none.
func NextRevision(revisions []*appsv1.ControllerRevision) int64 {
	if len(revisions) == 0 {
		return 1
	}
	return revisions[len(revisions)-1].Revision + 1
}

// Interface reads and writes the ControllerRevisions of controllers.
type Interface interface {
	// ListControllerRevisions returns the revisions in parent's namespace
	// that match selector and are owned by parent or by no controller.
	// The returned objects are the cache's: copy before changing.
	ListControllerRevisions(parent metav1.Object, selector labels.Selector) ([]*appsv1.ControllerRevision, error)
	// CreateControllerRevision creates revision, named from its hash with
	// *collisionCount. When a revision of that name exists with other
	// data, it increments *collisionCount and tries the next name; when
	// it exists with the same data, it returns the existing one.
	CreateControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error)
	// DeleteControllerRevision deletes revision.
	DeleteControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision) error
	// UpdateControllerRevision sets revision's number to newRevision,
	// retrying on conflicts.
	UpdateControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision, newRevision int64) (*appsv1.ControllerRevision, error)
	// AdoptControllerRevision makes parent (of kind parentKind) the
	// controller of the orphan revision.
	AdoptControllerRevision(ctx context.Context, parent metav1.Object, parentKind schema.GroupVersionKind, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error)
	// ReleaseControllerRevision removes parent's ownerReference from
	// revision; a revision gone or invalid meanwhile gives nil, nil.
	ReleaseControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error)
}

// NewHistory returns the Interface that reads from lister and writes
// through client.
func NewHistory(client kubernetes.Interface, lister appslisters.ControllerRevisionLister) Interface {
	return &realHistory{client: client, lister: lister}
}

type realHistory struct {
	client kubernetes.Interface
	lister appslisters.ControllerRevisionLister
}

func (rh *realHistory) ListControllerRevisions(parent metav1.Object, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	all, err := rh.lister.ControllerRevisions(parent.GetNamespace()).List(selector)
	if err != nil {
		return nil, err
	}
	var owned []*appsv1.ControllerRevision
	for _, r := range all {
		ref := metav1.GetControllerOfNoCopy(r)
		if ref == nil || ref.UID == parent.GetUID() {
			owned = append(owned, r)
		}
	}
	return owned, nil
}

func (rh *realHistory) CreateControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, fmt.Errorf("collisionCount should not be nil")
	}
	clone := revision.DeepCopy()
	ns := parent.GetNamespace()
	clone.Namespace = ns
	if clone.Labels == nil {
		clone.Labels = map[string]string{}
	}
	for {
		hash := HashControllerRevision(revision, collisionCount)
		clone.Name = ControllerRevisionName(parent.GetName(), hash)
		clone.Labels[ControllerRevisionHashLabel] = hash
		created, err := rh.client.AppsV1().ControllerRevisions(ns).Create(ctx, clone, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			return created, err
		}
		exists, err := rh.client.AppsV1().ControllerRevisions(ns).Get(ctx, clone.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if bytes.Equal(exists.Data.Raw, clone.Data.Raw) {
			return exists, nil
		}
		*collisionCount++
	}
}

func (rh *realHistory) DeleteControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision) error {
	return rh.client.AppsV1().ControllerRevisions(revision.Namespace).Delete(ctx, revision.Name, metav1.DeleteOptions{})
}

func (rh *realHistory) UpdateControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision, newRevision int64) (*appsv1.ControllerRevision, error) {
	clone := revision.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if clone.Revision == newRevision {
			return nil
		}
		clone.Revision = newRevision
		updated, err := rh.client.AppsV1().ControllerRevisions(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
		if err == nil {
			clone = updated
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		// A fresher copy (from the server: the cache may be behind our own
		// writes) for the next attempt.
		fresh, getErr := rh.client.AppsV1().ControllerRevisions(clone.Namespace).Get(ctx, clone.Name, metav1.GetOptions{})
		if getErr == nil {
			clone = fresh
		}
		return err
	})
	return clone, err
}

type objectForPatch struct {
	Metadata objectMetaForPatch `json:"metadata"`
}

type objectMetaForPatch struct {
	OwnerReferences []map[string]any `json:"ownerReferences"`
	UID             types.UID        `json:"uid"`
}

func (rh *realHistory) AdoptControllerRevision(ctx context.Context, parent metav1.Object, parentKind schema.GroupVersionKind, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if owner := metav1.GetControllerOfNoCopy(revision); owner != nil {
		return nil, fmt.Errorf("attempt to adopt revision %s/%s owned by %s %s", revision.Namespace, revision.Name, owner.Kind, owner.Name)
	}
	data, err := json.Marshal(objectForPatch{Metadata: objectMetaForPatch{
		OwnerReferences: []map[string]any{{
			"apiVersion": parentKind.GroupVersion().String(), "kind": parentKind.Kind,
			"name": parent.GetName(), "uid": parent.GetUID(),
			"controller": true, "blockOwnerDeletion": true,
		}},
		UID: revision.UID,
	}})
	if err != nil {
		return nil, err
	}
	return rh.client.AppsV1().ControllerRevisions(parent.GetNamespace()).Patch(ctx, revision.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
}

func (rh *realHistory) ReleaseControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	data, err := json.Marshal(objectForPatch{Metadata: objectMetaForPatch{
		OwnerReferences: []map[string]any{{"$patch": "delete", "uid": parent.GetUID()}},
		UID:             revision.UID,
	}})
	if err != nil {
		return nil, err
	}
	released, err := rh.client.AppsV1().ControllerRevisions(revision.Namespace).Patch(ctx, revision.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		// Gone, or its uid changed (a new object of the same name): there
		// is nothing of ours to release.
		return nil, nil
	}
	return released, err
}
