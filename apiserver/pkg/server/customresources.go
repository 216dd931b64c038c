package server

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/apiextensions"
	"skiff.dev/apiserver/pkg/openapi"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
	"skiff.dev/apiserver/pkg/storage/cacher"
	"skiff.dev/apiserver/pkg/storage/etcd3"
	"skiff.dev/apiserver/pkg/webhook"
)

// newCustomStorage builds the storage of a custom resource: JSON in etcd,
// as upstream stores custom resources, behind a watch cache. Objects keep
// the apiVersion they were stored with (not stamped with r's, the storage
// version now): objects written before the storage version changed are at
// an older version, and conversion starts from the version they are at.
func (s *Server) newCustomStorage(r *registry.Resource) (storage.Interface, func(ctx context.Context) error) {
	gvk := r.GroupVersionKind()
	store := etcd3.New(etcd3.Config{
		Client: s.etcd.client, Codec: unstructured.UnstructuredJSONScheme, NewFunc: r.New, NewListFunc: r.NewList,
		ResourcePrefix: "/registry/" + r.EtcdPrefix + "/", GroupResource: r.GroupResource(),
		RequestTimeout: s.opts.EtcdRequestTimeout, Observe: s.metrics.ObserveEtcd,
	})
	reg := &registry.Store{R: r}
	c := cacher.New(cacher.Config{
		Store: store, GetAttrs: reg.AttrFunc(), NewFunc: r.New, NewListFunc: r.NewList,
		WindowSize: s.opts.WatchCacheSize, BookmarkInterval: s.opts.BookmarkInterval, GVK: gvk,
		OnWatchersChanged: func(n int) {
			s.metrics.RegisteredWatchers.WithLabelValues(gvk.Group, gvk.Version, gvk.Kind).Set(float64(n))
		},
	})
	return c, c.Start
}

// newCRDController builds the controller that serves custom resources.
func (s *Server) newCRDController() *apiextensions.Controller {
	return &apiextensions.Controller{
		CRDs:       s.store("apiextensions.k8s.io", "customresourcedefinitions"),
		NewStorage: s.newCustomStorage,
		Admission:  s.compiledAdmission,
		Webhooks:   &webhook.Clients{Resolve: s.resolveWebhookService},
		Serve:      s.serveCustom,
		Synced:     s.crdSynced,
	}
}

// serveCustom installs the custom resources served now: the REST routes
// and discovery read them from the handler at once; the OpenAPI documents
// are rebuilt with their schemas in the background (runOpenAPIRebuilds), so
// that a CRD turns Established without waiting for them.
func (s *Server) serveCustom(stores []*registry.Store) {
	s.handler.SetCustom(stores)
	select {
	case s.openapiStale <- struct{}{}:
	default:
		// A rebuild is already pending; it will read the latest resources.
	}
}

// runOpenAPIRebuilds rebuilds the OpenAPI documents each time the custom
// resources change, until ctx ends.
func (s *Server) runOpenAPIRebuilds(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.openapiStale:
		}
		custom := s.handler.CustomResources()
		if len(custom) == 0 {
			s.openapi.Set(nil)
			continue
		}
		base, err := s.openapi.Base()
		if err != nil {
			logger.Error(err, "building the OpenAPI documents of the built-in kinds")
			continue
		}
		spec, err := base.Extend(registry.OpenAPIResources(custom))
		if err != nil {
			// A custom resource in a built-in group-version: build it all.
			resources := append(append([]*registry.Resource{}, s.resources...), custom...)
			spec, err = openapi.New(s.openAPIResources(resources))
		}
		if err != nil {
			logger.Error(err, "rebuilding the OpenAPI documents with the custom resources; serving the previous ones")
			continue
		}
		s.openapi.Set(spec)
	}
}
