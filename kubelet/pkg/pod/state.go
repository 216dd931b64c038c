package pod

import (
	"context"
	"errors"
	"io"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/kubelet/pkg/images"
)

// Labels the kubelet puts on every container it creates; they are all it
// needs to find a pod's containers again after a restart.
const (
	LabelPodUID        = "skiff.dev/pod-uid"
	LabelPodName       = "skiff.dev/pod-name"
	LabelPodNamespace  = "skiff.dev/pod-namespace"
	LabelContainerName = "skiff.dev/container-name"
	LabelAttempt       = "skiff.dev/attempt"
)

// SandboxID is the runtime's ID of the sandbox (pause) container of the
// pod uid, whose PID namespace the containers of a pod with
// shareProcessNamespace share. It carries none of the labels above, so
// ListContainers does not list it: the runtime removes it with the last
// container that joined it, and RemoveContainer(SandboxID(uid)) removes it
// at once.
func SandboxID(uid types.UID) string { return "sandbox-" + string(uid) }

// ErrImageNotFound is returned by Runtime.GetImage for an image that is not
// in the local store.
var ErrImageNotFound = errors.New("image not found")

// ContainerState is what the runtime says a container is doing.
type ContainerState string

// The container states.
const (
	StateCreated ContainerState = "created"
	StateRunning ContainerState = "running"
	StateExited  ContainerState = "exited"
	StateUnknown ContainerState = "unknown"
)

// Container is the runtime's view of one container.
type Container struct {
	ID         string
	Labels     map[string]string
	State      ContainerState
	ExitCode   int32
	Reason     string // for exited containers: e.g. "OOMKilled"; empty otherwise
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	Image      string // the reference it was created from
	ImageID    string // repo@digest
}

// PodUID is the UID label of the container.
func (c Container) PodUID() types.UID { return types.UID(c.Labels[LabelPodUID]) }

// Name is the container name in the pod spec.
func (c Container) Name() string { return c.Labels[LabelContainerName] }

// Attempt is how many times the container was restarted before this one.
func (c Container) Attempt() int {
	n, _ := strconv.Atoi(c.Labels[LabelAttempt])
	return n
}

// ContainerSpec is what the runtime needs to create a container.
type ContainerSpec struct {
	ID     string
	Labels map[string]string
	// Image is the normalised reference (already pulled).
	Image string
	// Command and Args follow the pod spec: Command replaces the image's
	// entrypoint, Args its cmd.
	Command    []string
	Args       []string
	Env        []string
	WorkingDir string
	Hostname   string
	// NetNSPath is the pod's network namespace, which the container joins.
	NetNSPath string
	// HostNetwork puts the container in the node's network namespace.
	HostNetwork bool
	// TargetID, when set, is the running container whose process (PID)
	// namespace this one joins: an ephemeral container's
	// targetContainerName, as upstream's namespace mode TARGET.
	TargetID string
	// SharePID puts the container in the PID namespace of the pod's
	// sandbox container (SandboxID), which the runtime starts with the
	// pod's first such container: a pause process, PID 1 of that
	// namespace, that reaps the pod's orphans (spec.shareProcessNamespace,
	// upstream's namespace mode POD).
	SharePID bool
	// HostPID puts the container in the node's PID namespace (hostPID,
	// upstream's namespace mode NODE).
	HostPID bool
	// CgroupParent is the pod's cgroup, where the container's own cgroup
	// is made; empty: the runtime's default.
	CgroupParent string
	// MemoryLimit in bytes, 0 for none.
	MemoryLimit int64
	// CPUShares is the cgroup cpu.shares; CPUQuota/CPUPeriod the CFS quota
	// in microseconds (quota 0 for none).
	CPUShares uint64
	CPUQuota  int64
	CPUPeriod uint64
	// LogPath receives the container's stdout and stderr.
	LogPath string
	// Stdin opens a stdin for the container that attach writes to;
	// StdinOnce closes it when the first attach's stdin ends (the pod
	// spec's stdin and stdinOnce).
	Stdin, StdinOnce bool
	// TTY gives the container's process a terminal (the pod spec's tty):
	// its stdout and stderr are the terminal's output.
	TTY bool
	// Mounts are bind mounts of the pod's volumes.
	Mounts []Mount
	// Security is the container's effective security context.
	Security Security
}

