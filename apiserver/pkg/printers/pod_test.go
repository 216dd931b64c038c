package printers

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Hour)}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func terminated(reason string, exitCode, signal int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exitCode, Signal: signal}}
}

// lastTerminated is a LastTerminationState that finished d ago.
func lastTerminated(d time.Duration) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, FinishedAt: ago(d)}}
}

func containers(names ...string) []corev1.Container {
	out := make([]corev1.Container, 0, len(names))
	for _, n := range names {
		out = append(out, corev1.Container{Name: n, Image: n + ":latest"})
	}
	return out
}

func sidecar(name string) corev1.Container {
	return corev1.Container{Name: name, Image: name, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}
}

func TestPrintPod(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(49 * time.Hour)}
	}
	const age = "2d1h"

	tests := []struct {
		name           string
		pod            *corev1.Pod
		want           []interface{}
		wantConditions []metav1.TableRowCondition
	}{
		{
			name: "one of two containers ready",
			pod: &corev1.Pod{
				ObjectMeta: meta("web"),
				Spec:       corev1.PodSpec{Containers: containers("app", "proxy"), NodeName: "node-1"},
				Status: corev1.PodStatus{
					Phase: corev1.PodRunning,
					PodIP: "10.1.0.5",
					ContainerStatuses: []corev1.ContainerStatus{
						{Name: "app", Ready: true, State: running()},
						{Name: "proxy", Ready: false, State: running()},
					},
				},
			},
			want: []interface{}{"web", "1/2", "Running", "0", age, "10.1.0.5", "node-1", "<none>", "<none>"},
		},
		{
			name: "crash loop with restarts",
			pod: &corev1.Pod{
				ObjectMeta: meta("crashy"),
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase: corev1.PodRunning,
					ContainerStatuses: []corev1.ContainerStatus{
						{Name: "app", State: waiting("CrashLoopBackOff"), RestartCount: 5, LastTerminationState: lastTerminated(5 * time.Minute)},
					},
				},
			},
			want: []interface{}{"crashy", "0/1", "CrashLoopBackOff", "5 (5m ago)", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "restarts without a recorded termination have no suffix",
			pod: &corev1.Pod{
				ObjectMeta: meta("restarted"),
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running(), RestartCount: 3}},
				},
			},
			want: []interface{}{"restarted", "1/1", "Running", "3", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "latest termination across containers wins",
			pod: &corev1.Pod{
				ObjectMeta: meta("two-restarts"),
				Spec:       corev1.PodSpec{Containers: containers("a", "b")},
				Status: corev1.PodStatus{
					Phase: corev1.PodRunning,
					ContainerStatuses: []corev1.ContainerStatus{
						{Name: "a", Ready: true, State: running(), RestartCount: 1, LastTerminationState: lastTerminated(3 * time.Hour)},
						{Name: "b", Ready: true, State: running(), RestartCount: 2, LastTerminationState: lastTerminated(90 * time.Second)},
					},
				},
			},
			want: []interface{}{"two-restarts", "2/2", "Running", "3 (90s ago)", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "terminating",
			pod: &corev1.Pod{
				ObjectMeta: func() metav1.ObjectMeta {
					m := meta("going")
					m.DeletionTimestamp = agoPtr(time.Second)
					return m
				}(),
				Spec: corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}},
				},
			},
			want: []interface{}{"going", "1/1", "Terminating", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "deleted pod of an unreachable node is Unknown",
			pod: &corev1.Pod{
				ObjectMeta: func() metav1.ObjectMeta {
					m := meta("lost")
					m.DeletionTimestamp = agoPtr(time.Minute)
					return m
				}(),
				Spec: corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					Reason:            "NodeLost",
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}},
				},
			},
			want: []interface{}{"lost", "1/1", "Unknown", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "deleted pod that already succeeded keeps its status",
			pod: &corev1.Pod{
				ObjectMeta: func() metav1.ObjectMeta {
					m := meta("done-deleted")
					m.DeletionTimestamp = agoPtr(time.Minute)
					return m
				}(),
				Spec: corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodSucceeded,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: terminated("Completed", 0, 0)}},
				},
			},
			want:           []interface{}{"done-deleted", "0/1", "Completed", "0", age, "<none>", "<none>", "<none>", "<none>"},
			wantConditions: succeededConditions,
		},
		{
			name: "completed",
			pod: &corev1.Pod{
				ObjectMeta: meta("job-x"),
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodSucceeded,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: terminated("Completed", 0, 0)}},
				},
			},
			want:           []interface{}{"job-x", "0/1", "Completed", "0", age, "<none>", "<none>", "<none>", "<none>"},
			wantConditions: succeededConditions,
		},
		{
			name: "failed",
			pod: &corev1.Pod{
				ObjectMeta: meta("job-y"),
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodFailed,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: terminated("Error", 1, 0)}},
				},
			},
			want:           []interface{}{"job-y", "0/1", "Error", "0", age, "<none>", "<none>", "<none>", "<none>"},
			wantConditions: failedConditions,
		},
		{
			name: "evicted",
			pod: &corev1.Pod{
				ObjectMeta: meta("evicted"),
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status:     corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"},
			},
			want:           []interface{}{"evicted", "0/1", "Evicted", "0", age, "<none>", "<none>", "<none>", "<none>"},
			wantConditions: failedConditions,
		},
		{
			name: "terminated by signal without a reason",
			pod: &corev1.Pod{
				ObjectMeta: meta("killed"),
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: terminated("", 137, 9)}},
				},
			},
			want: []interface{}{"killed", "0/1", "Signal:9", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "terminated with an exit code and no reason",
			pod: &corev1.Pod{
				ObjectMeta: meta("exited"),
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: terminated("", 3, 0)}},
				},
			},
			want: []interface{}{"exited", "0/1", "ExitCode:3", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "one container completed while another runs, pod ready",
			pod: &corev1.Pod{
				ObjectMeta: meta("mixed-ready"),
				Spec:       corev1.PodSpec{Containers: containers("init-like", "app")},
				Status: corev1.PodStatus{
					Phase:      corev1.PodRunning,
					Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
					ContainerStatuses: []corev1.ContainerStatus{
						{Name: "init-like", State: terminated("Completed", 0, 0)},
						{Name: "app", Ready: true, State: running()},
					},
				},
			},
			want: []interface{}{"mixed-ready", "1/2", "Running", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "one container completed while another runs, pod not ready",
			pod: &corev1.Pod{
				ObjectMeta: meta("mixed-notready"),
				Spec:       corev1.PodSpec{Containers: containers("init-like", "app")},
				Status: corev1.PodStatus{
					Phase: corev1.PodRunning,
					ContainerStatuses: []corev1.ContainerStatus{
						{Name: "init-like", State: terminated("Completed", 0, 0)},
						{Name: "app", Ready: true, State: running()},
					},
				},
			},
			want: []interface{}{"mixed-notready", "1/2", "NotReady", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "pending, container creating",
			pod: &corev1.Pod{
				ObjectMeta: meta("new"),
				Spec:       corev1.PodSpec{Containers: containers("app"), NodeName: "node-2"},
				Status: corev1.PodStatus{
					Phase:             corev1.PodPending,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: waiting("ContainerCreating")}},
				},
			},
			want: []interface{}{"new", "0/1", "ContainerCreating", "0", age, "<none>", "node-2", "<none>", "<none>"},
		},
		{
			name: "pending without statuses",
			pod: &corev1.Pod{
				ObjectMeta: meta("unscheduled"),
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status:     corev1.PodStatus{Phase: corev1.PodPending},
			},
			want: []interface{}{"unscheduled", "0/1", "Pending", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "scheduling gated",
			pod: &corev1.Pod{
				ObjectMeta: meta("gated"),
				Spec:       corev1.PodSpec{Containers: containers("app"), SchedulingGates: []corev1.PodSchedulingGate{{Name: "wait"}}},
				Status: corev1.PodStatus{
					Phase: corev1.PodPending,
					Conditions: []corev1.PodCondition{{
						Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated,
					}},
				},
			},
			want: []interface{}{"gated", "0/1", "SchedulingGated", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init containers in progress",
			pod: &corev1.Pod{
				ObjectMeta: meta("init-progress"),
				Spec: corev1.PodSpec{
					InitContainers: containers("migrate", "seed"),
					Containers:     containers("app"),
				},
				Status: corev1.PodStatus{
					Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{
						{Name: "migrate", State: terminated("Completed", 0, 0)},
						{Name: "seed", State: running()},
					},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: waiting("PodInitializing")}},
				},
			},
			want: []interface{}{"init-progress", "0/1", "Init:1/2", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container waiting on PodInitializing counts as in progress",
			pod: &corev1.Pod{
				ObjectMeta: meta("init-start"),
				Spec:       corev1.PodSpec{InitContainers: containers("migrate"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: waiting("PodInitializing")}},
				},
			},
			want: []interface{}{"init-start", "0/1", "Init:0/1", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container crash loop",
			pod: &corev1.Pod{
				ObjectMeta: meta("init-crash"),
				Spec:       corev1.PodSpec{InitContainers: containers("migrate"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{
						{Name: "migrate", State: waiting("CrashLoopBackOff"), RestartCount: 4, LastTerminationState: lastTerminated(2 * time.Minute)},
					},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: waiting("PodInitializing")}},
				},
			},
			want: []interface{}{"init-crash", "0/1", "Init:CrashLoopBackOff", "4 (2m ago)", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container failed with a reason",
			pod: &corev1.Pod{
				ObjectMeta: meta("init-error"),
				Spec:       corev1.PodSpec{InitContainers: containers("migrate"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: terminated("Error", 1, 0)}},
				},
			},
			want: []interface{}{"init-error", "0/1", "Init:Error", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container failed with an exit code",
			pod: &corev1.Pod{
				ObjectMeta: meta("init-exit"),
				Spec:       corev1.PodSpec{InitContainers: containers("migrate"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: terminated("", 2, 0)}},
				},
			},
			want: []interface{}{"init-exit", "0/1", "Init:ExitCode:2", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container killed by a signal",
			pod: &corev1.Pod{
				ObjectMeta: meta("init-signal"),
				Spec:       corev1.PodSpec{InitContainers: containers("migrate"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: terminated("", 137, 9)}},
				},
			},
			want: []interface{}{"init-signal", "0/1", "Init:Signal:9", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "initialized pod whose init status was reset shows its containers",
			pod: &corev1.Pod{
				ObjectMeta: meta("reinit"),
				Spec:       corev1.PodSpec{InitContainers: containers("migrate"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodRunning,
					Conditions:            []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: waiting("CrashLoopBackOff"), RestartCount: 2}},
					ContainerStatuses: []corev1.ContainerStatus{
						{Name: "app", State: waiting("ContainerCreating"), RestartCount: 1, LastTerminationState: lastTerminated(20 * time.Minute)},
					},
				},
			},
			want: []interface{}{"reinit", "0/1", "ContainerCreating", "1 (20m ago)", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "sidecar init container counts towards ready and restarts",
			pod: &corev1.Pod{
				ObjectMeta: meta("with-sidecar"),
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{containers("setup")[0], sidecar("mesh")},
					Containers:     containers("app"),
				},
				Status: corev1.PodStatus{
					Phase:      corev1.PodRunning,
					Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
					InitContainerStatuses: []corev1.ContainerStatus{
						{Name: "setup", State: terminated("Completed", 0, 0), RestartCount: 7},
						{Name: "mesh", Ready: true, Started: ptr.To(true), State: running(), RestartCount: 2, LastTerminationState: lastTerminated(10 * time.Minute)},
					},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}},
				},
			},
			want: []interface{}{"with-sidecar", "2/2", "Running", "2 (10m ago)", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "sidecar not yet started blocks initialization",
			pod: &corev1.Pod{
				ObjectMeta: meta("sidecar-starting"),
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{sidecar("mesh"), containers("setup")[0]},
					Containers:     containers("app"),
				},
				Status: corev1.PodStatus{
					Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{
						{Name: "mesh", Started: ptr.To(false), State: running()},
						{Name: "setup", State: waiting("PodInitializing")},
					},
				},
			},
			want: []interface{}{"sidecar-starting", "0/2", "Init:0/2", "0", age, "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "wide columns",
			pod: &corev1.Pod{
				ObjectMeta: meta("wide"),
				Spec: corev1.PodSpec{
					Containers: containers("app"),
					NodeName:   "node-3",
					ReadinessGates: []corev1.PodReadinessGate{
						{ConditionType: "example.com/lb-ready"},
						{ConditionType: "example.com/feature"},
					},
				},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					PodIPs:            []corev1.PodIP{{IP: "fd00::5"}, {IP: "10.1.0.9"}},
					NominatedNodeName: "node-4",
					Conditions: []corev1.PodCondition{
						{Type: "example.com/lb-ready", Status: corev1.ConditionTrue},
						{Type: "example.com/feature", Status: corev1.ConditionFalse},
					},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}},
				},
			},
			want: []interface{}{"wide", "1/1", "Running", "0", age, "fd00::5", "node-3", "node-4", "1/2"},
		},
		{
			name: "zero creation timestamp",
			pod: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "ageless"},
				Status:     corev1.PodStatus{Phase: corev1.PodPending},
			},
			want: []interface{}{"ageless", "0/0", "Pending", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
	}

	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := p.Table(tt.pod, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows = %d, want 1", len(table.Rows))
			}
			row := table.Rows[0]
			assertCells(t, row.Cells, tt.want)
			if !reflect.DeepEqual(row.Conditions, tt.wantConditions) {
				t.Errorf("conditions = %#v, want %#v", row.Conditions, tt.wantConditions)
			}
			if row.Object.Object != tt.pod {
				t.Errorf("row object is not the pod")
			}
		})
	}
}

