// Package statefulsets tests the StatefulSet controller inside
// skiff-controller-manager (with the garbage collector) against a real
// skiff-apiserver. There is no scheduler and no kubelet: a test goroutine
// plays the kubelet, binding pods, reporting them Running and Ready and
// finishing graceful deletions, and it logs what it saw in the order the
// watch delivered it, so the tests can check the order of creations and
// deletions.
package statefulsets
