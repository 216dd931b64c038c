package clusterroleaggregation

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName is the controller's name, as upstream names it; it is
// also the field manager of its writes.
const ControllerName = "clusterrole-aggregation-controller"

// Controller writes aggregated ClusterRoles' rules.
type Controller struct {
	client  kubernetes.Interface
	lister  rbaclisters.ClusterRoleLister
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	metrics *metrics.Metrics
}

// NewController builds the controller over the ClusterRole informer.
func NewController(client kubernetes.Interface, informer rbacinformers.ClusterRoleInformer, m *metrics.Metrics) (*Controller, error) {
	c := &Controller{
		client: client,
		lister: informer.Lister(),
		synced: informer.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "ClusterRoleAggregator")),
		metrics: m,
	}
	// Any change may concern any aggregated role (its labels may start or
	// stop matching, an aggregated role feeds another): queue them all, as
	// upstream does; they are few.
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueueAggregated() },
		UpdateFunc: func(_, _ any) { c.enqueueAggregated() },
		DeleteFunc: func(any) { c.enqueueAggregated() },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueueAggregated() {
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("listing ClusterRoles: %w", err))
		return
	}
	for _, cr := range all {
		if cr.AggregationRule != nil {
			c.queue.Add(cr.Name)
		}
	}
}

// Run waits for the informer cache, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: []cache.InformerSynced{c.synced},
	}.Run(ctx, workers)
}

// Aggregate is the rules an aggregated ClusterRole gets from roles: for
// each selector in turn, the rules of the ClusterRoles it matches (itself
// left out) by name, each rule once. An invalid selector is an error.
func Aggregate(cr *rbacv1.ClusterRole, roles []*rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	roles = slices.Clone(roles)
	slices.SortFunc(roles, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	rules := []rbacv1.PolicyRule{}
	for i := range cr.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&cr.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, fmt.Errorf("clusterRoleSelectors[%d]: %w", i, err)
		}
		for _, other := range roles {
			if other.Name == cr.Name || !sel.Matches(labels.Set(other.Labels)) {
				continue
			}
			for _, r := range other.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, r) }) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules, nil
}

// sync writes the aggregated ClusterRole name's rules when they differ
// from the union.
func (c *Controller) sync(ctx context.Context, name string) error {
	cr, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cr.AggregationRule == nil {
		return nil
	}
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	rules, err := Aggregate(cr, all)
	if err != nil {
		return fmt.Errorf("ClusterRole %s: %w", name, err)
	}
	if equality.Semantic.DeepEqual(rules, cr.Rules) {
		return nil
	}
	// An apply without rules would leave rules another manager wrote in
	// place (an empty list is not sent): no rules are written by update.
	if len(rules) > 0 {
		err = c.apply(ctx, name, rules)
	}
	if len(rules) == 0 || apierrors.IsUnsupportedMediaType(err) {
		// No rules, or a server without server-side apply: the rules
		// replaced by an update, upstream's fallback.
		fixed := cr.DeepCopy()
		fixed.Rules = rules
		_, err = c.client.RbacV1().ClusterRoles().Update(ctx, fixed, metav1.UpdateOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("writing the rules of ClusterRole %s: %w", name, err)
	}
	klog.FromContext(ctx).V(2).Info("Aggregated rules", "clusterRole", name, "rules", len(rules))
	return nil
}

// apply owns the rules with a forced server-side apply, as upstream.
func (c *Controller) apply(ctx context.Context, name string, rules []rbacv1.PolicyRule) error {
	ac := rbacv1ac.ClusterRole(name)
	for _, r := range rules {
		p := rbacv1ac.PolicyRule().WithVerbs(r.Verbs...).WithAPIGroups(r.APIGroups...).WithResources(r.Resources...).
			WithResourceNames(r.ResourceNames...).WithNonResourceURLs(r.NonResourceURLs...)
		ac.WithRules(p)
	}
	_, err := c.client.RbacV1().ClusterRoles().Apply(ctx, ac, metav1.ApplyOptions{FieldManager: ControllerName, Force: true})
	return err
}
