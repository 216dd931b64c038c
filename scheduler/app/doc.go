// Package app is skiff-scheduler's command: options and flags, Setup that
// builds the clients, informers, plugin registry, framework and scheduler,
// and Run that serves /healthz, /readyz and /metrics over HTTPS and,
// holding the kube-system/kube-scheduler Lease when leader election is on,
// runs the scheduling loop.
package app
