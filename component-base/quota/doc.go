// Package quota computes what objects count against a ResourceQuota and
// which quotas' scopes they fall in, as upstream's quota evaluators do:
// shared by the API server's ResourceQuota admission (which charges
// creates) and the controller manager's resource quota controller (which
// recomputes status.used).
package quota
