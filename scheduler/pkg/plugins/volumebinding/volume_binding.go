package volumebinding

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/nodeaffinity"
)

// Name is the plugin's name.
const Name = "VolumeBinding"

// Upstream's reasons.
const (
	ErrReasonBindConflict     = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict     = "node(s) had volume node affinity conflict"
	ErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
	DefaultBindTimeout        = 600 * time.Second
	annSelectedNode           = "volume.kubernetes.io/selected-node"
	annBoundByController      = "pv.kubernetes.io/bound-by-controller"
	notSupportedProvisioner   = "kubernetes.io/no-provisioner"
	stateKey                  = framework.StateKey(Name)
	pollInterval              = 100 * time.Millisecond
	errClaimNotFound          = "persistentvolumeclaim %q not found"
)

// VolumeBinding is the plugin.
type VolumeBinding struct {
	client kubernetes.Interface
	// handle gives the listers, which the scheduler sets after the
	// plugins are built.
	handle  framework.Handle
	timeout time.Duration
}

var (
	_ framework.PreFilterPlugin = (*VolumeBinding)(nil)
	_ framework.FilterPlugin    = (*VolumeBinding)(nil)
	_ framework.ReservePlugin   = (*VolumeBinding)(nil)
	_ framework.PreBindPlugin   = (*VolumeBinding)(nil)
)

// Args are the plugin's arguments, as upstream's VolumeBindingArgs.
type Args struct {
	BindTimeoutSeconds *int64 `json:"bindTimeoutSeconds,omitempty"`
}

// New is the plugin's factory: args are VolumeBindingArgs (JSON), the
// client is the framework handle's.
func New(args json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	var a Args
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("VolumeBindingArgs: %w", err)
		}
	}
	timeout := DefaultBindTimeout
	if a.BindTimeoutSeconds != nil {
		if *a.BindTimeoutSeconds < 0 {
			return nil, fmt.Errorf("bindTimeoutSeconds must not be negative")
		}
		timeout = time.Duration(*a.BindTimeoutSeconds) * time.Second
	}
	var client kubernetes.Interface
	if fh, ok := h.(framework.FrameworkHandle); ok {
		client = fh.ClientSet()
	}
	return &VolumeBinding{client: client, handle: h, timeout: timeout}, nil
}

func (b *VolumeBinding) pvcLister() corelisters.PersistentVolumeClaimLister {
	return b.handle.Listers().PersistentVolumeClaims
}
func (b *VolumeBinding) pvLister() corelisters.PersistentVolumeLister {
	return b.handle.Listers().PersistentVolumes
}
func (b *VolumeBinding) classLister() storagelisters.StorageClassLister {
	return b.handle.Listers().StorageClasses
}

// Name returns Name.
func (*VolumeBinding) Name() string { return Name }

// podVolumes is what PreFilter found and Filter decided, per node.
type podVolumes struct {
	bound   []*corev1.PersistentVolume
	delayed []*corev1.PersistentVolumeClaim
	// byNode: for each node that passed, the static volume chosen for each
	// delayed claim (nil: provision it there).
	byNode map[string][]*corev1.PersistentVolume
	// reserved is the node Reserve kept.
	reserved string
}

// claimNames are the pod's claims.
func claimNames(pod *corev1.Pod) []string {
	var out []string
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, pod.Name+"-"+v.Name)
		}
	}
	return out
}

func (b *VolumeBinding) class(pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
	name := ptr.Deref(pvc.Spec.StorageClassName, "")
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		name = c
	}
	if name == "" || b.classLister() == nil {
		return nil, nil
	}
	c, err := b.classLister().Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return c, err
}

// PreFilter reads the pod's claims.
func (b *VolumeBinding) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	names := claimNames(pod)
	if len(names) == 0 || b.pvcLister() == nil {
		return framework.NewStatus(framework.Skip)
	}
	pv := &podVolumes{byNode: map[string][]*corev1.PersistentVolume{}}
	immediate := false
	for _, name := range names {
		pvc, err := b.pvcLister().PersistentVolumeClaims(pod.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf(errClaimNotFound, name))
		}
		if err != nil {
			return framework.AsStatus(err)
		}
		if pvc.DeletionTimestamp != nil {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q is being deleted", name))
		}
		if isEphemeral(pod, name) {
			if ref := metav1.GetControllerOfNoCopy(pvc); ref == nil || ref.UID != pod.UID {
				return framework.NewStatus(framework.UnschedulableAndUnresolvable,
					fmt.Sprintf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pod.Namespace, name, pod.Namespace, pod.Name))
			}
		}
		if pvc.Spec.VolumeName != "" {
			vol, err := b.pvLister().Get(pvc.Spec.VolumeName)
			if apierrors.IsNotFound(err) {
				return framework.NewStatus(framework.UnschedulableAndUnresolvable,
					"pvc(s) bound to non-existent pv(s)")
			}
			if err != nil {
				return framework.AsStatus(err)
			}
			pv.bound = append(pv.bound, vol)
			continue
		}
		class, err := b.class(pvc)
		if err != nil {
			return framework.AsStatus(err)
		}
		if class != nil && ptr.Deref(class.VolumeBindingMode, storagev1.VolumeBindingImmediate) == storagev1.VolumeBindingWaitForFirstConsumer {
			pv.delayed = append(pv.delayed, pvc)
			continue
		}
		immediate = true
	}
	if immediate {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate)
	}
	state.Write(stateKey, pv)
	return nil
}

