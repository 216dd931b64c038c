// Package workloads tests the ReplicaSet and Deployment controllers
// against a real skiff-apiserver (testserver). There is no scheduler and no
// kubelet: a test goroutine plays the kubelet, binding pods through the
// pods/binding subresource and reporting them Running and Ready through
// pods/status, and finishing graceful deletions.
package workloads
