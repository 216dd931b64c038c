// Package cache keeps the scheduler's view of the cluster: one NodeInfo per
// node with the pods bound to it, plus the pods this scheduler has assumed
// onto a node but whose binding the informers have not yet reported. The
// assumed pods count like bound ones, so pods scheduled back to back never
// overcommit a node. Lifecycle of an assumed pod:
//
//	AssumePod -> (binding succeeds) FinishBinding -> AddPod from the informer confirms it
//	AssumePod -> (binding fails) ForgetPod
//
// Snapshot gives one scheduling cycle read-only copies of the nodes; only
// the nodes changed since the previous snapshot are copied again.
package cache