func isEphemeral(pod *corev1.Pod, claim string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Ephemeral != nil && pod.Name+"-"+v.Name == claim {
			return true
		}
	}
	return false
}

func readState(state *framework.CycleState) (*podVolumes, *framework.Status) {
	v, err := state.Read(stateKey)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	return v.(*podVolumes), nil
}

// Filter checks the node against the volumes the pod needs.
func (b *VolumeBinding) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	pv, st := readState(state)
	if st != nil {
		return st
	}
	node := ni.Node()
	for _, vol := range pv.bound {
		if !volumeFitsNode(vol, node) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeConflict)
		}
	}
	if len(pv.delayed) == 0 {
		return nil
	}
	chosen := make([]*corev1.PersistentVolume, len(pv.delayed))
	taken := map[string]bool{}
	var all []*corev1.PersistentVolume
	if b.pvLister() != nil {
		var err error
		if all, err = b.pvLister().List(labels.Everything()); err != nil {
			return framework.AsStatus(err)
		}
	}
	for i, pvc := range pv.delayed {
		if vol := findMatchingVolume(pvc, all, node, taken); vol != nil {
			chosen[i] = vol
			taken[vol.Name] = true
			continue
		}
		class, err := b.class(pvc)
		if err != nil {
			return framework.AsStatus(err)
		}
		if class == nil || class.Provisioner == notSupportedProvisioner || !allowedTopology(class, node) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonBindConflict)
		}
	}
	pv.byNode[node.Name] = chosen
	return nil
}

// allowedTopology: the class's allowedTopologies (if any) admit the node.
func allowedTopology(class *storagev1.StorageClass, node *corev1.Node) bool {
	if len(class.AllowedTopologies) == 0 {
		return true
	}
	var terms []corev1.NodeSelectorTerm
	for _, t := range class.AllowedTopologies {
		var term corev1.NodeSelectorTerm
		for _, e := range t.MatchLabelExpressions {
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{Key: e.Key, Operator: corev1.NodeSelectorOpIn, Values: e.Values})
		}
		terms = append(terms, term)
	}
	return nodeaffinity.MatchNodeSelectorTerms(node, terms)
}

func volumeFitsNode(vol *corev1.PersistentVolume, node *corev1.Node) bool {
	if vol.Spec.NodeAffinity == nil || vol.Spec.NodeAffinity.Required == nil {
		return true
	}
	return nodeaffinity.MatchNodeSelectorTerms(node, vol.Spec.NodeAffinity.Required.NodeSelectorTerms)
}

// findMatchingVolume is upstream's FindMatchingVolume on the scheduler
// path: a volume pre-bound to the claim if it fits the node, else the
// smallest Available volume of the claim's class, mode and access modes,
// matching its selector and fitting the node.
func findMatchingVolume(pvc *corev1.PersistentVolumeClaim, vols []*corev1.PersistentVolume, node *corev1.Node, taken map[string]bool) *corev1.PersistentVolume {
	requested := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	className := ptr.Deref(pvc.Spec.StorageClassName, "")
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		className = c
	}
	var selector labels.Selector
	if pvc.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector)
		if err != nil {
			return nil
		}
		selector = s
	}
	sorted := append([]*corev1.PersistentVolume(nil), vols...)
	sort.Slice(sorted, func(i, j int) bool {
		qi, qj := sorted[i].Spec.Capacity[corev1.ResourceStorage], sorted[j].Spec.Capacity[corev1.ResourceStorage]
		if c := qi.Cmp(qj); c != 0 {
			return c < 0
		}
		return sorted[i].Name < sorted[j].Name
	})
	for _, vol := range sorted {
		if taken[vol.Name] || vol.DeletionTimestamp != nil {
			continue
		}
		if ptr.Deref(vol.Spec.VolumeMode, corev1.PersistentVolumeFilesystem) != ptr.Deref(pvc.Spec.VolumeMode, corev1.PersistentVolumeFilesystem) {
			continue
		}
		fits := volumeFitsNode(vol, node)
		if ref := vol.Spec.ClaimRef; ref != nil && ref.Name == pvc.Name && ref.Namespace == pvc.Namespace && (ref.UID == "" || ref.UID == pvc.UID) {
			if !fits {
				return nil
			}
			return vol
		}
		if vol.Status.Phase != corev1.VolumeAvailable || vol.Spec.ClaimRef != nil || vol.Spec.StorageClassName != className || !fits {
			continue
		}
		if selector != nil && !selector.Matches(labels.Set(vol.Labels)) {
			continue
		}
		if !hasModes(vol.Spec.AccessModes, pvc.Spec.AccessModes) {
			continue
		}
		if q := vol.Spec.Capacity[corev1.ResourceStorage]; q.Cmp(requested) >= 0 {
			return vol
		}
	}
	return nil
}

