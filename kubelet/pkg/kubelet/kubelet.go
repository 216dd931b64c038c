package kubelet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/component-base/tracing"
	"skiff.dev/kubelet/pkg/eviction"
	"skiff.dev/kubelet/pkg/pleg"
	"skiff.dev/kubelet/pkg/pod"
)

// Network is the pod network as the kubelet uses it: the lifecycle's
// Network, plus the list of sandboxes for start-up clean-up.
type Network interface {
	pod.Network
	Sandboxes() ([]types.UID, error)
}

// Options configure a Kubelet.
type Options struct {
	NodeName string
	Client   kubernetes.Interface
	Runtime  pod.Runtime
	Network  Network
	// Lifecycle is the hook list shared by every pod.
	Lifecycle *pod.Lifecycle
	// PodDirs hold one entry per pod UID (volumes, logs); entries of pods
	// that are gone are cleaned up at start.
	PodDirs []string
	// PodUIDSources list other per-pod leftovers (pod cgroups), cleaned up
	// at start like PodDirs.
	PodUIDSources []func() ([]types.UID, error)
	HostIP        string
	// SyncPeriod is the per-pod resync and the PLEG's relist period (1 s
	// when 0).
	SyncPeriod time.Duration
	Metrics    *Metrics
	// Admit, when set, decides whether a new pod may start here (the
	// eviction manager's admission under node pressure); a refused pod
	// ends Failed with the reason and "Pod was rejected: <message>".
	Admit func(pod *corev1.Pod) (ok bool, reason, message string)
	// Recorder records the pod workers' events; may be nil.
	Recorder record.EventRecorder
	// TracerProvider traces the pods' syncs (nil or no-op: off).
	TracerProvider trace.TracerProvider
}

// Kubelet runs the pods bound to its node: one worker per pod, fed by an
// informer that sees only those pods and by the PLEG, which lists the
// runtime once per period for all of them.
type Kubelet struct {
	o    Options
	cfg  *pod.WorkerConfig
	pleg *pleg.PLEG

	mu      sync.Mutex
	workers map[types.UID]*pod.Worker
	wg      sync.WaitGroup
	synced  bool
	store   cache.Store
	// nodes holds this kubelet's Node (for the admission of new pods).
	nodes cache.Store
	// rejected are the pods refused here whose Failed status the API may
	// not show yet, each with the channel that stops the writing of that
	// status once the pod is gone: a refusal is final, as upstream's.
	rejected map[types.UID]chan struct{}
}

// node is this kubelet's Node from the informer's cache; nil before it
// is known.
func (k *Kubelet) node() *corev1.Node {
	if k.nodes == nil {
		return nil
	}
	obj, ok, err := k.nodes.GetByKey(k.o.NodeName)
	if err != nil || !ok {
		return nil
	}
	n, _ := obj.(*corev1.Node)
	return n
}

// GetPod returns a pod bound to this node from the informer's cache (do
// not modify it).
func (k *Kubelet) GetPod(namespace, name string) (*corev1.Pod, bool) {
	k.mu.Lock()
	store := k.store
	k.mu.Unlock()
	if store == nil {
		return nil, false
	}
	obj, ok, err := store.GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	p, ok := obj.(*corev1.Pod)
	return p, ok
}

// New returns a Kubelet.
func New(o Options) *Kubelet {
	k := &Kubelet{o: o, workers: map[types.UID]*pod.Worker{}}
	po := pleg.Options{Runtime: o.Runtime, Period: o.SyncPeriod, OnChange: k.poke}
	if o.Metrics != nil {
		po.Metrics = o.Metrics.PLEG
	}
	k.pleg = pleg.New(po)
	k.cfg = &pod.WorkerConfig{
		Lifecycle: o.Lifecycle, Runtime: o.Runtime, Status: &statusWriter{client: o.Client},
		HostIP: o.HostIP, SyncPeriod: o.SyncPeriod, Recorder: o.Recorder, Containers: k.pleg,
	}
	if !tracing.IsNoop(o.TracerProvider) {
		k.cfg.Tracer = o.TracerProvider.Tracer("skiff.dev/kubelet")
	}
	if o.Metrics != nil {
		k.cfg.OnStarted = func(_ *corev1.Pod, d, sli time.Duration) {
			o.Metrics.PodStartDuration.Observe(d.Seconds())
			if sli > 0 {
				o.Metrics.PodStartSLIDuration.Observe(sli.Seconds())
			}
		}
	}
	return k
}

