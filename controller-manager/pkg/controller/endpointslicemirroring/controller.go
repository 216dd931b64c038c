// Package endpointslicemirroring is the EndpointSliceMirroring controller:
// the Endpoints of a Service without a selector (written by hand or by
// another controller) are mirrored into EndpointSlices, so that consumers
// of EndpointSlices (the proxy, DNS) see them, as upstream's
// pkg/controller/endpointslicemirroring does.
//
// An Endpoints is mirrored when its Service exists and has no selector,
// and it carries neither the endpointslice.kubernetes.io/skip-mirror=true
// label nor the leader-election annotation. Its subsets, repacked into
// upstream's canonical layout, make one slice per address type and port
// set, with at most MaxEndpointsPerSubset addresses of each subset (ready
// ones first); addresses that are not IPs are skipped with a warning
// event. The slices carry the Endpoints' labels and annotations (without
// the trigger time and last-applied annotations), the
// kubernetes.io/service-name label and the managed-by label
// endpointslicemirroring-controller.k8s.io, and an owner reference to the
// Endpoints. When the Endpoints or the Service goes, or the Service gets a
// selector, the mirrored slices are deleted.
package endpointslicemirroring

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/endpoints"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

const (
	// ControllerName names the controller and the source of its events
	// (upstream's event source).
	ControllerName = "endpointslice-mirroring-controller"
	// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
	// slices this controller writes; no other slice is touched.
	ManagedBy = "endpointslicemirroring-controller.k8s.io"
	// DefaultMaxEndpointsPerSubset is upstream's
	// --mirroring-max-endpoints-per-subset.
	DefaultMaxEndpointsPerSubset = 1000

	// Reasons of the warning events on the Endpoints (upstream's).
	InvalidIPAddress         = "InvalidIPAddress"
	TooManyAddressesToMirror = "TooManyAddressesToMirror"
)

// Options tune the controller; the zero value is upstream's defaults.
type Options struct {
	// MaxEndpointsPerSubset is the most addresses of one subset that are
	// mirrored (0: DefaultMaxEndpointsPerSubset; at most 1000, a slice's
	// limit).
	MaxEndpointsPerSubset int
}

// Controller is the EndpointSliceMirroring controller.
type Controller struct {
	client          kubernetes.Interface
	recorder        record.EventRecorder
	metrics         *metrics.Metrics
	serviceLister   corelisters.ServiceLister
	endpointsLister corelisters.EndpointsLister
	synced          []cache.InformerSynced
	queue           workqueue.TypedRateLimitingInterface[string]
	maxPerSubset    int
}

// NewController builds the controller and registers its informer handlers.
func NewController(client kubernetes.Interface, endpointsInformer coreinformers.EndpointsInformer, serviceInformer coreinformers.ServiceInformer,
	sliceInformer discoveryinformers.EndpointSliceInformer, recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if opts.MaxEndpointsPerSubset == 0 {
		opts.MaxEndpointsPerSubset = DefaultMaxEndpointsPerSubset
	}
	if opts.MaxEndpointsPerSubset < 1 || opts.MaxEndpointsPerSubset > 1000 {
		return nil, fmt.Errorf("the most endpoints mirrored per subset must be between 1 and 1000, not %d", opts.MaxEndpointsPerSubset)
	}
	c := &Controller{
		client:          client,
		recorder:        recorder,
		metrics:         m,
		serviceLister:   serviceInformer.Lister(),
		endpointsLister: endpointsInformer.Lister(),
		synced: []cache.InformerSynced{endpointsInformer.Informer().HasSynced, serviceInformer.Informer().HasSynced,
			sliceInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "endpoint_slice_mirroring")),
		maxPerSubset: opts.MaxEndpointsPerSubset,
	}
	enqueue := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.enqueue,
	}
	_, _ = endpointsInformer.Informer().AddEventHandler(enqueue)
	_, _ = serviceInformer.Informer().AddEventHandler(enqueue)
	// A mirrored slice changed or deleted by someone else is written again.
	_, _ = sliceInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueForSlice,
		UpdateFunc: func(_, cur any) { c.enqueueForSlice(cur) },
		DeleteFunc: c.enqueueForSlice,
	})
	return c, nil
}

// Run waits for the caches and runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
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

func (c *Controller) enqueueForSlice(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	slice, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok || slice.Labels[discoveryv1.LabelManagedBy] != ManagedBy {
		return
	}
	if name := slice.Labels[discoveryv1.LabelServiceName]; name != "" {
		c.queue.Add(slice.Namespace + "/" + name)
	}
}

// sync mirrors the Endpoints keyed key, or deletes its mirrored slices
// when it is not to be mirrored.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	svc, err := c.serviceLister.Services(namespace).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	var ep *corev1.Endpoints
	if svc != nil && svc.Spec.Selector == nil {
		ep, err = c.endpointsLister.Endpoints(namespace).Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if ep != nil && !shouldMirror(ep) {
			ep = nil
		}
	}
	existing, err := c.mirroredSlices(ctx, namespace, name)
	if err != nil {
		return err
	}
	if ep == nil {
		return c.deleteSlices(ctx, namespace, existing)
	}
	return c.reconcile(ctx, ep, existing)
}