// Security is what a container's securityContext (merged with the pod's)
// asks of the runtime.
type Security struct {
	// RunAsUser and RunAsGroup override the image's user when set.
	RunAsUser  *int64
	RunAsGroup *int64
	// SupplementalGroups are added to the process's groups.
	SupplementalGroups []int64
	// ReadOnlyRootFilesystem mounts the root filesystem read-only.
	ReadOnlyRootFilesystem bool
	// Privileged gives every capability and the host's devices.
	Privileged bool
	// CapAdd and CapDrop change the default (OCI) capability set; names
	// as in the pod spec ("NET_ADMIN", or "ALL").
	CapAdd, CapDrop []string
	// NoNewPrivileges sets the process's no_new_privs flag
	// (allowPrivilegeEscalation: false).
	NoNewPrivileges bool
	// Sysctls are the pod's securityContext.sysctls, set in the
	// container's (the pod's shared) namespaces.
	Sysctls map[string]string
}

// Mount is a bind mount of a host path into a container.
type Mount struct {
	Source, Destination string
	ReadOnly            bool
}

// Image is a pulled image.
type Image struct {
	Ref string // normalised reference
	ID  string // repo@digest, as upstream's imageID
}

// Runtime is the container runtime, as the pod lifecycle uses it.
type Runtime interface {
	// GetImage returns a local image, or ErrImageNotFound.
	GetImage(ctx context.Context, ref string) (Image, error)
	// PullImage pulls ref, with the pod's image pull secrets' credentials.
	PullImage(ctx context.Context, ref string, creds []images.Credential) (Image, error)
	// CreateContainer creates the container; its error wraps
	// ErrImageNotFound when the image, or part of it, is gone.
	CreateContainer(ctx context.Context, spec ContainerSpec) error
	StartContainer(ctx context.Context, id string) error
	// StopContainer sends SIGTERM, waits up to grace, then SIGKILL.
	StopContainer(ctx context.Context, id string, grace time.Duration) error
	RemoveContainer(ctx context.Context, id string) error
	// ListContainers returns the containers the kubelet created for the
	// pod (every pod's when podUID is empty), with their current state.
	ListContainers(ctx context.Context, podUID types.UID) ([]Container, error)
	// Exec runs cmd in a running container and returns its exit code and
	// combined output; it gives up after timeout.
	Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (exitCode int32, output []byte, err error)
}

// PodNetwork identifies a pod to the network plugin.
type PodNetwork struct {
	UID       types.UID
	Name      string
	Namespace string
	Ports     []PortMapping
}

// PortMapping is a container's hostPort.
type PortMapping struct {
	HostPort      int32
	ContainerPort int32
	Protocol      string
	HostIP        string
}

// Sandbox is a pod's network namespace and addresses.
type Sandbox struct {
	NetNSPath string
	IPs       []string
}

// Network gives pods a network namespace and addresses.
type Network interface {
	// SetUp creates (or finds again) the pod's namespace and addresses.
	SetUp(ctx context.Context, pn PodNetwork) (Sandbox, error)
	// TearDown releases the addresses and removes the namespace; tearing
	// down what does not exist is not an error.
	TearDown(ctx context.Context, pn PodNetwork) error
}

// ImageState is the images hook's record for one container.
type ImageState struct {
	Image Image
	// Ready says Image may be used.
	Ready bool
	// PulledFor is the attempt the image was pulled for (policy Always).
	PulledFor int
	// Reason and Message explain why the image is not ready
	// (ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName).
	Reason, Message string
	// Failures counts consecutive failed pulls; RetryAt is when the next
	// pull may be tried.
	Failures int
	RetryAt  time.Time
}