// poke wakes the worker of a pod whose containers the PLEG saw change.
func (k *Kubelet) poke(uid types.UID) {
	k.mu.Lock()
	w := k.workers[uid]
	k.mu.Unlock()
	if w != nil {
		w.Poke()
	}
}

// PLEGHealthy is upstream's PLEG health check: an error when the runtime
// has not been relisted for pleg.RelistThreshold.
func (k *Kubelet) PLEGHealthy() error { return k.pleg.Healthy() }

// RunningPods counts the pods whose containers all run.
func (k *Kubelet) RunningPods() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, w := range k.workers {
		if w.Running() {
			n++
		}
	}
	return n
}

// Synced says the pod informer has synced and orphans were cleaned up.
func (k *Kubelet) Synced() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.synced
}

// Start runs the pods until ctx ends; their containers keep running
// afterwards, for the next kubelet to adopt.
func (k *Kubelet) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		k.pleg.Run(ctx)
	}()
	// The Node first: new pods are admitted against it.
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(k.o.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", k.o.NodeName).String()
		}))
	nodeInf := nodeFactory.Core().V1().Nodes().Informer()
	nodeFactory.Start(ctx.Done())
	defer nodeFactory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), nodeInf.HasSynced) {
		k.wg.Wait()
		return nil
	}
	k.mu.Lock()
	k.nodes = nodeInf.GetStore()
	k.mu.Unlock()

	factory := informers.NewSharedInformerFactoryWithOptions(k.o.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", k.o.NodeName).String()
		}))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.update(ctx, obj) },
		UpdateFunc: func(_, obj any) { k.update(ctx, obj) },
		DeleteFunc: func(obj any) { k.remove(obj) },
	}); err != nil {
		return err
	}
	k.mu.Lock()
	k.store = inf.GetStore()
	k.mu.Unlock()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		k.wg.Wait()
		return nil
	}
	if err := k.cleanupOrphans(ctx, inf.GetStore()); err != nil {
		logger.Error(err, "Removing containers and sandboxes of pods that are gone")
	}
	k.mu.Lock()
	k.synced = true
	k.mu.Unlock()
	<-ctx.Done()
	k.wg.Wait()
	return nil
}

func (k *Kubelet) update(ctx context.Context, obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Spec.NodeName != k.o.NodeName {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if w, ok := k.workers[p.UID]; ok {
		w.Update(p)
		return
	}
	if stop, ok := k.rejected[p.UID]; ok {
		if p.Status.Phase == corev1.PodPending {
			// Its Failed status is on its way (also when it is being
			// deleted meanwhile: then the worker below confirms the
			// deletion once that status is in).
			return
		}
		close(stop)
		delete(k.rejected, p.UID)
	}
	if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil {
		// As upstream's admit handlers: the eviction manager's, then the
		// general predicates against the other active pods.
		if k.o.Admit != nil {
			if ok, reason, msg := k.o.Admit(p); !ok {
				k.reject(ctx, p, reason, msg)
				return
			}
		}
		if ok, reason, msg := AdmitGeneral(k.node(), k.activePodsLocked(), p); !ok {
			k.reject(ctx, p, reason, msg)
			return
		}
	}
	w := pod.NewWorker(k.cfg, p)
	k.workers[p.UID] = w
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		if w.Run(ctx) {
			k.mu.Lock()
			delete(k.workers, p.UID)
			k.mu.Unlock()
		}
	}()
}

// reject ends a pod that may not start here, as upstream's rejectPod.
func (k *Kubelet) reject(ctx context.Context, p *corev1.Pod, reason, msg string) {
	klog.FromContext(ctx).Info("Pod rejected", "pod", klog.KObj(p), "reason", reason, "message", msg)
	if k.rejected == nil {
		k.rejected = map[types.UID]chan struct{}{}
	}
	stop := make(chan struct{})
	k.rejected[p.UID] = stop
	st := *p.Status.DeepCopy()
	st.Phase, st.Reason, st.Message = corev1.PodFailed, reason, "Pod was rejected: "+msg
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		k.writeRejection(ctx, stop, p, st)
	}()
}

