package nodestatus

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Upstream's defaults.
const (
	StatusUpdateFrequency = 10 * time.Second
	StatusReportFrequency = 5 * time.Minute
	LeaseDurationSeconds  = 40
	LeaseRenewInterval    = 10 * time.Second
	LeaseNamespace        = "kube-node-lease"
)

// Options configure a Manager.
type Options struct {
	NodeName string
	Client   kubernetes.Interface
	NodeIP   string
	Hostname string
	Machine  Machine
	// KubeletVersion is reported in nodeInfo.
	KubeletVersion string
	// KubeletPort is the kubelet's HTTPS port (daemonEndpoints).
	KubeletPort int32
	// RuntimeVersion asks the container runtime for its version; an error
	// makes the node NotReady.
	RuntimeVersion func(ctx context.Context) (string, error)
	// NetworkStatus says whether pods can be networked.
	NetworkStatus func(ctx context.Context) error
	// OnPodCIDR is called with the node's spec.podCIDR when it is set.
	OnPodCIDR func(cidr string) error
	// PressureConditions gives MemoryPressure, DiskPressure and
	// PIDPressure (the eviction manager's); nil: all three False.
	PressureConditions func() []corev1.NodeCondition

	UpdateFrequency time.Duration
	ReportFrequency time.Duration
	RenewInterval   time.Duration
	Now             func() time.Time
}

// Manager registers the node, keeps its status and renews its lease.
type Manager struct {
	o        Options
	poke     chan struct{}
	lastSent *corev1.NodeStatus
	lastTime time.Time
	// reported are the addresses of the last status the API server took
	// (upstream's lastObservedNodeAddresses), read by the serving
	// certificate's manager.
	reported atomic.Pointer[[]corev1.NodeAddress]
}

// ReportedAddresses are the node's addresses as last stored in its
// status; nil before the first registration or status update.
func (m *Manager) ReportedAddresses() []corev1.NodeAddress {
	if p := m.reported.Load(); p != nil {
		return *p
	}
	return nil
}

// sent records st as the last status the API server took.
func (m *Manager) sent(st *corev1.NodeStatus) {
	m.lastSent, m.lastTime = st, m.o.Now()
	addrs := append([]corev1.NodeAddress(nil), st.Addresses...)
	m.reported.Store(&addrs)
}