func TestPodListRows(t *testing.T) {
	p := newTestPrinter()
	list := &corev1.PodList{
		ListMeta: metav1.ListMeta{ResourceVersion: "55"},
		Items: []corev1.Pod{
			{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		},
	}
	table, err := p.Table(list, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 9 {
		t.Errorf("columns = %d, want 9 (wide)", len(table.ColumnDefinitions))
	}
	if table.ResourceVersion != "55" {
		t.Errorf("resourceVersion = %q, want 55", table.ResourceVersion)
	}
	if len(table.Rows) != 2 {
		t.Fatalf("rows = %d, want 2", len(table.Rows))
	}
	if table.Rows[0].Cells[0] != "a" || table.Rows[1].Cells[0] != "b" {
		t.Errorf("rows out of order: %v, %v", table.Rows[0].Cells[0], table.Rows[1].Cells[0])
	}
	if len(table.Rows[0].Conditions) != 1 || table.Rows[1].Conditions != nil {
		t.Errorf("conditions = %v / %v, want completed on the first row only", table.Rows[0].Conditions, table.Rows[1].Conditions)
	}
	if table.Rows[1].Object.Object != &list.Items[1] {
		t.Errorf("row object is not the list item")
	}
}

// The row conditions of finished pods, as upstream prints them.
var (
	succeededConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "The pod has completed successfully."}}
	failedConditions    = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Failed", Message: "The pod failed."}}
)
