package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"skiff.dev/apiserver/pkg/storage"
)

// autoRegisterAlways marks the APIServices kept in sync with the
// CustomResourceDefinitions, as upstream's CRD registration controller
// does through the autoregister controller.
const autoRegisterAlways = "true"

// crdAPIServices keeps a local APIService for each group-version a CRD
// serves (groupPriorityMinimum 1000, versionPriority 100, as upstream),
// and removes those no CRD serves any more. As upstream's CRD registration
// controller, a change of a CRD queues the APIServices of the
// group-versions it served and serves, and each is reconciled by name.
type crdAPIServices struct {
	mu    sync.Mutex
	crds  map[string]*apiextensionsv1.CustomResourceDefinition
	queue workqueue.TypedRateLimitingInterface[string]
}

// apiServiceNames are the names of the APIServices of crd's served
// group-versions.
func apiServiceNames(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, v.Name+"."+crd.Spec.Group)
		}
	}
	return out
}

func (c *crdAPIServices) apply(ev watch.Event) {
	crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	c.mu.Lock()
	old := c.crds[crd.Name]
	if ev.Type == watch.Deleted {
		delete(c.crds, crd.Name)
	} else {
		c.crds[crd.Name] = crd
	}
	c.mu.Unlock()
	if old != nil {
		c.enqueue(apiServiceNames(old)...)
	}
	c.enqueue(apiServiceNames(crd)...)
}

// reset forgets the CRDs before their whole state is applied again; the
// APIServices of those forgotten are checked (those still served come
// back with their CRDs).
func (c *crdAPIServices) reset() {
	c.mu.Lock()
	old := c.crds
	c.crds = map[string]*apiextensionsv1.CustomResourceDefinition{}
	c.mu.Unlock()
	for _, crd := range old {
		c.enqueue(apiServiceNames(crd)...)
	}
}

func (c *crdAPIServices) enqueue(names ...string) {
	for _, n := range names {
		c.queue.Add(n)
	}
}

// wanted is the APIService that the CRDs need under name, nil if none
// serves that group-version.
func (c *crdAPIServices) wanted(name string) *apiregistrationv1.APIService {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, crd := range c.crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Name+"."+crd.Spec.Group != name {
				continue
			}
			return &apiregistrationv1.APIService{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{AutoRegisterLabel: autoRegisterAlways}},
				Spec: apiregistrationv1.APIServiceSpec{
					Group: crd.Spec.Group, Version: v.Name, GroupPriorityMinimum: 1000, VersionPriority: 100,
				},
			}
		}
	}
	return nil
}

// runCRDAPIServices feeds from the CRDs' watch cache and, once the CRDs
// have all been read, reconciles the APIServices their changes queue. At
// start it also queues the APIServices it manages that no CRD serves any
// more (left from before a restart).
func (s *Server) runCRDAPIServices(ctx context.Context) {
	logger := klog.FromContext(ctx)
	c := &crdAPIServices{
		crds: map[string]*apiextensionsv1.CustomResourceDefinition{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "crd_autoregistration"}),
	}
	defer c.queue.ShutDown()
	stop := context.AfterFunc(ctx, c.queue.ShutDown)
	defer stop()
	synced := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.feed(ctx, s.store(apiextensionsv1.GroupName, "customresourcedefinitions"), nil, c.apply, c.reset, synced)
	}()
	defer wg.Wait()
	select {
	case <-synced:
	case <-ctx.Done():
		return
	}
	st := s.store("apiregistration.k8s.io", "apiservices")
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := st.List(ctx, "", storage.ListOptions{})
		if err != nil {
			logger.Error(err, "listing the APIServices of the CustomResourceDefinitions")
			return false, nil
		}
		for _, api := range obj.(*apiregistrationv1.APIServiceList).Items {
			if api.Labels[AutoRegisterLabel] == autoRegisterAlways {
				c.enqueue(api.Name)
			}
		}
		return true, nil
	})
	if err != nil {
		return
	}
	for {
		name, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		if err := s.syncCRDAPIService(ctx, name, c.wanted(name)); err != nil && ctx.Err() == nil {
			logger.Error(err, "keeping the APIService of the CustomResourceDefinitions", "apiservice", name)
			c.queue.AddRateLimited(name)
		} else {
			c.queue.Forget(name)
		}
		c.queue.Done(name)
	}
}

// syncCRDAPIService makes the APIService name what want says: created when
// missing, put back when it drifted, deleted when no CRD wants it. An
// APIService someone else made for the same group-version is left alone.
func (s *Server) syncCRDAPIService(ctx context.Context, name string, want *apiregistrationv1.APIService) error {
	st := s.store("apiregistration.k8s.io", "apiservices")
	managedAndEqual := func(cur runtime.Object) bool {
		c := cur.(*apiregistrationv1.APIService)
		return c.Labels[AutoRegisterLabel] != autoRegisterAlways || equality.Semantic.DeepEqual(c.Spec, want.Spec)
	}
	if want != nil {
		return s.upsert(ctx, st, "", name, want, managedAndEqual)
	}
	cur, err := st.Get(ctx, "", name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur.(*apiregistrationv1.APIService).Labels[AutoRegisterLabel] != autoRegisterAlways {
		return nil
	}
	if _, _, err := st.Delete(ctx, "", name, &metav1.DeleteOptions{}, false); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("deleting: %w", err)
	}
	return nil
}