// ContainerError is a failure to create or start a container, shown as
// its waiting reason (CreateContainerConfigError, CreateContainerError,
// RunContainerError).
type ContainerError struct {
	Reason, Message string
	Failures        int
	RetryAt         time.Time
}

// State is what the hooks know about one pod.
type State struct {
	Pod     *corev1.Pod
	Sandbox *Sandbox
	// Prepared says every Preparer succeeded.
	Prepared bool
	// Changed says a hook created, started, stopped or removed a
	// container in this sync, so Containers must be read again.
	Changed bool
	Images  map[string]*ImageState
	// Containers are the runtime's containers of this pod, refreshed
	// before every sync.
	Containers []Container
	Errors     map[string]ContainerError
	// Probes are the probe results per container name.
	Probes map[string]*ProbeState
	// Volumes are the pod's volumes on the host, by name.
	Volumes map[string]Volume
	// EtcMounts are the pod's /etc/hosts and /etc/resolv.conf.
	EtcMounts   []Mount
	volumeState *volumeState
	// Now is the time of the current sync.
	Now time.Time
	// GracePeriod is used when the pod is being stopped.
	GracePeriod time.Duration
	// BackOffFrom is, per container name, the attempt after which its
	// current crash back-off began: the last one that ran long enough to
	// reset it (BackOffResetAfter).
	BackOffFrom map[string]int
	// CgroupParent is the pod's cgroup (CgroupHook); empty: none.
	CgroupParent string
	// TerminationMessages are the exited containers' termination
	// messages, by container ID (ReadTerminationMessages).
	TerminationMessages map[string]string
	// FirstPullStarted and LastPullFinished bound the time the pod's image
	// pulls took, which the pod start SLI leaves out.
	FirstPullStarted, LastPullFinished time.Time
}

// NewState returns the state of a pod not yet prepared.
func NewState(pod *corev1.Pod) *State {
	return &State{Pod: pod, Images: map[string]*ImageState{}, Errors: map[string]ContainerError{}, Probes: map[string]*ProbeState{}}
}

// Latest returns the newest container (highest attempt) for a container
// name, and the one before it.
func (s *State) Latest(name string) (cur, prev *Container) {
	var list []Container
	for _, c := range s.Containers {
		if c.Name() == name {
			list = append(list, c)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Attempt() > list[j].Attempt() })
	if len(list) > 0 {
		cur = &list[0]
	}
	if len(list) > 1 {
		prev = &list[1]
	}
	return cur, prev
}

// Refresh reads the pod's containers from the runtime into s.Containers.
func (s *State) Refresh(ctx context.Context, rt Runtime) error {
	all, err := rt.ListContainers(ctx, s.Pod.UID)
	if err != nil {
		return err
	}
	var mine []Container
	for _, c := range all {
		if c.PodUID() == s.Pod.UID {
			mine = append(mine, c)
		}
	}
	s.Containers = mine
	return nil
}

// NetworkOf is the PodNetwork of a pod.
func NetworkOf(pod *corev1.Pod) PodNetwork {
	pn := PodNetwork{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			proto := string(p.Protocol)
			if proto == "" {
				proto = "TCP"
			}
			pn.Ports = append(pn.Ports, PortMapping{HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: proto, HostIP: p.HostIP})
		}
	}
	return pn
}

// ExecOptions are the streams of an interactive exec.
type ExecOptions struct {
	Cmd []string
	// TTY gives the process a terminal; its output then all goes to
	// Stdout.
	TTY    bool
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Resize delivers terminal size changes (TTY only); may be nil.
	Resize <-chan TerminalSize
}

// TerminalSize is a terminal's width and height in characters.
type TerminalSize struct {
	Width, Height uint16
}
