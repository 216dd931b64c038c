package resourcequota

import "skiff.dev/component-base/quota/quotatest"

// The fixtures live in component-base/quota/quotatest.
type podOpt = quotatest.PodOpt

var (
	t0             = quotatest.T0
	list           = quotatest.List
	container      = quotatest.Container
	newPod         = quotatest.NewPod
	withContainers = quotatest.WithContainers
	withInit       = quotatest.WithInit
	inPhase        = quotatest.InPhase
	deadline       = quotatest.Deadline
	priority       = quotatest.Priority
	deletedAt      = quotatest.DeletedAt
	scoped         = quotatest.Scoped
	pcReq          = quotatest.PCReq
)