// shouldMirror tells whether ep is one to mirror (upstream's skip-mirror
// label and leader-election lock rules).
func shouldMirror(ep *corev1.Endpoints) bool {
	if ep.Labels[discoveryv1.LabelSkipMirror] == "true" {
		return false
	}
	_, leader := ep.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]
	return !leader
}

// mirroredSlices lists the slices this controller wrote for the Endpoints
// namespace/name, from the API server, so that a sync always sees its
// own last writes.
func (c *Controller) mirroredSlices(ctx context.Context, namespace, name string) ([]discoveryv1.EndpointSlice, error) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ManagedBy})
	list, err := c.client.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

func (c *Controller) deleteSlices(ctx context.Context, namespace string, slices []discoveryv1.EndpointSlice) error {
	for i := range slices {
		err := c.client.DiscoveryV1().EndpointSlices(namespace).Delete(ctx, slices[i].Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &slices[i].UID},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting EndpointSlice %s/%s: %w", namespace, slices[i].Name, err)
		}
	}
	return nil
}

// desiredSlice is the content of one mirrored slice.
type desiredSlice struct {
	addressType discoveryv1.AddressType
	ports       []discoveryv1.EndpointPort
	endpoints   []discoveryv1.Endpoint
}

// desired computes the slices ep mirrors to, keyed by address type and
// port set, and counts the addresses that are not IPs and those beyond
// the limit.
func (c *Controller) desired(ep *corev1.Endpoints) (want map[string]*desiredSlice, invalid, skipped int) {
	want = map[string]*desiredSlice{}
	for _, subset := range endpoints.RepackSubsets(ep.Subsets) {
		ports := slicePorts(subset.Ports)
		added := 0
		add := func(addrs []corev1.EndpointAddress, ready bool) {
			for _, a := range addrs {
				if added >= c.maxPerSubset {
					skipped++
					continue
				}
				ip, err := netip.ParseAddr(a.IP)
				if err != nil {
					invalid++
					skipped++
					continue
				}
				addrType := discoveryv1.AddressTypeIPv4
				if ip.Unmap().Is6() {
					addrType = discoveryv1.AddressTypeIPv6
				}
				k := sliceKey(addrType, ports)
				d, ok := want[k]
				if !ok {
					d = &desiredSlice{addressType: addrType, ports: ports}
					want[k] = d
				}
				d.endpoints = append(d.endpoints, addressToEndpoint(a, ready))
				added++
			}
		}
		add(subset.Addresses, true)
		add(subset.NotReadyAddresses, false)
	}
	for _, d := range want {
		d.endpoints = dedupEndpoints(d.endpoints)
	}
	return want, invalid, skipped
}

// reconcile writes the slices of ep: per address type and port set, the
// first existing slice is kept (updated when it differs), further ones
// deleted, missing ones created; slices of a key no longer wanted are
// reused for a new key of the same address type, or deleted.
func (c *Controller) reconcile(ctx context.Context, ep *corev1.Endpoints, existing []discoveryv1.EndpointSlice) error {
	logger := klog.FromContext(ctx)
	want, invalid, skipped := c.desired(ep)
	if invalid > 0 {
		c.recorder.Eventf(ep, corev1.EventTypeWarning, InvalidIPAddress,
			"Skipped %d invalid IP addresses when mirroring to EndpointSlices", invalid)
	}
	if skipped > invalid {
		logger.Info("Addresses in Endpoints were skipped due to exceeding MaxEndpointsPerSubset", "skippedAddresses", skipped, "endpoints", klog.KObj(ep))
		c.recorder.Eventf(ep, corev1.EventTypeWarning, TooManyAddressesToMirror,
			"A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", c.maxPerSubset, skipped)
	}

	byKey := map[string][]*discoveryv1.EndpointSlice{}
	for i := range existing {
		s := &existing[i]
		k := sliceKey(s.AddressType, s.Ports)
		byKey[k] = append(byKey[k], s)
	}
	var toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice
	for _, k := range slices.Sorted(maps.Keys(want)) {
		d := want[k]
		have := byKey[k]
		if len(have) == 0 {
			toCreate = append(toCreate, newSlice(ep, d, ""))
			continue
		}
		toDelete = append(toDelete, have[1:]...)
		if !upToDate(ep, have[0], d) {
			toUpdate = append(toUpdate, newSlice(ep, d, have[0].Name))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		if _, ok := want[k]; !ok {
			toDelete = append(toDelete, byKey[k]...)
		}
	}
	// A slice to create takes the name of one to delete of its address
	// type: one update instead of a create and a delete.
	var keep []*discoveryv1.EndpointSlice
	for _, s := range toCreate {
		i := slices.IndexFunc(toDelete, func(d *discoveryv1.EndpointSlice) bool { return d.AddressType == s.AddressType })
		if i < 0 {
			keep = append(keep, s)
			continue
		}
		s.Name, s.GenerateName = toDelete[i].Name, ""
		toUpdate = append(toUpdate, s)
		toDelete = slices.Delete(toDelete, i, i+1)
	}
	toCreate = keep

	client := c.client.DiscoveryV1().EndpointSlices(ep.Namespace)
	if ep.DeletionTimestamp == nil {
		for _, s := range toCreate {
			if _, err := client.Create(ctx, s, metav1.CreateOptions{}); err != nil {
				if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("creating an EndpointSlice for Endpoints %s/%s: %w", ep.Namespace, ep.Name, err)
			}
		}
	}
	for _, s := range toUpdate {
		if _, err := client.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating EndpointSlice %s for Endpoints %s/%s: %w", s.Name, ep.Namespace, ep.Name, err)
		}
	}
	del := make([]discoveryv1.EndpointSlice, len(toDelete))
	for i, s := range toDelete {
		del[i] = *s
	}
	return c.deleteSlices(ctx, ep.Namespace, del)
}