func hasModes(have, want []corev1.PersistentVolumeAccessMode) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// Reserve keeps the node's decisions.
func (b *VolumeBinding) Reserve(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeName string) *framework.Status {
	v, err := state.Read(stateKey)
	if err != nil {
		return nil // PreFilter skipped: no claims
	}
	v.(*podVolumes).reserved = nodeName
	return nil
}

// Unreserve forgets them; nothing was written to the API yet, or PreBind
// failed, in which case the binder and the next cycle sort the claims out.
func (b *VolumeBinding) Unreserve(_ context.Context, state *framework.CycleState, _ *corev1.Pod, _ string) {
	if v, err := state.Read(stateKey); err == nil {
		v.(*podVolumes).reserved = ""
	}
}

// PreBind binds the chosen static volumes, asks for the rest to be
// provisioned on the node, and waits until every claim is Bound.
func (b *VolumeBinding) PreBind(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	v, err := state.Read(stateKey)
	if err != nil {
		return nil
	}
	pv := v.(*podVolumes)
	if len(pv.delayed) == 0 {
		return nil
	}
	chosen := pv.byNode[nodeName]
	logger := klog.FromContext(ctx)
	for i, pvc := range pv.delayed {
		var vol *corev1.PersistentVolume
		if i < len(chosen) {
			vol = chosen[i]
		}
		if vol != nil {
			if err := b.bindVolume(ctx, vol, pvc); err != nil {
				return framework.AsStatus(fmt.Errorf("binding volumes: %w", err))
			}
			logger.V(4).Info("Bound a volume to a claim for the pod", "pod", klog.KObj(pod), "PVC", klog.KObj(pvc), "volume", vol.Name)
			continue
		}
		if err := b.selectNode(ctx, pvc, nodeName); err != nil {
			return framework.AsStatus(fmt.Errorf("binding volumes: %w", err))
		}
	}
	err = wait.PollUntilContextTimeout(ctx, pollInterval, b.timeout, true, func(context.Context) (bool, error) {
		for _, pvc := range pv.delayed {
			cur, err := b.pvcLister().PersistentVolumeClaims(pvc.Namespace).Get(pvc.Name)
			if err != nil {
				return false, err
			}
			if cur.Status.Phase != corev1.ClaimBound || cur.Spec.VolumeName == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return framework.AsStatus(fmt.Errorf("binding volumes: %w", err))
	}
	return nil
}

func (b *VolumeBinding) bindVolume(ctx context.Context, vol *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) error {
	cur, err := b.client.CoreV1().PersistentVolumes().Get(ctx, vol.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if ref := cur.Spec.ClaimRef; ref != nil {
		if ref.Name == pvc.Name && ref.Namespace == pvc.Namespace && (ref.UID == "" || ref.UID == pvc.UID) && ref.UID != "" {
			return nil
		}
		if ref.UID != "" {
			return fmt.Errorf("volume %s was bound to another claim", vol.Name)
		}
	}
	cur.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
		Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion}
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	cur.Annotations[annBoundByController] = "yes"
	_, err = b.client.CoreV1().PersistentVolumes().Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

func (b *VolumeBinding) selectNode(ctx context.Context, pvc *corev1.PersistentVolumeClaim, nodeName string) error {
	cur, err := b.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Get(ctx, pvc.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cur.Annotations[annSelectedNode] == nodeName {
		return nil
	}
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	cur.Annotations[annSelectedNode] = nodeName
	_, err = b.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
	return err
}
