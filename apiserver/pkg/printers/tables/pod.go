package tables

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// nodeUnreachablePodReason is the pod status reason the node lifecycle
// controller sets on pods of an unreachable node (k8s.io/kubernetes/pkg/util/node).
const nodeUnreachablePodReason = "NodeLost"

func podColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		ageColumn(),
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	}
}

// Row conditions upstream attaches to pods in a terminal phase, so that
// kubectl can hide them unless --show-all style output is asked for.
func podSucceededConditions() []metav1.TableRowCondition {
	return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
}

func podFailedConditions() []metav1.TableRowCondition {
	return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
}

// printPod follows upstream printPod: READY counts ready running containers
// (and started, ready sidecars), STATUS is the most telling reason among
// init containers, containers and the pod itself, RESTARTS adds when the
// last restart happened.
func (p *printer) printPod(pod *corev1.Pod) metav1.TableRow {
	restarts := 0
	sidecarRestarts := 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	lastRestartDate := metav1.Time{}
	lastSidecarRestartDate := metav1.Time{}

	podPhase := pod.Status.Phase
	reason := string(podPhase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}

	// A pod held back by scheduling gates shows SchedulingGated.
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodScheduled && condition.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	row := metav1.TableRow{Object: runtime.RawExtension{Object: pod}}
	switch podPhase {
	case corev1.PodSucceeded:
		row.Conditions = podSucceededConditions()
	case corev1.PodFailed:
		row.Conditions = podFailedConditions()
	}

	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			totalContainers++
		}
	}

	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		container := pod.Status.InitContainerStatuses[i]
		restarts += int(container.RestartCount)
		if t := container.LastTerminationState.Terminated; t != nil && lastRestartDate.Before(&t.FinishedAt) {
			lastRestartDate = t.FinishedAt
		}
		sidecar := isRestartableInitContainer(initContainers[container.Name])
		if sidecar {
			sidecarRestarts += int(container.RestartCount)
			if t := container.LastTerminationState.Terminated; t != nil && lastSidecarRestartDate.Before(&t.FinishedAt) {
				lastSidecarRestartDate = t.FinishedAt
			}
		}

		// Init containers that finished, and sidecars that started, let the
		// scan go on to the next init container; the first other one decides.
		if container.State.Terminated != nil && container.State.Terminated.ExitCode == 0 {
			continue
		}
		if sidecar && container.Started != nil && *container.Started {
			if container.Ready {
				readyContainers++
			}
			continue
		}
		switch {
		case container.State.Terminated != nil:
			// initialization failed
			t := container.State.Terminated
			switch {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case container.State.Waiting != nil && container.State.Waiting.Reason != "" && container.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + container.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || isPodInitializedConditionTrue(&pod.Status) {
		restarts = sidecarRestarts
		lastRestartDate = lastSidecarRestartDate
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			container := pod.Status.ContainerStatuses[i]

			restarts += int(container.RestartCount)
			if t := container.LastTerminationState.Terminated; t != nil && lastRestartDate.Before(&t.FinishedAt) {
				lastRestartDate = t.FinishedAt
			}
			switch {
			case container.State.Waiting != nil && container.State.Waiting.Reason != "":
				reason = container.State.Waiting.Reason
			case container.State.Terminated != nil && container.State.Terminated.Reason != "":
				reason = container.State.Terminated.Reason
			case container.State.Terminated != nil:
				if container.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Signal:%d", container.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("ExitCode:%d", container.State.Terminated.ExitCode)
				}
			case container.Ready && container.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}

		// A pod whose last container completed while another still runs is
		// shown as Running (or NotReady), not Completed.
		if reason == "Completed" && hasRunning {
			if hasPodReadyCondition(pod.Status.Conditions) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && !isPodPhaseTerminal(podPhase) {
		reason = "Terminating"
	}

	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestartDate.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, p.since(lastRestartDate))
	}

	row.Cells = []interface{}{
		pod.Name,
		fmt.Sprintf("%d/%d", readyContainers, totalContainers),
		reason,
		restartsStr,
		p.since(pod.CreationTimestamp),
		orNone(podIP(&pod.Status)),
		orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName),
		readinessGates(pod),
	}
	return row
}

// podIP is the pod's primary IP. Upstream's v1-to-internal conversion makes
// status.podIP authoritative over status.podIPs[0], so the same is done here.
func podIP(status *corev1.PodStatus) string {
	if status.PodIP != "" {
		return status.PodIP
	}
	if len(status.PodIPs) > 0 {
		return status.PodIPs[0].IP
	}
	return ""
}

// readinessGates prints how many of the pod's readiness gates are true, e.g. "1/2".
func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return none
	}
	trueConditions := 0
	for _, gate := range pod.Spec.ReadinessGates {
		for _, condition := range pod.Status.Conditions {
			if condition.Type == gate.ConditionType {
				if condition.Status == corev1.ConditionTrue {
					trueConditions++
				}
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", trueConditions, len(pod.Spec.ReadinessGates))
}

func isRestartableInitContainer(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func isPodPhaseTerminal(phase corev1.PodPhase) bool {
	return phase == corev1.PodFailed || phase == corev1.PodSucceeded
}

func hasPodReadyCondition(conditions []corev1.PodCondition) bool {
	for _, condition := range conditions {
		if condition.Type == corev1.PodReady && condition.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func isPodInitializedConditionTrue(status *corev1.PodStatus) bool {
	for _, condition := range status.Conditions {
		if condition.Type == corev1.PodInitialized {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}
