package clusterroleaggregation

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func role(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func aggregated(name string, labels map[string]string, selectors ...map[string]string) *rbacv1.ClusterRole {
	cr := role(name, labels)
	cr.AggregationRule = &rbacv1.AggregationRule{}
	for _, s := range selectors {
		cr.AggregationRule.ClusterRoleSelectors = append(cr.AggregationRule.ClusterRoleSelectors, metav1.LabelSelector{MatchLabels: s})
	}
	return cr
}

func withRules(cr *rbacv1.ClusterRole, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	cr = cr.DeepCopy()
	cr.Rules = rules
	return cr
}

func r(verb, resource string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{""}, Resources: []string{resource}}
}

var (
	toEdit  = map[string]string{"rbac.authorization.k8s.io/aggregate-to-edit": "true"}
	toAdmin = map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}
	toExtra = map[string]string{"extra": "true"}
)

// newTest builds a controller over a fake clientset holding objs, with the
// informer's cache filled with them.
func newTest(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Rbac().V1().ClusterRoles()
	c, err := NewController(client, inf, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, o := range objs {
		if err := inf.Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return c, client
}

// writes returns the rules each apply or update sent, in order.
func writes(t *testing.T, client *fake.Clientset) (verbs []string, rules [][]rbacv1.PolicyRule) {
	t.Helper()
	for _, a := range client.Actions() {
		switch a := a.(type) {
		case clienttesting.PatchActionImpl:
			if a.GetPatchType() != types.ApplyPatchType {
				t.Fatalf("patch of type %s", a.GetPatchType())
			}
			var cr rbacv1.ClusterRole
			if err := json.Unmarshal(a.GetPatch(), &cr); err != nil {
				t.Fatal(err)
			}
			verbs = append(verbs, "apply")
			rules = append(rules, cr.Rules)
		case clienttesting.UpdateActionImpl:
			verbs = append(verbs, "update")
			rules = append(rules, a.GetObject().(*rbacv1.ClusterRole).Rules)
		}
	}
	return verbs, rules
}

func TestSync(t *testing.T) {
	pods, deploys, secrets, leases := r("get", "pods"), r("create", "deployments"), r("get", "secrets"), r("list", "leases")
	edit := aggregated("edit", toAdmin, toEdit, toExtra)
	tests := []struct {
		name string
		objs []runtime.Object
		sync string
		// want is the rules written; nil: nothing written.
		want []rbacv1.PolicyRule
	}{
		{
			name: "union by selector then name, each rule once, itself left out",
			objs: []runtime.Object{
				withRules(edit, r("delete", "stale")),
				role("b-crd", toEdit, deploys, pods),
				role("a-crd", toEdit, pods),
				role("z-extra", toExtra, secrets, deploys),
				role("other", map[string]string{"unrelated": "true"}, leases),
			},
			sync: "edit",
			want: []rbacv1.PolicyRule{pods, deploys, secrets},
		},
		{
			name: "an aggregated role feeds another with the rules written into it",
			objs: []runtime.Object{
				aggregated("admin", nil, toAdmin),
				withRules(edit, pods, deploys),
				role("system:aggregate-to-admin", toAdmin, leases),
			},
			sync: "admin",
			want: []rbacv1.PolicyRule{pods, deploys, leases},
		},
		{
			name: "up to date",
			objs: []runtime.Object{withRules(edit, pods), role("a-crd", toEdit, pods)},
			sync: "edit",
		},
		{
			name: "the last feeder gone: the rules emptied",
			objs: []runtime.Object{withRules(edit, pods)},
			sync: "edit",
			want: []rbacv1.PolicyRule{},
		},
		{
			name: "not aggregated",
			objs: []runtime.Object{role("plain", toEdit, pods)},
			sync: "plain",
		},
		{
			name: "gone",
			sync: "edit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, client := newTest(t, tt.objs...)
			if err := c.sync(context.Background(), tt.sync); err != nil {
				t.Fatal(err)
			}
			verbs, rules := writes(t, client)
			if tt.want == nil {
				if len(verbs) != 0 {
					t.Fatalf("writes %v, want none", verbs)
				}
				return
			}
			wantVerb := "apply"
			if len(tt.want) == 0 {
				wantVerb = "update"
			}
			if len(verbs) != 1 || verbs[0] != wantVerb {
				t.Fatalf("writes %v, want one %s", verbs, wantVerb)
			}
			if !equality.Semantic.DeepEqual(rules[0], tt.want) {
				t.Errorf("applied rules %+v, want %+v", rules[0], tt.want)
			}
			stored, err := client.RbacV1().ClusterRoles().Get(context.Background(), tt.sync, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(stored.Rules, tt.want) || stored.AggregationRule == nil {
				t.Errorf("stored %+v, want rules %+v and the aggregationRule kept", stored, tt.want)
			}
		})
	}
}

func TestSyncFallsBackToUpdate(t *testing.T) {
	pods := r("get", "pods")
	c, client := newTest(t, aggregated("edit", nil, toEdit), role("crd", toEdit, pods))
	client.PrependReactor("patch", "clusterroles", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", rbacv1.Resource("clusterroles"), "edit", "", 0, true)
	})
	if err := c.sync(context.Background(), "edit"); err != nil {
		t.Fatal(err)
	}
	verbs, rules := writes(t, client)
	if !slices.Equal(verbs, []string{"apply", "update"}) || !equality.Semantic.DeepEqual(rules[1], []rbacv1.PolicyRule{pods}) {
		t.Fatalf("writes %v %+v, want an apply then an update with the rules", verbs, rules)
	}
}

func TestSyncErrors(t *testing.T) {
	bad := aggregated("bad", nil)
	bad.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Sideways"}}}}
	c, client := newTest(t, bad, role("crd", toEdit, r("get", "pods")))
	if err := c.sync(context.Background(), "bad"); err == nil {
		t.Error("an invalid selector synced without an error")
	}
	c, client = newTest(t, aggregated("edit", nil, toEdit), role("crd", toEdit, r("get", "pods")))
	client.PrependReactor("patch", "clusterroles", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(rbacv1.Resource("clusterroles"), "edit", nil)
	})
	if err := c.sync(context.Background(), "edit"); !apierrors.IsConflict(err) {
		t.Errorf("a refused write: %v, want the conflict back (retried by the queue)", err)
	}
}

