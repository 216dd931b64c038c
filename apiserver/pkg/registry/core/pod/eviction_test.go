package pod

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// fakeStore keeps objects by name in one namespace and records the pod
// each status update left and what was deleted.
type fakeStore struct {
	objs    map[string]runtime.Object
	updated []runtime.Object
	deleted []string
}

func (f *fakeStore) Get(_ context.Context, _, name string) (runtime.Object, error) {
	if o, ok := f.objs[name]; ok {
		return o.DeepCopyObject(), nil
	}
	return nil, storage.ErrNotFound
}

func (f *fakeStore) List(context.Context, string, storage.ListOptions) (runtime.Object, error) {
	list := &policyv1.PodDisruptionBudgetList{}
	for _, o := range f.objs {
		list.Items = append(list.Items, *o.(*policyv1.PodDisruptionBudget))
	}
	return list, nil
}

func (f *fakeStore) Update(ctx context.Context, ns, name string, fn rest.UpdateFunc, _ rest.Strategy, dry bool) (runtime.Object, bool, error) {
	cur, err := f.Get(ctx, ns, name)
	if err != nil {
		return nil, false, err
	}
	out, err := fn(ctx, cur, true)
	if err != nil {
		return nil, false, err
	}
	if !dry {
		f.objs[name] = out
		f.updated = append(f.updated, out)
	}
	return out, false, nil
}

func (f *fakeStore) Delete(_ context.Context, _, name string, _ *metav1.DeleteOptions, dry bool) (runtime.Object, bool, error) {
	o, ok := f.objs[name]
	if !ok {
		return nil, false, storage.ErrNotFound
	}
	if !dry {
		delete(f.objs, name)
		f.deleted = append(f.deleted, name)
	}
	return o, true, nil
}

func (f *fakeStore) GuaranteedUpdate(ctx context.Context, ns, name string, _ *storage.Preconditions, fn storage.UpdateFunc) (runtime.Object, error) {
	cur, err := f.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	out, err := fn(cur)
	if err != nil {
		return nil, err
	}
	f.objs[name] = out
	return out, nil
}

func (f *fakeStore) DeleteStored(ctx context.Context, ns, name string, _ *storage.Preconditions) (runtime.Object, error) {
	o, _, err := f.Delete(ctx, ns, name, nil, false)
	return o, err
}

func (f *fakeStore) Time() time.Time { return time.Now() }

func evictionFixture(allowed int32, budgets int) (pods, pdbs *fakeStore) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1", Labels: map[string]string{"app": "a"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	pods = &fakeStore{objs: map[string]runtime.Object{"p": pod}}
	pdbs = &fakeStore{objs: map[string]runtime.Object{}}
	for i := range budgets {
		name := string(rune('a' + i))
		min := intstr.FromInt32(1)
		pdbs.objs[name] = &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Generation: 1},
			Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: &min, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed, CurrentHealthy: 2, DesiredHealthy: 1}}
	}
	return pods, pdbs
}

// A ready pod whose budget allows a disruption is marked DisruptionTarget
// and deleted, and the budget's last disruption is taken.
func TestEvictTakesTheBudget(t *testing.T) {
	pods, pdbs := evictionFixture(1, 1)
	if err := Evict(context.Background(), rest.EvictionDeps{Pods: pods, Budgets: pdbs}, "ns", "p", &metav1.DeleteOptions{}, false); err != nil {
		t.Fatal(err)
	}
	if len(pods.deleted) != 1 || len(pods.updated) != 1 {
		t.Fatalf("deleted %v after %d updates, want the pod deleted after one", pods.deleted, len(pods.updated))
	}
	marked := false
	for _, c := range pods.updated[0].(*corev1.Pod).Status.Conditions {
		marked = marked || (c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "EvictionByEvictionAPI")
	}
	if !marked {
		t.Errorf("the pod was not marked DisruptionTarget before it went")
	}
	pdb := pdbs.objs["a"].(*policyv1.PodDisruptionBudget)
	if pdb.Status.DisruptionsAllowed != 0 || pdb.Status.DisruptedPods["p"].Time.IsZero() {
		t.Errorf("budget after eviction: %+v", pdb.Status)
	}
	if c := pdb.Status.Conditions; len(c) != 1 || c[0].Type != policyv1.DisruptionAllowedCondition || c[0].Status != metav1.ConditionFalse {
		t.Errorf("budget conditions: %+v", c)
	}
}

// A budget with no disruption left refuses with upstream's 429 and its
// cause, and a dry run changes nothing; two budgets are upstream's 500.
func TestEvictRefused(t *testing.T) {
	pods, pdbs := evictionFixture(0, 1)
	err := Evict(context.Background(), rest.EvictionDeps{Pods: pods, Budgets: pdbs}, "ns", "p", &metav1.DeleteOptions{}, false)
	if !apierrors.IsTooManyRequests(err) || len(pods.deleted) != 0 {
		t.Fatalf("err = %v, deleted %v; want 429 and the pod kept", err, pods.deleted)
	}
	if causes := err.(apierrors.APIStatus).Status().Details.Causes; len(causes) != 1 || causes[0].Type != policyv1.DisruptionBudgetCause {
		t.Errorf("causes = %+v", causes)
	}

	pods, pdbs = evictionFixture(1, 1)
	if err := Evict(context.Background(), rest.EvictionDeps{Pods: pods, Budgets: pdbs}, "ns", "p", &metav1.DeleteOptions{}, true); err != nil {
		t.Fatal(err)
	}
	if len(pods.deleted) != 0 || len(pods.updated) != 0 || pdbs.objs["a"].(*policyv1.PodDisruptionBudget).Status.DisruptionsAllowed != 1 {
		t.Errorf("a dry run changed something: deleted %v, updated %d", pods.deleted, len(pods.updated))
	}

	pods, pdbs = evictionFixture(1, 2)
	if err := Evict(context.Background(), rest.EvictionDeps{Pods: pods, Budgets: pdbs}, "ns", "p", &metav1.DeleteOptions{}, false); !apierrors.IsInternalError(err) {
		t.Errorf("two budgets: err = %v, want 500", err)
	}
}
