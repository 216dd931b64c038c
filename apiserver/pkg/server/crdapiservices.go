package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
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
// and removes those no CRD serves any more.
type crdAPIServices struct {
	mu   sync.Mutex
	crds map[string]*apiextensionsv1.CustomResourceDefinition
	kick chan struct{}
}

func (c *crdAPIServices) apply(ev watch.Event) {
	crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	c.mu.Lock()
	if ev.Type == watch.Deleted {
		delete(c.crds, crd.Name)
	} else {
		c.crds[crd.Name] = crd
	}
	c.mu.Unlock()
	c.poke()
}

func (c *crdAPIServices) reset() {
	c.mu.Lock()
	c.crds = map[string]*apiextensionsv1.CustomResourceDefinition{}
	c.mu.Unlock()
	c.poke()
}

func (c *crdAPIServices) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// wanted are the APIServices of the CRDs' served group-versions.
func (c *crdAPIServices) wanted() map[string]*apiregistrationv1.APIService {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]*apiregistrationv1.APIService{}
	for _, crd := range c.crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			name := v.Name + "." + crd.Spec.Group
			out[name] = &apiregistrationv1.APIService{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{AutoRegisterLabel: autoRegisterAlways}},
				Spec: apiregistrationv1.APIServiceSpec{
					Group: crd.Spec.Group, Version: v.Name, GroupPriorityMinimum: 1000, VersionPriority: 100,
				},
			}
		}
	}
	return out
}

// runCRDAPIServices feeds from the CRDs' watch cache and reconciles the
// APIServices after each change, once the CRDs have all been read.
func (s *Server) runCRDAPIServices(ctx context.Context) {
	logger := klog.FromContext(ctx)
	c := &crdAPIServices{crds: map[string]*apiextensionsv1.CustomResourceDefinition{}, kick: make(chan struct{}, 1)}
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
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-retry.C:
		}
		if err := s.syncCRDAPIServices(ctx, c.wanted()); err != nil && ctx.Err() == nil {
			logger.Error(err, "keeping the APIServices of the CustomResourceDefinitions")
			retry.Reset(time.Second)
		}
	}
}

// syncCRDAPIServices creates the wanted APIServices that are missing, puts
// back those it manages that drifted, and deletes those it manages that
// are no longer wanted. An APIService someone else made for the same
// group-version is left alone.
func (s *Server) syncCRDAPIServices(ctx context.Context, want map[string]*apiregistrationv1.APIService) error {
	st := s.store("apiregistration.k8s.io", "apiservices")
	obj, err := st.List(ctx, "", storage.ListOptions{})
	if err != nil {
		return err
	}
	var errs []error
	have := map[string]*apiregistrationv1.APIService{}
	for i := range obj.(*apiregistrationv1.APIServiceList).Items {
		api := &obj.(*apiregistrationv1.APIServiceList).Items[i]
		have[api.Name] = api
		if api.Labels[AutoRegisterLabel] == autoRegisterAlways && want[api.Name] == nil {
			if _, _, err := st.Delete(ctx, "", api.Name, &metav1.DeleteOptions{}, false); err != nil && !errors.Is(err, storage.ErrNotFound) {
				errs = append(errs, fmt.Errorf("apiservice %s: %w", api.Name, err))
			}
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w := want[n]
		if cur, ok := have[n]; ok && (cur.Labels[AutoRegisterLabel] != autoRegisterAlways || equality.Semantic.DeepEqual(cur.Spec, w.Spec)) {
			continue
		}
		err := s.upsert(ctx, st, "", n, w, func(cur runtime.Object) bool {
			c := cur.(*apiregistrationv1.APIService)
			return c.Labels[AutoRegisterLabel] != autoRegisterAlways || equality.Semantic.DeepEqual(c.Spec, w.Spec)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("apiservice %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}