// upToDate tells whether the slice have already mirrors d of ep: the same
// endpoints, the Endpoints' labels and annotations, owned by this
// Endpoints (not an earlier one of the same name).
func upToDate(ep *corev1.Endpoints, have *discoveryv1.EndpointSlice, d *desiredSlice) bool {
	for _, ref := range have.OwnerReferences {
		if ref.Kind == "Endpoints" && ref.Name == ep.Name && ref.UID != ep.UID {
			return false
		}
	}
	want := newSlice(ep, d, have.Name)
	return apiequality.Semantic.DeepEqual(want.Labels, nonEmpty(have.Labels)) &&
		apiequality.Semantic.DeepEqual(want.Annotations, nonEmpty(have.Annotations)) &&
		apiequality.Semantic.DeepEqual(want.Endpoints, dedupEndpoints(slices.Clone(have.Endpoints)))
}

func nonEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// newSlice is the slice mirroring d of ep, named name (generated when
// empty).
func newSlice(ep *corev1.Endpoints, d *desiredSlice, name string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       ep.Namespace,
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ep, corev1.SchemeGroupVersion.WithKind("Endpoints"))},
		},
		AddressType: d.addressType,
		Ports:       d.ports,
		Endpoints:   d.endpoints,
	}
	maps.Copy(s.Labels, ep.Labels)
	s.Labels[discoveryv1.LabelServiceName] = ep.Name
	s.Labels[discoveryv1.LabelManagedBy] = ManagedBy
	for k, v := range ep.Annotations {
		if k == corev1.EndpointsLastChangeTriggerTime || k == corev1.LastAppliedConfigAnnotation {
			continue
		}
		s.Annotations[k] = v
	}
	if name == "" {
		s.GenerateName = slicePrefix(ep.Name)
	}
	return s
}

// slicePrefix is the generateName of a new slice: the Endpoints' name and
// a dash, or the name alone when that is not a valid name.
func slicePrefix(name string) string {
	if prefix := name + "-"; len(validation.IsDNS1123Subdomain(prefix+"x")) == 0 {
		return prefix
	}
	return name
}

func addressToEndpoint(a corev1.EndpointAddress, ready bool) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{
		Addresses:  []string{a.IP},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		TargetRef:  a.TargetRef,
		NodeName:   a.NodeName,
	}
	if a.Hostname != "" {
		h := a.Hostname
		e.Hostname = &h
	}
	return e
}

// dedupEndpoints sorts endpoints by address and keeps the first of each
// address.
func dedupEndpoints(eps []discoveryv1.Endpoint) []discoveryv1.Endpoint {
	first := func(e discoveryv1.Endpoint) string {
		if len(e.Addresses) == 0 {
			return ""
		}
		return e.Addresses[0]
	}
	slices.SortStableFunc(eps, func(a, b discoveryv1.Endpoint) int { return strings.Compare(first(a), first(b)) })
	return slices.CompactFunc(eps, func(a, b discoveryv1.Endpoint) bool { return first(a) == first(b) })
}

func slicePorts(ports []corev1.EndpointPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(ports))
	for _, p := range ports {
		p := p
		out = append(out, discoveryv1.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol, AppProtocol: p.AppProtocol})
	}
	return out
}

// sliceKey identifies a slice by address type and port set, whatever the
// order of the ports.
func sliceKey(addrType discoveryv1.AddressType, ports []discoveryv1.EndpointPort) string {
	parts := make([]string, 0, len(ports))
	for _, p := range ports {
		var name, proto, app string
		var port int32
		if p.Name != nil {
			name = *p.Name
		}
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		if p.Port != nil {
			port = *p.Port
		}
		parts = append(parts, fmt.Sprintf("%q/%d/%s/%q", name, port, proto, app))
	}
	slices.Sort(parts)
	return string(addrType) + "|" + strings.Join(parts, ",")
}
