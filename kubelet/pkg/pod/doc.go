// Package pod runs one pod on this node: its lifecycle and its status.
//
// A pod's lifecycle is an ordered list of hooks, in the manner of nomad's
// allocrunner: the network sandbox (NetworkHook), volumes (VolumesHook),
// images (ImagesHook), containers (ContainersHook) and probes
// (ProbesHook). Each hook may implement Preparer (done once, in order,
// before the pod runs; retried until it succeeds), Runner (done on every
// sync, in order) and Destroyer (done when the pod goes away, in reverse
// order; every destroyer runs and their errors are joined). The hooks
// share a State: the pod as last seen, its sandbox and volumes, the
// images it resolved, the probe results and the containers the runtime
// reports for it.
//
// The container runtime and the pod network sit behind the small Runtime
// and Network interfaces defined here; package containerd and package cni
// implement them for real and the unit tests use fakes. Everything the
// kubelet must know about a container after a restart (pod UID, container
// name, restart attempt) is in its labels, so the restart count is the
// attempt number of the newest container and the last state is the one
// before it.
//
// A Worker is one goroutine per pod fed by a channel of pod updates (as
// upstream's pod workers): it syncs on every update, when the kubelet's
// PLEG (package pleg) sees its containers change, and on a short tick; it
// reads its containers from the PLEG's last relist when that relist began
// after the worker's own last change to them, else from the runtime;
// it computes the pod's status from what the runtime reports (ComputeStatus:
// phase, conditions, container states as upstream's kubelet computes them)
// and sends it when it changed. Init containers run one after the other
// before the app containers; ephemeral containers (added through
// pods/ephemeralcontainers) start before both, whether or not the pod is
// initialized, in their target container's PID namespace when they name
// one, and are never restarted; exited containers restart as the restart
// policy says, after upstream's back-off (0, 10 s, 20 s, ... 5 min). When
// the pod reaches Succeeded or Failed, what it holds is released
// (Lifecycle.Release: its sandbox, cgroup and volumes go) but its exited
// containers and their logs stay, as upstream's, so that `kubectl logs`
// reads a finished pod; when it is being deleted the worker stops the
// containers within the grace period, tears everything down (containers
// and logs too) and deletes the pod object with grace period 0.
//
// The network hook checks on every sync that the pod's network namespace
// is still there (SandboxChecker). When it is gone (`ip netns delete`, or
// a clean-up that raced the pod), the hook tears down what is left (the
// address goes back to the pool) and sets up a new sandbox, and the worker
// stops the running containers, which are cut off in the old namespace,
// within the pod's grace period. They then restart as the restart policy
// says, in the new namespace and with the new address, as upstream's
// kubelet re-creates a changed sandbox. A pod whose policy is Never gets no
// new sandbox once a container has run: it ends. Unlike upstream, init
// containers that completed are not run again, and under OnFailure a
// container that exits 0 when stopped is not restarted.
//
// With shareProcessNamespace every container (ephemeral ones too) asks the
// runtime for the PID namespace of the pod's sandbox container (SharePID;
// SandboxID, which ContainersHook removes when the pod finishes or goes);
// with hostPID for the node's (HostPID).
//
// A container's securityContext, merged with the pod's (SecurityFor),
// reaches the runtime as a Security value in its ContainerSpec; the pod's
// image pull secrets are read by the ImagesHook and passed to PullImage
// as registry credentials.
//
// A HandlerRunner runs containers' lifecycle hooks (exec, httpGet,
// sleep): postStart right after a start (a failure kills the container),
// preStop before every stop of a running container, within the grace
// period (HandlerRunner.StopContainer). A pod that begins terminating
// (Worker.Update with a deletion, Remove, Evict) cuts the sync in flight
// short, its postStart hook and image pulls with it, as upstream's pod
// workers cancel it; the termination that follows stops what it started. Each container gets a file of the
// pod's directory at its terminationMessagePath; when it exits, the file
// (or, under FallbackToLogsOnError, its log's end) becomes its terminated
// state's message (State.ReadTerminationMessages). The environment
// (ResolveEnv) adds upstream's service variables (ServiceEnv) from a
// ServiceLister; subPathExpr is expanded with it and checked
// (CheckSubPath). A pod past its activeDeadlineSeconds is killed and ends
// Failed with DeadlineExceeded; the conditions carry upstream's reasons
// and messages.
package pod