// writeRejection writes a rejected pod's Failed status, retried with a
// growing pause (up to rejectionRetryCap) until it is written, or the pod
// is gone (not found, replaced by another of its name, or deleted as the
// informer tells: stop is closed), or ctx ends; as upstream's status
// manager, which keeps a pod's status until it is synced. A refusal is
// written within milliseconds of the pod's creation: the API server's Node
// authorizer may not know yet that the pod is bound here and answer
// Forbidden, which is no reason to give up.
func (k *Kubelet) writeRejection(ctx context.Context, stop <-chan struct{}, p *corev1.Pod, st corev1.PodStatus) {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(p), "podUID", p.UID)
	backoff := wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Cap: rejectionRetryCap, Steps: math.MaxInt32}
	for {
		err := k.cfg.Status.UpdateStatus(ctx, p, st)
		if err == nil || apierrors.IsNotFound(err) || errors.Is(err, errPodReplaced) {
			return
		}
		logger.Info("Writing the status of a rejected pod failed; will retry", "err", err)
		t := time.NewTimer(backoff.Step())
		select {
		case <-ctx.Done():
		case <-stop:
		case <-t.C:
			continue
		}
		t.Stop()
		return
	}
}

// rejectionRetryCap is the longest pause between two writes of a rejected
// pod's status.
const rejectionRetryCap = 5 * time.Second

// errPodReplaced: the pod a status was for is gone and another pod of its
// name has taken its place.
var errPodReplaced = errors.New("replaced by another pod of the same name")

// ActivePods are the pods that run here and are neither finished nor
// being deleted.
func (k *Kubelet) ActivePods() []*corev1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.activePodsLocked()
}

func (k *Kubelet) activePodsLocked() []*corev1.Pod {
	var out []*corev1.Pod
	for _, w := range k.workers {
		p := w.Pod()
		terminal := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if !w.Finished() && p.DeletionTimestamp == nil && !terminal {
			out = append(out, p)
		}
	}
	return out
}

// EvictPod evicts a pod under node pressure and waits (up to the grace
// period and a minute) until its containers are gone.
func (k *Kubelet) EvictPod(ctx context.Context, p *corev1.Pod, e eviction.Eviction) error {
	k.mu.Lock()
	w, ok := k.workers[p.UID]
	k.mu.Unlock()
	if !ok {
		return fmt.Errorf("pod %s/%s has no worker here", p.Namespace, p.Name)
	}
	c := e.Condition
	done := w.Evict(pod.Eviction{Reason: e.Reason, Message: e.Message, GracePeriod: time.Duration(e.GracePeriodSeconds) * time.Second, Condition: &c})
	timer := time.NewTimer(time.Duration(e.GracePeriodSeconds)*time.Second + time.Minute)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return fmt.Errorf("pod %s/%s was not evicted within its grace period and a minute", p.Namespace, p.Name)
	}
}

// PodCleanedUp says an evicted pod holds nothing any more.
func (k *Kubelet) PodCleanedUp(p *corev1.Pod) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	w, ok := k.workers[p.UID]
	return !ok || w.Finished()
}

func (k *Kubelet) remove(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if stop, ok := k.rejected[p.UID]; ok {
		close(stop)
		delete(k.rejected, p.UID)
	}
	if w, ok := k.workers[p.UID]; ok {
		// Gone from the API, so nothing waits for its containers: as
		// upstream's API server records a grace period of 0 on every pod
		// it removes before the kubelet confirmed (a forced deletion, a
		// finished or unbound pod), they get only the minimum. Without
		// that, a pod deleted with --grace-period=0 would hold what it has
		// (host ports, a StatefulSet's name) for its whole grace period.
		final := w.Pod().DeepCopy()
		final.DeletionGracePeriodSeconds = ptr.To[int64](0)
		if final.DeletionTimestamp == nil {
			now := metav1.Now()
			final.DeletionTimestamp = &now
		}
		w.Update(final)
		w.Remove()
	}
}

