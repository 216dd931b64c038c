package endpoints

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/endpointslice"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

const (
	// ControllerName names the controller and the source of its events
	// (upstream's event source).
	ControllerName = "endpoint-controller"
	// LabelManagedBy marks the Endpoints this controller writes (the label
	// upstream adds from v1.33); only those are deleted when their Service
	// goes.
	LabelManagedBy = "endpoints.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value.
	ManagedBy = "endpoint-controller"
	// MaxCapacity is the most addresses an Endpoints object gets; beyond
	// it the addresses are truncated and the object annotated.
	MaxCapacity = 1000
	// truncated is the endpoints.kubernetes.io/over-capacity value.
	truncated = "truncated"
)

// Options tune the controller; the zero value is upstream's defaults.
type Options struct {
	// BatchPeriod delays the sync after a pod change (0: none).
	BatchPeriod time.Duration
}

// Controller is the Endpoints controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics

	serviceLister   corelisters.ServiceLister
	podIndexer      cache.Indexer
	endpointsLister corelisters.EndpointsLister
	synced          []cache.InformerSynced

	stale        *staleTracker
	triggerTimes *endpointslice.TriggerTimeTracker
	queue        workqueue.TypedRateLimitingInterface[string]
	batchPeriod  time.Duration
}

// NewController builds the controller and registers its informer handlers.
// recorder's events should have ControllerName as source.
func NewController(client kubernetes.Interface, podInformer coreinformers.PodInformer, serviceInformer coreinformers.ServiceInformer,
	endpointsInformer coreinformers.EndpointsInformer, recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if opts.BatchPeriod < 0 {
		return nil, fmt.Errorf("the updates batch period must not be negative, not %s", opts.BatchPeriod)
	}
	if err := endpointslice.AddPodLabelIndex(podInformer.Informer()); err != nil {
		return nil, fmt.Errorf("adding the pod label index: %w", err)
	}
	c := &Controller{
		client:          client,
		recorder:        recorder,
		metrics:         m,
		serviceLister:   serviceInformer.Lister(),
		podIndexer:      podInformer.Informer().GetIndexer(),
		endpointsLister: endpointsInformer.Lister(),
		synced: []cache.InformerSynced{podInformer.Informer().HasSynced, serviceInformer.Informer().HasSynced,
			endpointsInformer.Informer().HasSynced},
		stale:        &staleTracker{versions: map[string]string{}},
		triggerTimes: endpointslice.NewTriggerTimeTracker(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "endpoint")),
		batchPeriod: opts.BatchPeriod,
	}
	_, _ = serviceInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.enqueue,
	})
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	})
	// An Endpoints deleted by someone else is written again.
	_, _ = endpointsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueue})
	return c, nil
}

// Run waits for the caches, queues the Endpoints left by Services deleted
// while no controller ran, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
		Started: c.queueLeftoverEndpoints,
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	svcs, err := endpointslice.ServicesForPod(c.serviceLister, pod)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("unable to get pod %s/%s's services: %w", pod.Namespace, pod.Name, err))
		return
	}
	for key := range svcs {
		c.queue.AddAfter(key, c.batchPeriod)
	}
}

func (c *Controller) updatePod(old, cur any) {
	for key := range endpointslice.ServicesToUpdateOnPodChange(c.serviceLister, old.(*corev1.Pod), cur.(*corev1.Pod)) {
		c.queue.AddAfter(key, c.batchPeriod)
	}
}

func (c *Controller) deletePod(obj any) {
	if pod := endpointslice.PodFromDeleteAction(obj); pod != nil {
		c.addPod(pod)
	}
}

// queueLeftoverEndpoints queues every Endpoints this controller manages,
// so those whose Service is gone are deleted.
func (c *Controller) queueLeftoverEndpoints() error {
	list, err := c.endpointsLister.List(labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy}))
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("listing endpoints; leftover endpoints will not be cleaned up: %w", err))
		return nil
	}
	for _, ep := range list {
		if _, ok := ep.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]; ok {
			continue
		}
		c.enqueue(ep)
	}
	return nil
}

func managed(ep *corev1.Endpoints) bool {
	_, leader := ep.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]
	return ep.Labels[LabelManagedBy] == ManagedBy && !leader
}

