// Package endpointslice is the EndpointSlice controller: for every Service
// with a selector it keeps discovery.k8s.io/v1 EndpointSlices that list the
// Service's pods, as upstream's pkg/controller/endpointslice and the
// reconciler of k8s.io/endpointslice do.
//
// Walkthrough: Service events, pod events (after --endpointslice-updates-batch-period)
// and changes to its slices that the controller did not make itself put a
// Service key on a rate-limited work queue. A sync reads the Service, its
// pods and its slices (labelled kubernetes.io/service-name and
// endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io)
// from the caches. It waits when the slice cache does not show its own
// last writes yet (sliceTracker). Then, per address type of the Service
// (its ipFamilies), it groups the pods that belong in endpoints
// (ShouldPodBeInEndpoints) by the ports they serve (named targetPorts
// resolved per pod), turns each into an endpoint (ready, serving,
// terminating, nodeName, zone, hostname, targetRef) and compares with the
// slices there are: endpoints that changed are updated in place, slices
// left empty are deleted, new endpoints fill changed slices first, then
// the unchanged slice they fill best, then new slices (generateName
// "<service>-", owned by the Service), at most --max-endpoints-per-slice
// each. Unchanged slices are not written. A Service without endpoints keeps
// one empty placeholder slice. Every write carries the
// endpoints.kubernetes.io/last-change-trigger-time annotation
// (TriggerTimeTracker). Slices go with their Service through the garbage
// collector.
//
// The helpers ShouldPodBeInEndpoints, ShouldSetHostname, FindPort,
// ServicesForPod, ServicesToUpdateOnPodChange and TriggerTimeTracker are
// shared with the Endpoints controller.
package endpointslice
