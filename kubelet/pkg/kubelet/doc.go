// Package kubelet runs the pods bound to this node. An informer with the
// field selector spec.nodeName=<node> feeds one pod.Worker per pod UID
// (created on the first add, updated on every change, told on delete).
// Once the informer has synced, containers and network sandboxes of pods
// that are no longer bound here are removed; those of current pods are
// adopted by their workers without a restart, since everything the
// kubelet needs is in the containers' labels and libcni's cache.
//
// The package also holds the kubelet's metrics and the API-backed
// implementations of the pod package's StatusWriter and Objects.
package kubelet