// TestEventsQueueEveryAggregatedRole: any ClusterRole's change queues each
// aggregated role, and only those.
func TestEventsQueueEveryAggregatedRole(t *testing.T) {
	client := fake.NewClientset(aggregated("admin", nil, toAdmin), aggregated("edit", toAdmin, toEdit), role("crd", toEdit, r("get", "pods")))
	f := informers.NewSharedInformerFactory(client, 0)
	c, err := NewController(client, f.Rbac().V1().ClusterRoles(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.queue.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	// The informer's three adds reach the handler after the sync.
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return c.queue.Len() >= 2, nil
	}); err != nil {
		t.Fatalf("queued %d keys, want 2", c.queue.Len())
	}
	var got []string
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		got = append(got, k)
		c.queue.Done(k)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"admin", "edit"}) {
		t.Errorf("queued %v, want [admin edit]", got)
	}
}

func TestAggregateOrder(t *testing.T) {
	a, b := r("get", "a"), r("get", "b")
	cr := aggregated("x", nil, toExtra, toEdit)
	got, err := Aggregate(cr, []*rbacv1.ClusterRole{role("1", toEdit, a), role("2", toExtra, b), role("3", toExtra, a)})
	if err != nil {
		t.Fatal(err)
	}
	// The first selector's roles first (2, 3), then the second's (1).
	if want := []rbacv1.PolicyRule{b, a}; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("rules %+v, want %+v", got, want)
	}
}
