// Package app is skiff-scheduler's command: options and flags, Setup that
// reads --config (a KubeSchedulerConfiguration with profiles, plugins and
// plugin arguments) or builds the default profile, discovers which kinds
// the plugins' listers can watch, builds the clients, informers, plugin
// registry, one framework per profile and the scheduler, and Run that
// serves /healthz, /readyz and /metrics over HTTPS and, holding the
// kube-system/kube-scheduler Lease when leader election is on, runs the
// scheduling loop.
package app