// cleanupOrphans tears down, with the pod lifecycle's destroy steps,
// every pod that has containers, a network sandbox or directories here
// but is no longer bound to this node; current pods are left for their
// workers to adopt. Orphans' containers are killed without a grace
// period: their pods are already gone from the API.
func (k *Kubelet) cleanupOrphans(ctx context.Context, store cache.Store) error {
	logger := klog.FromContext(ctx)
	found := map[types.UID]*corev1.Pod{}
	add := func(uid types.UID, name, namespace string) {
		if uid == "" {
			return
		}
		if _, ok := found[uid]; !ok {
			found[uid] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid, Name: name, Namespace: namespace}}
		}
	}
	containers, err := k.o.Runtime.ListContainers(ctx, "")
	if err != nil {
		return err
	}
	for _, c := range containers {
		add(c.PodUID(), c.Labels[pod.LabelPodName], c.Labels[pod.LabelPodNamespace])
	}
	sandboxes, err := k.o.Network.Sandboxes()
	if err != nil {
		return err
	}
	for _, uid := range sandboxes {
		add(uid, "", "")
	}
	for _, list := range k.o.PodUIDSources {
		uids, err := list()
		if err != nil {
			return err
		}
		for _, uid := range uids {
			add(uid, "", "")
		}
	}
	for _, dir := range k.o.PodDirs {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, e := range entries {
			add(types.UID(e.Name()), "", "")
		}
	}
	// Which pods are current is read after the listing: pods keep arriving
	// while it runs, and their workers create sandboxes and containers at
	// once. A pod that arrived after a snapshot taken first, and whose
	// sandbox the listing then saw, would be torn down under its worker.
	orphans := k.withoutCurrent(found, store)
	var errs []error
	for uid, p := range orphans {
		logger.Info("Tearing down a pod that is gone", "pod", klog.KObj(p), "podUID", uid)
		s := pod.NewState(p)
		s.Now, s.GracePeriod = time.Now(), 0
		if err := k.o.Lifecycle.Destroy(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", uid, err))
		}
	}
	return errors.Join(errs...)
}

// withoutCurrent drops from found the pods that are bound here or have a
// worker (a worker outlives its pod's removal from the store until its
// teardown is done).
func (k *Kubelet) withoutCurrent(found map[types.UID]*corev1.Pod, store cache.Store) map[types.UID]*corev1.Pod {
	for _, obj := range store.List() {
		if p, ok := obj.(*corev1.Pod); ok {
			delete(found, p.UID)
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for uid := range k.workers {
		delete(found, uid)
	}
	return found
}

// statusWriter writes through the API.
type statusWriter struct {
	client kubernetes.Interface
}

// UpdateStatus implements pod.StatusWriter: pods/status, retried on
// conflict against the latest version of the same pod.
func (s *statusWriter) UpdateStatus(ctx context.Context, p *corev1.Pod, st corev1.PodStatus) error {
	cur := p.DeepCopy()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// The scheduler's and others' conditions stay: those of the object
		// the update is made on (after a conflict, the fresh one, which
		// may carry a DisruptionTarget set meanwhile).
		others := cur.Status.Conditions
		cur.Status = *st.DeepCopy()
		cur.Status.Conditions = mergeConditions(others, st.Conditions)
		_, err := s.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			fresh, gerr := s.client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			if fresh.UID != p.UID {
				return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, errPodReplaced)
			}
			cur = fresh
		}
		return err
	})
}

// mergeConditions keeps the conditions the kubelet does not own.
func mergeConditions(old, mine []corev1.PodCondition) []corev1.PodCondition {
	out := append([]corev1.PodCondition{}, mine...)
	for _, c := range old {
		found := false
		for _, m := range mine {
			if m.Type == c.Type {
				found = true
			}
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}

// Delete implements pod.StatusWriter.
func (s *statusWriter) Delete(ctx context.Context, p *corev1.Pod) error {
	err := s.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(p.UID)),
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or another pod of the same name
	}
	return err
}

// Objects reads config maps and secrets from the API.
type Objects struct {
	Client kubernetes.Interface
}

// ConfigMap implements pod.Objects.
func (o Objects) ConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return o.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

// Secret implements pod.Objects.
func (o Objects) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return o.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}
