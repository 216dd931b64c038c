package metricsserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// SchemeGroupVersion is the group-version served.
var SchemeGroupVersion = metricsv1beta1.SchemeGroupVersion

// GroupPriority and VersionPriority are those of metrics-server's
// APIService.
const (
	GroupPriority   = 100
	VersionPriority = 100
	// DefaultResolution is metrics-server's --metric-resolution.
	DefaultResolution = 15 * time.Second
	// scrapeConcurrency bounds the kubelets scraped at once.
	scrapeConcurrency = 32
)

// Scraper reads a node's /metrics/resource.
type Scraper interface {
	Scrape(ctx context.Context, node *corev1.Node) (io.ReadCloser, error)
}

// Options configure a Server.
type Options struct {
	// Resolution is how often the kubelets are scraped.
	Resolution time.Duration
	Scraper    Scraper
	// Nodes lists the nodes; Pods lists the pods of a namespace ("" for
	// all). Both read the server's caches.
	Nodes func(ctx context.Context) ([]*corev1.Node, error)
	Pods  func(ctx context.Context, namespace string) ([]*corev1.Pod, error)
	// Now is the clock of the objects' creationTimestamp and of samples
	// without a timestamp.
	Now func() time.Time
	// Registerer, when set, gets metrics-server's own metrics
	// (metrics_server_kubelet_request_duration_seconds and friends).
	Registerer prometheus.Registerer
}

// Server scrapes the kubelets and serves metrics.k8s.io.
type Server struct {
	o       Options
	storage *storage
	metrics *scrapeMetrics
}

// New returns a Server; Start runs its scrapes.
func New(o Options) *Server {
	if o.Resolution <= 0 {
		o.Resolution = DefaultResolution
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Server{o: o, storage: newStorage(), metrics: newScrapeMetrics(o.Registerer)}
}

// Start scrapes every Ready node now and every resolution after, until
// ctx ends.
func (s *Server) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("metrics")
	ctx = klog.NewContext(ctx, logger)
	t := time.NewTicker(s.o.Resolution)
	defer t.Stop()
	for {
		s.Scrape(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Scrape runs one scrape cycle: every Ready node at once, each within 90%
// of the resolution, and stores what they said.
func (s *Server) Scrape(ctx context.Context) {
	logger := klog.FromContext(ctx)
	start := time.Now()
	nodes, err := s.o.Nodes(ctx)
	if err != nil {
		logger.Error(err, "Listing the nodes to scrape")
		return
	}
	b := newBatch()
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(scrapeConcurrency)
	for _, node := range nodes {
		if !ready(node) {
			continue
		}
		g.Go(func() error {
			nb := newBatch()
			err := s.scrapeNode(gctx, node, nb)
			if err != nil {
				logger.Error(err, "Failed to scrape node", "node", node.Name)
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range nb.nodes {
				b.nodes[k] = v
			}
			for k, v := range nb.pods {
				b.pods[k] = v
			}
			return nil
		})
	}
	_ = g.Wait()
	s.storage.store(b)
	s.metrics.cycle(time.Since(start))
	logger.V(4).Info("Scraped the kubelets", "nodes", len(b.nodes), "pods", len(b.pods), "duration", time.Since(start))
}

func (s *Server) scrapeNode(ctx context.Context, node *corev1.Node, b *batch) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.Resolution*9/10)
	defer cancel()
	start := time.Now()
	body, err := s.o.Scraper.Scrape(ctx, node)
	if err == nil {
		err = decode(body, node.Name, s.o.Now(), b)
		_ = body.Close()
	}
	s.metrics.request(node.Name, time.Since(start), err)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("node %s: no answer within %s: %w", node.Name, s.o.Resolution*9/10, err)
	}
	return err
}

func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Group is the API group as discovery lists it.
func (s *Server) Group() metav1.APIGroup {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: SchemeGroupVersion.String(), Version: SchemeGroupVersion.Version}
	return metav1.APIGroup{Name: SchemeGroupVersion.Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
}

// ResourceList is the group-version's resources, as metrics-server lists
// them.
func (s *Server) ResourceList() *metav1.APIResourceList {
	return &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: SchemeGroupVersion.String(),
		APIResources: []metav1.APIResource{
			{Name: "nodes", Kind: "NodeMetrics", Verbs: metav1.Verbs{"get", "list"}},
			{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: metav1.Verbs{"get", "list"}},
		},
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
