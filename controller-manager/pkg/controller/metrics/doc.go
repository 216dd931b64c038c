// Package metrics holds the controller-manager's metrics on its own
// registry: the work queues' `workqueue_*` series (the names upstream's
// component-base gives them, labelled by queue name) and, per controller,
// how many syncs ran and how long they took; and the controllers' own
// upstream series (cronjob_controller_job_creation_skew_duration_seconds).
//
// A controller takes a *Metrics (nil is allowed and records nothing), builds
// its queue with QueueConfig, and calls ObserveSync after every sync.
package metrics