// sync makes the Endpoints of the Service keyed key list its pods.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	start := time.Now()
	defer func() {
		logger.V(4).Info("Finished syncing service endpoints", "service", klog.KRef(namespace, name), "elapsed", time.Since(start))
	}()

	svc, err := c.serviceLister.Services(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.triggerTimes.DeleteService(namespace, name)
		c.stale.Delete(key)
		return c.deleteManagedEndpoints(ctx, namespace, name)
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if len(svc.Spec.Selector) == 0 {
		// Endpoints of a Service without a selector are written by
		// whoever owns it (the API server for "kubernetes").
		return nil
	}

	pods, err := endpointslice.SelectedPods(c.podIndexer, namespace, svc.Spec.Selector)
	if err != nil {
		return err
	}
	// Computed before the comparison, so the tracker sees every sync even
	// when nothing is written.
	triggerTime := c.triggerTimes.Compute(svc, pods)
	subsets, ready, notReady := desiredSubsets(logger, svc, pods)

	current, err := c.endpointsLister.Endpoints(namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		current = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	case err != nil:
		return err
	case c.stale.IsStale(key, current):
		return fmt.Errorf("endpoints informer cache is out of date, resource version %s already processed for endpoints %s", current.ResourceVersion, key)
	}
	create := current.ResourceVersion == ""
	wantLabels := desiredLabels(svc)
	if !create && subsetsEqualIgnoreResourceVersion(current.Subsets, subsets) &&
		apiequality.Semantic.DeepEqual(current.Labels, wantLabels) && capacityAnnotationSetCorrectly(current.Annotations, current.Subsets) {
		logger.V(5).Info("Endpoints are equal, skipping update", "service", klog.KObj(svc))
		return nil
	}

	next := current.DeepCopy()
	next.Subsets, next.Labels = subsets, wantLabels
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	if triggerTime.IsZero() {
		delete(next.Annotations, corev1.EndpointsLastChangeTriggerTime)
	} else {
		next.Annotations[corev1.EndpointsLastChangeTriggerTime] = triggerTime.UTC().Format(time.RFC3339Nano)
	}
	if truncateEndpoints(next) {
		next.Annotations[corev1.EndpointsOverCapacity] = truncated
	} else {
		delete(next.Annotations, corev1.EndpointsOverCapacity)
	}

	logger.V(4).Info("Update endpoints", "service", klog.KObj(svc), "readyEndpoints", ready, "notreadyEndpoints", notReady)
	var written *corev1.Endpoints
	if create {
		written, err = c.client.CoreV1().Endpoints(namespace).Create(ctx, next, metav1.CreateOptions{})
	} else {
		written, err = c.client.CoreV1().Endpoints(namespace).Update(ctx, next, metav1.UpdateOptions{})
	}
	if err != nil {
		// Creates keep failing in a terminating namespace: drop the key.
		if create && apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		if create {
			c.recorder.Eventf(next, corev1.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %v/%v: %v", namespace, name, err)
		} else {
			c.recorder.Eventf(next, corev1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %v/%v: %v", namespace, name, err)
		}
		return err
	}
	// The version just replaced must not be acted on again if the cache
	// still holds it at the next sync.
	if !create && written.ResourceVersion != current.ResourceVersion {
		c.stale.Stale(key, current)
	}
	return nil
}

// deleteManagedEndpoints deletes the Endpoints of a Service that is gone,
// if this controller wrote it. It is read from the API, not the cache: one
// created just before the Service went may not be cached yet.
func (c *Controller) deleteManagedEndpoints(ctx context.Context, namespace, name string) error {
	ep, err := c.client.CoreV1().Endpoints(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !managed(ep) {
		return nil
	}
	err = c.client.CoreV1().Endpoints(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(ep.UID)}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

// desiredLabels are the Service's labels, the headless label for a
// Service without a cluster IP, and the managed-by label.
func desiredLabels(svc *corev1.Service) map[string]string {
	out := maps.Clone(svc.Labels)
	if out == nil {
		out = map[string]string{}
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == "" {
		out[corev1.IsHeadlessService] = ""
	} else {
		delete(out, corev1.IsHeadlessService)
	}
	out[LabelManagedBy] = ManagedBy
	return out
}

// desiredSubsets builds the subsets of svc from its pods: per pod and
// Service port, the pod's address of the Service's first IP family under
// addresses (ready, or publishNotReadyAddresses) or notReadyAddresses,
// repacked.
func desiredSubsets(logger klog.Logger, svc *corev1.Service, pods []*corev1.Pod) (subsets []corev1.EndpointSubset, ready, notReady int) {
	publish := svc.Spec.PublishNotReadyAddresses
	for _, pod := range pods {
		if !endpointslice.ShouldPodBeInEndpoints(pod, publish) {
			logger.V(5).Info("Pod is not included on endpoints for Service", "pod", klog.KObj(pod), "service", klog.KObj(svc))
			continue
		}
		addr, err := podToEndpointAddress(svc, pod)
		if err != nil {
			logger.V(2).Info("Failed to find endpoint for service", "service", klog.KObj(svc), "pod", klog.KObj(pod), "err", err)
			continue
		}
		if endpointslice.ShouldSetHostname(pod, svc) {
			addr.Hostname = pod.Spec.Hostname
		}
		isReady := publish || controllerutil.IsPodReady(pod)
		add := func(port *corev1.EndpointPort) {
			ss := corev1.EndpointSubset{Ports: []corev1.EndpointPort{}}
			if port != nil {
				ss.Ports = append(ss.Ports, *port)
			}
			if isReady {
				ss.Addresses = []corev1.EndpointAddress{*addr}
				ready++
			} else {
				ss.NotReadyAddresses = []corev1.EndpointAddress{*addr}
				notReady++
			}
			subsets = append(subsets, ss)
		}
		if len(svc.Spec.Ports) == 0 {
			// A headless Service may have no ports.
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				add(nil)
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			n, err := endpointslice.FindPort(pod, sp)
			if err != nil {
				logger.V(4).Info("Failed to find port for service", "service", klog.KObj(svc), "err", err)
				continue
			}
			add(&corev1.EndpointPort{Name: sp.Name, Port: int32(n), Protocol: sp.Protocol, AppProtocol: sp.AppProtocol})
		}
	}
	return RepackSubsets(subsets), ready, notReady
}

// podToEndpointAddress is pod's address of svc's (first) IP family.
func podToEndpointAddress(svc *corev1.Service, pod *corev1.Pod) (*corev1.EndpointAddress, error) {
	wantV6 := false
	switch {
	case len(svc.Spec.IPFamilies) > 0:
		wantV6 = svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
	case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone:
		wantV6 = isIPv6(svc.Spec.ClusterIP)
	default:
		// A headless Service without families: the pod's primary IP's.
		wantV6 = isIPv6(pod.Status.PodIP)
	}
	for _, ip := range pod.Status.PodIPs {
		if isIPv6(ip.IP) == wantV6 {
			return &corev1.EndpointAddress{
				IP:        ip.IP,
				NodeName:  ptr.To(pod.Spec.NodeName),
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			}, nil
		}
	}
	return nil, fmt.Errorf("failed to find a matching endpoint for service %v", svc.Name)
}

// capacityAnnotationSetCorrectly reports whether the over-capacity
// annotation is as it should be: absent, and the subsets within capacity.
func capacityAnnotationSetCorrectly(annotations map[string]string, subsets []corev1.EndpointSubset) bool {
	n := 0
	for _, ss := range subsets {
		n += len(ss.Addresses) + len(ss.NotReadyAddresses)
	}
	if n > MaxCapacity {
		return false
	}
	_, ok := annotations[corev1.EndpointsOverCapacity]
	return !ok
}

// truncateEndpoints keeps at most MaxCapacity addresses, ready ones first,
// spread over the subsets in proportion to their sizes, and reports
// whether it truncated.
func truncateEndpoints(ep *corev1.Endpoints) bool {
	totalReady, totalNotReady := 0, 0
	for _, ss := range ep.Subsets {
		totalReady += len(ss.Addresses)
		totalNotReady += len(ss.NotReadyAddresses)
	}
	if totalReady+totalNotReady <= MaxCapacity {
		return false
	}
	truncateReady := false
	limit, total := MaxCapacity-totalReady, totalNotReady
	if totalReady > MaxCapacity {
		truncateReady, limit, total = true, MaxCapacity, totalReady
	}
	canBeAdded := limit
	for i := range ep.Subsets {
		ss := ep.Subsets[i]
		n := len(ss.NotReadyAddresses)
		if truncateReady {
			n = len(ss.Addresses)
		}
		// Rounded up, so the last subset may get fewer than its share.
		toAdd := min(int(math.Ceil(float64(n)/float64(total)*float64(limit))), canBeAdded)
		if truncateReady {
			ss.Addresses = firstN(ss.Addresses, toAdd)
			ss.NotReadyAddresses = []corev1.EndpointAddress{}
			canBeAdded -= len(ss.Addresses)
		} else {
			ss.NotReadyAddresses = firstN(ss.NotReadyAddresses, toAdd)
			canBeAdded -= len(ss.NotReadyAddresses)
		}
		ep.Subsets[i] = ss
	}
	return true
}

func firstN(addrs []corev1.EndpointAddress, n int) []corev1.EndpointAddress {
	if len(addrs) <= n {
		return addrs
	}
	return addrs[:n]
}

// semanticIgnoreResourceVersion compares with the targets'
// resourceVersions left out, so a pod update that endpoints do not show
// writes nothing.
var semanticIgnoreResourceVersion = conversion.EqualitiesOrDie(
	func(a, b corev1.ObjectReference) bool {
		a.ResourceVersion, b.ResourceVersion = "", ""
		return a == b
	},
)

func subsetsEqualIgnoreResourceVersion(a, b []corev1.EndpointSubset) bool {
	return semanticIgnoreResourceVersion.DeepEqual(a, b)
}

// staleTracker remembers, per Service, the resourceVersion of the
// Endpoints this controller last replaced: a cache still holding it is
// behind (upstream's staleEndpointsTracker).
type staleTracker struct {
	mu       sync.Mutex
	versions map[string]string
}

func (t *staleTracker) Stale(key string, ep *corev1.Endpoints) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.versions[key] = ep.ResourceVersion
}

func (t *staleTracker) IsStale(key string, ep *corev1.Endpoints) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	rv, ok := t.versions[key]
	return ok && rv == ep.ResourceVersion
}

func (t *staleTracker) Delete(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.versions, key)
}

// isIPv6 reports whether s is an IPv6 address (IPv4-mapped counts as
// IPv4).
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Unmap().Is6()
}