// New returns a Manager with upstream's frequencies where unset.
func New(o Options) *Manager {
	if o.UpdateFrequency <= 0 {
		o.UpdateFrequency = StatusUpdateFrequency
	}
	if o.ReportFrequency <= 0 {
		o.ReportFrequency = StatusReportFrequency
	}
	if o.RenewInterval <= 0 {
		o.RenewInterval = LeaseRenewInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Manager{o: o, poke: make(chan struct{}, 1)}
}

// Labels are the well-known labels a kubelet puts on its node.
func (m *Manager) Labels() map[string]string {
	return map[string]string{
		corev1.LabelHostname:      m.o.NodeName,
		corev1.LabelOSStable:      runtime.GOOS,
		corev1.LabelArchStable:    runtime.GOARCH,
		"beta.kubernetes.io/os":   runtime.GOOS,
		"beta.kubernetes.io/arch": runtime.GOARCH,
	}
}

// Status computes the node's status now. old carries condition transition
// times over.
func (m *Manager) Status(ctx context.Context, old *corev1.NodeStatus) corev1.NodeStatus {
	now := metav1.NewTime(m.o.Now().Truncate(time.Second))
	mi := m.o.Machine
	runtimeVersion, rtErr := m.o.RuntimeVersion(ctx)
	netErr := m.o.NetworkStatus(ctx)
	st := corev1.NodeStatus{
		Capacity:    mi.Capacity(),
		Allocatable: mi.Capacity(),
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: m.o.NodeIP},
			{Type: corev1.NodeHostName, Address: m.o.Hostname},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: m.o.KubeletPort}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:        mi.MachineID,
			SystemUUID:       mi.SystemUUID,
			BootID:           mi.BootID,
			KernelVersion:    mi.KernelVersion,
			OSImage:          mi.OSImage,
			OperatingSystem:  runtime.GOOS,
			Architecture:     runtime.GOARCH,
			KubeletVersion:   m.o.KubeletVersion,
			KubeProxyVersion: m.o.KubeletVersion,
		},
	}
	if rtErr == nil {
		st.NodeInfo.ContainerRuntimeVersion = "containerd://" + runtimeVersion
	}
	ready := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		Reason: "KubeletReady", Message: "kubelet is posting ready status",
	}
	switch {
	case rtErr != nil:
		ready.Status, ready.Reason = corev1.ConditionFalse, "KubeletNotReady"
		ready.Message = fmt.Sprintf("container runtime is down: %v", rtErr)
	case netErr != nil:
		ready.Status, ready.Reason = corev1.ConditionFalse, "KubeletNotReady"
		ready.Message = fmt.Sprintf("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:%v", netErr)
	}
	pressure := func(t corev1.NodeConditionType, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: msg}
	}
	st.Conditions = []corev1.NodeCondition{
		pressure(corev1.NodeMemoryPressure, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		pressure(corev1.NodeDiskPressure, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		pressure(corev1.NodePIDPressure, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		ready,
	}
	if m.o.PressureConditions != nil {
		for _, pc := range m.o.PressureConditions() {
			for i := range st.Conditions {
				if st.Conditions[i].Type == pc.Type {
					st.Conditions[i].Status, st.Conditions[i].Reason, st.Conditions[i].Message = pc.Status, pc.Reason, pc.Message
				}
			}
		}
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.LastHeartbeatTime, c.LastTransitionTime = now, now
		if old == nil {
			continue
		}
		for _, o := range old.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	return st
}

// Changed says whether two statuses differ in more than heartbeat times.
func Changed(a, b *corev1.NodeStatus) bool {
	if a == nil || b == nil {
		return true
	}
	strip := func(s *corev1.NodeStatus) *corev1.NodeStatus {
		c := s.DeepCopy()
		for i := range c.Conditions {
			c.Conditions[i].LastHeartbeatTime = metav1.Time{}
		}
		return c
	}
	return !apiequality.Semantic.DeepEqual(strip(a), strip(b))
}

// Register creates the Node with its status (the API server keeps the
// status a node is created with), or, when it exists, brings its labels
// and status up to date.
func (m *Manager) Register(ctx context.Context) error {
	st := m.Status(ctx, nil)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: m.o.NodeName, Labels: m.Labels()},
		Status:     st,
	}
	_, err := m.o.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		m.sent(&st)
		klog.FromContext(ctx).Info("Registered node", "node", m.o.NodeName)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("registering node %s: %w", m.o.NodeName, err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := m.o.Client.CoreV1().Nodes().Get(ctx, m.o.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		missing := false
		for k, v := range m.Labels() {
			if cur.Labels[k] != v {
				missing = true
			}
		}
		if !missing {
			return nil
		}
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		for k, v := range m.Labels() {
			cur.Labels[k] = v
		}
		_, err = m.o.Client.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating node %s labels: %w", m.o.NodeName, err)
	}
	return m.update(ctx, true)
}

// update sends the status when it changed, or when force, or when the
// last report is older than the report frequency.
func (m *Manager) update(ctx context.Context, force bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := m.o.Client.CoreV1().Nodes().Get(ctx, m.o.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		old := m.lastSent
		if old == nil {
			old = &cur.Status
		}
		st := m.Status(ctx, old)
		if !force && !Changed(m.lastSent, &st) && m.o.Now().Sub(m.lastTime) < m.o.ReportFrequency {
			return nil
		}
		st.Images, st.VolumesInUse, st.VolumesAttached = cur.Status.Images, cur.Status.VolumesInUse, cur.Status.VolumesAttached
		cur.Status = st
		if _, err := m.o.Client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
		m.sent(&st)
		return nil
	})
}

// Start keeps the status and the lease up to date and hands the node's pod
// CIDR to OnPodCIDR, until ctx ends.
func (m *Manager) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(m.o.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", m.o.NodeName).String()
		}))
	inf := factory.Core().V1().Nodes().Informer()
	onNode := func(obj any) {
		node, ok := obj.(*corev1.Node)
		if !ok || node.Spec.PodCIDR == "" || m.o.OnPodCIDR == nil {
			return
		}
		if err := m.o.OnPodCIDR(node.Spec.PodCIDR); err != nil {
			logger.Error(err, "Configuring the pod network", "podCIDR", node.Spec.PodCIDR)
			return
		}
		select {
		case m.poke <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onNode,
		UpdateFunc: func(_, n any) { onNode(n) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	go m.leaseLoop(ctx)
	t := time.NewTicker(m.o.UpdateFrequency)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-m.poke:
		}
		if err := m.update(ctx, false); err != nil && ctx.Err() == nil {
			logger.Error(err, "Updating node status")
		}
	}
}

func (m *Manager) leaseLoop(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for {
		if err := m.RenewLease(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Renewing the node lease")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(m.o.RenewInterval):
		}
	}
}

// RenewLease creates or renews kube-node-lease/<node>.
func (m *Manager) RenewLease(ctx context.Context) error {
	leases := m.o.Client.CoordinationV1().Leases(LeaseNamespace)
	now := metav1.NewMicroTime(m.o.Now())
	lease, err := leases.Get(ctx, m.o.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: m.o.NodeName, Namespace: LeaseNamespace},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(m.o.NodeName),
				LeaseDurationSeconds: ptr.To[int32](LeaseDurationSeconds),
				RenewTime:            &now,
			},
		}
		if node, err := m.o.Client.CoreV1().Nodes().Get(ctx, m.o.NodeName, metav1.GetOptions{}); err == nil {
			lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
		}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.HolderIdentity = ptr.To(m.o.NodeName)
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](LeaseDurationSeconds)
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}
