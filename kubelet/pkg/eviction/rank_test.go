package eviction

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

func memUsage(mi uint64) PodUsage { return PodUsage{MemoryWorkingSet: mi * Mi} }

func TestRankMemory(t *testing.T) {
	const low, high = 1, 100
	tests := []struct {
		name  string
		pods  []*corev1.Pod
		usage usageTable
		want  []string
	}{{
		// upstream's TestOrderedbyPriorityMemory
		name: "exceeds requests, then priority, then usage above requests",
		pods: []*corev1.Pod{
			testPod("below-high-low", high, "1Gi"), testPod("above-low-low", low, ""),
			testPod("below-low-high", low, "1Gi"), testPod("above-high-high", high, "100Mi"),
			testPod("below-high-high", high, "1Gi"), testPod("above-high-low", high, ""),
			testPod("above-low-high", low, ""), testPod("below-low-low", low, "1Gi"),
		},
		usage: usageTable{
			"above-low-high": memUsage(900), "above-low-low": memUsage(100),
			"above-high-high": memUsage(400), "above-high-low": memUsage(100),
			"below-low-high": memUsage(800), "below-low-low": memUsage(200),
			"below-high-high": memUsage(800), "below-high-low": memUsage(200),
		},
		want: []string{"above-low-high", "above-low-low", "above-high-high", "above-high-low",
			"below-low-high", "below-low-low", "below-high-high", "below-high-low"},
	}, {
		// upstream's TestOrderedByMemory (same priority): usage above requests
		name: "same priority ranks by usage above requests",
		pods: []*corev1.Pod{
			testPod("guaranteed-low", 0, "1Gi"), testPod("best-effort-high", 0, ""), testPod("burstable-low", 0, "100Mi"),
			testPod("guaranteed-high", 0, "1Gi"), testPod("best-effort-low", 0, ""), testPod("burstable-high", 0, "100Mi"),
		},
		usage: usageTable{
			"best-effort-high": memUsage(500), "best-effort-low": memUsage(300),
			"burstable-high": memUsage(800), "burstable-low": memUsage(300),
			"guaranteed-high": memUsage(800), "guaranteed-low": memUsage(200),
		},
		want: []string{"burstable-high", "best-effort-high", "best-effort-low", "burstable-low", "guaranteed-high", "guaranteed-low"},
	}, {
		name:  "a pod without usage goes first",
		pods:  []*corev1.Pod{testPod("known", 0, ""), testPod("unknown", 100, "1Gi")},
		usage: usageTable{"known": memUsage(900)},
		want:  []string{"unknown", "known"},
	}, {
		name:  "requests of all containers add up",
		pods:  []*corev1.Pod{testPod("two-requests", 0, "100Mi", "100Mi"), testPod("one-request", 0, "100Mi")},
		usage: usageTable{"two-requests": memUsage(150), "one-request": memUsage(150)},
		want:  []string{"one-request", "two-requests"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := append([]*corev1.Pod(nil), tt.pods...)
			rankMemory(pods, tt.usage.fn())
			if got := names(pods); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestRankMemorySidecarAndOverhead: a pod with a sidecar (an init
// container with restartPolicy Always), an ordinary init container and pod
// overhead is sized as the scheduler and the quota evaluator size it:
// containers and sidecars (200Mi), at least the init container with the
// sidecar started before it (250Mi), plus the overhead (50Mi): 300Mi. At
// 280Mi it is within its request, so the pod over its request goes first.
// (Counting only the containers and the largest init container, 150Mi,
// ranked it first.)
func TestRankMemorySidecarAndOverhead(t *testing.T) {
	sidecar := testPod("sidecar", 0, "100Mi")
	always := corev1.ContainerRestartPolicyAlways
	mem := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}
	}
	sidecar.Spec.InitContainers = []corev1.Container{
		{Name: "proxy", RestartPolicy: &always, Resources: mem("100Mi")},
		{Name: "migrate", Resources: mem("150Mi")},
	}
	sidecar.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("50Mi")}
	plain := testPod("plain", 0, "250Mi")

	got := podRequest(sidecar, corev1.ResourceMemory)
	scheduler := resourcehelper.PodRequests(sidecar, resourcehelper.PodResourcesOptions{SkipPodLevelResources: true})[corev1.ResourceMemory]
	if want := resource.MustParse("300Mi"); got.Cmp(want) != 0 || got.Cmp(scheduler) != 0 {
		t.Errorf("request = %s, want 300Mi, as the scheduler's %s", got.String(), scheduler.String())
	}
	if q := podRequest(sidecar, ResourceInodes); !q.IsZero() {
		t.Errorf("inodes request = %s, want 0", q.String())
	}
	pods := []*corev1.Pod{sidecar, plain}
	rankMemory(pods, usageTable{"sidecar": memUsage(280), "plain": memUsage(260)}.fn())
	if got, want := names(pods), []string{"plain", "sidecar"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// diskPod is a pod with one container requesting storage ("" = none).
func diskPod(name string, priority int32, request string) *corev1.Pod {
	p := testPod(name, priority, "")
	if request != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(request)}
	}
	return p
}

func diskUsageOf(rootMi, logsMi, volumesMi uint64) PodUsage {
	return PodUsage{
		VolumesBytes: volumesMi * Mi, VolumesInodes: volumesMi,
		Containers: []ContainerUsage{{RootfsBytes: rootMi * Mi, LogsBytes: logsMi * Mi, RootfsInodes: rootMi, LogsInodes: logsMi}},
	}
}

func TestRankDisk(t *testing.T) {
	pods := []*corev1.Pod{
		diskPod("big-rootfs", 0, ""), diskPod("big-volume", 0, ""),
		diskPod("within-request", 0, "2Gi"), diskPod("high-priority", 100, ""),
	}
	usage := usageTable{
		"big-rootfs":     diskUsageOf(900, 10, 0),
		"big-volume":     diskUsageOf(10, 10, 500),
		"within-request": diskUsageOf(1000, 0, 500),
		"high-priority":  diskUsageOf(2000, 0, 0),
	}
	tests := []struct {
		name      string
		sig       Signal
		dedicated bool
		want      []string
	}{
		{name: "shared filesystem counts everything", sig: SignalNodeFsAvailable,
			want: []string{"big-rootfs", "big-volume", "high-priority", "within-request"}},
		// high-priority uses no logs nor volumes: it exceeds no request,
		// so it ranks after within-request by priority.
		{name: "dedicated imagefs: nodefs counts logs and volumes", sig: SignalNodeFsAvailable, dedicated: true,
			want: []string{"big-volume", "big-rootfs", "within-request", "high-priority"}},
		{name: "dedicated imagefs: imagefs counts the writable layers", sig: SignalImageFsAvailable, dedicated: true,
			want: []string{"big-rootfs", "big-volume", "high-priority", "within-request"}},
		// inodes cannot be requested: every pod using some exceeds.
		{name: "inodes ignore storage requests", sig: SignalNodeFsInodesFree,
			want: []string{"within-request", "big-rootfs", "big-volume", "high-priority"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ranked := append([]*corev1.Pod(nil), pods...)
			rankFuncs(tt.dedicated)[tt.sig](ranked, usage.fn())
			if got := names(ranked); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestRankPIDs(t *testing.T) {
	pods := []*corev1.Pod{testPod("high-many", 100, ""), testPod("low-few", 1, ""), testPod("low-many", 1, ""), testPod("mid-many", 50, "")}
	usage := usageTable{
		"high-many": {Processes: 5000}, "low-few": {Processes: 3}, "low-many": {Processes: 300}, "mid-many": {Processes: 4000},
	}
	rankPIDs(pods, usage.fn())
	want := []string{"low-many", "low-few", "mid-many", "high-many"}
	if got := names(pods); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
