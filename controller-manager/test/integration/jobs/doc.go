// Package jobs holds the integration tests of the Job, TTL-after-finished
// and ReplicationController controllers against a real API server: the
// tests play the kubelet by setting the phases of the pods the controllers
// create.
package jobs
