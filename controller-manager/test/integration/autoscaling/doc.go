// Package autoscaling tests the HorizontalPodAutoscaler controller against
// a real skiff-apiserver (testserver), with the ReplicaSet and Deployment
// controllers of skiff-controller-manager. There is no kubelet and no
// metrics server: a test goroutine reports every pod Running and Ready,
// and a fake metrics.k8s.io clientset answers PodMetrics for the pods the
// API server holds, with the CPU load the test sets.
package autoscaling
