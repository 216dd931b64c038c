package admission

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// fakeObjects is an in-memory Objects keyed by group/resource/namespace/name.
type fakeObjects struct {
	mu   sync.Mutex
	objs map[string]map[string]runtime.Object
}

func newFakeObjects(objs ...runtime.Object) *fakeObjects {
	f := &fakeObjects{objs: map[string]map[string]runtime.Object{}}
	for _, o := range objs {
		f.add(o)
	}
	return f
}

func resourceOf(o runtime.Object) (string, string) {
	switch o.(type) {
	case *schedulingv1.PriorityClass:
		return "scheduling.k8s.io", "priorityclasses"
	case *nodev1.RuntimeClass:
		return "node.k8s.io", "runtimeclasses"
	case *corev1.ServiceAccount:
		return "", "serviceaccounts"
	case *corev1.LimitRange:
		return "", "limitranges"
	case *corev1.ResourceQuota:
		return "", "resourcequotas"
	case *corev1.Pod:
		return "", "pods"
	}
	panic(fmt.Sprintf("fakeObjects: %T", o))
}

func (f *fakeObjects) add(o runtime.Object) {
	g, r := resourceOf(o)
	m := o.(metav1.Object)
	key := g + "/" + r
	if f.objs[key] == nil {
		f.objs[key] = map[string]runtime.Object{}
	}
	f.objs[key][m.GetNamespace()+"/"+m.GetName()] = o
}

func (f *fakeObjects) Get(_ context.Context, group, res, ns, name string) (runtime.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o, ok := f.objs[group+"/"+res][ns+"/"+name]; ok {
		return o.DeepCopyObject(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: res}, name)
}

func (f *fakeObjects) List(_ context.Context, group, res, ns string) ([]runtime.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []runtime.Object
	for k, o := range f.objs[group+"/"+res] {
		if ns == "" || strings.HasPrefix(k, ns+"/") {
			out = append(out, o.DeepCopyObject())
		}
	}
	return out, nil
}

// update is a QuotaUpdater over the fake.
func (f *fakeObjects) update(_ context.Context, ns, name string, fn func(*corev1.ResourceQuota) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.objs["/resourcequotas"][ns+"/"+name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "resourcequotas"}, name)
	}
	q := o.(*corev1.ResourceQuota).DeepCopy()
	if err := fn(q); err != nil {
		return err
	}
	f.objs["/resourcequotas"][ns+"/"+name] = q
	return nil
}

func podCreate(pod *corev1.Pod) *Attributes {
	return &Attributes{Operation: Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: "ns", Name: pod.Name, Object: pod}
}

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}

func TestPriority(t *testing.T) {
	never := corev1.PreemptNever
	objs := newFakeObjects(
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 100, PreemptionPolicy: &never},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "dflt"}, Value: 5, GlobalDefault: true},
	)
	p := &Priority{Objects: objs}
	tests := []struct {
		name       string
		class      string
		priority   *int32
		wantClass  string
		wantPrio   int32
		wantPolicy *corev1.PreemptionPolicy
		wantErr    string
	}{
		{name: "named class", class: "high", wantClass: "high", wantPrio: 100, wantPolicy: &never},
		{name: "global default", wantClass: "dflt", wantPrio: 5},
		{name: "unknown class", class: "nope", wantErr: `pods "x" is forbidden: no PriorityClass with name nope was found`},
		{name: "conflicting integer", class: "high", priority: ptr.To[int32](7), wantErr: "the integer value of priority (7) must not be provided in pod spec"},
		{name: "matching integer", class: "high", priority: ptr.To[int32](100), wantClass: "high", wantPrio: 100, wantPolicy: &never},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod("x")
			pod.Spec.PriorityClassName, pod.Spec.Priority = tc.class, tc.priority
			err := p.Admit(context.Background(), podCreate(pod))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !apierrors.IsForbidden(err) {
					t.Fatalf("err = %v, want 403 %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Spec.PriorityClassName != tc.wantClass || *pod.Spec.Priority != tc.wantPrio {
				t.Errorf("class %q priority %d", pod.Spec.PriorityClassName, *pod.Spec.Priority)
			}
			if (tc.wantPolicy == nil) != (pod.Spec.PreemptionPolicy == nil) || (tc.wantPolicy != nil && *tc.wantPolicy != *pod.Spec.PreemptionPolicy) {
				t.Errorf("preemptionPolicy = %v", pod.Spec.PreemptionPolicy)
			}
		})
	}
	// Without a default class: priority 0 and PreemptLowerPriority, as
	// upstream's plugin sets them.
	pod := newPod("x")
	if err := (&Priority{Objects: newFakeObjects()}).Admit(context.Background(), podCreate(pod)); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.PriorityClassName != "" || pod.Spec.Priority == nil || *pod.Spec.Priority != 0 ||
		pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("no default class: class %q priority %v policy %v", pod.Spec.PriorityClassName, pod.Spec.Priority, pod.Spec.PreemptionPolicy)
	}
	second := &Attributes{Operation: Create, Resource: schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), Name: "other",
		Object: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "other"}, GlobalDefault: true}}
	if err := p.Validate(context.Background(), second); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PriorityClass dflt is already marked as default") {
		t.Errorf("second default: %v", err)
	}
}

func TestRuntimeClassPlugin(t *testing.T) {
	objs := newFakeObjects(&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata",
		Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("120Mi")}},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"rt": "kata"}, Tolerations: []corev1.Toleration{{Key: "rt", Operator: corev1.TolerationOpExists}}}})
	r := &RuntimeClass{Objects: objs}
	pod := newPod("x")
	pod.Spec.RuntimeClassName = ptr.To("kata")
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "rt", Operator: corev1.TolerationOpExists}}
	a := podCreate(pod)
	if err := r.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Overhead.Memory().String() != "120Mi" || pod.Spec.NodeSelector["rt"] != "kata" || len(pod.Spec.Tolerations) != 1 {
		t.Errorf("pod spec = %+v", pod.Spec)
	}
	if err := r.Validate(context.Background(), a); err != nil {
		t.Errorf("validate: %v", err)
	}
	pod.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}
	if err := r.Validate(context.Background(), a); !apierrors.IsForbidden(err) {
		t.Errorf("mismatched overhead: %v", err)
	}
	bare := newPod("y")
	bare.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}
	if err := r.Validate(context.Background(), podCreate(bare)); err == nil || !strings.Contains(err.Error(), "Pod Overhead set without corresponding RuntimeClass defined Overhead") {
		t.Errorf("overhead without class: %v", err)
	}
}

func TestServiceAccountPlugin(t *testing.T) {
	objs := newFakeObjects(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}})
	s := &ServiceAccount{Objects: objs, Suffix: func() string { return "abcde" }}
	pod := newPod("x")
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "own", Image: "i",
		VolumeMounts: []corev1.VolumeMount{{Name: "mine", MountPath: TokenMountPath}}})
	if err := s.Admit(context.Background(), podCreate(pod)); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "default" || len(pod.Spec.ImagePullSecrets) != 1 {
		t.Errorf("spec = %+v", pod.Spec)
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Name != "kube-api-access-abcde" {
		t.Fatalf("volumes = %+v", pod.Spec.Volumes)
	}
	if m := pod.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].Name != "kube-api-access-abcde" || !m[0].ReadOnly {
		t.Errorf("mounts of c = %+v", m)
	}
	if m := pod.Spec.Containers[1].VolumeMounts; len(m) != 1 || m[0].Name != "mine" {
		t.Errorf("a container with its own mount at the path got another: %+v", m)
	}
	off := newPod("off")
	off.Spec.AutomountServiceAccountToken = ptr.To(false)
	if err := s.Admit(context.Background(), podCreate(off)); err != nil || len(off.Spec.Volumes) != 0 {
		t.Errorf("automount off: %v %+v", err, off.Spec.Volumes)
	}
	missing := newPod("m")
	missing.Spec.ServiceAccountName = "ghost"
	err := s.Admit(context.Background(), podCreate(missing))
	if !apierrors.IsForbidden(err) || err.Error() != `pods "m" is forbidden: error looking up service account ns/ghost: serviceaccount "ghost" not found` {
		t.Errorf("missing account: %v", err)
	}
}

func TestLimitRangerPlugin(t *testing.T) {
	objs := newFakeObjects(&corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")},
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}, Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
			MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}},
		{Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
	}}})
	l := &LimitRanger{Objects: objs}
	tests := []struct {
		name     string
		requests corev1.ResourceList
		limits   corev1.ResourceList
		sidecar  bool
		want     string
	}{
		{name: "defaults fit"},
		{name: "under min", requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}, want: "minimum cpu usage per Container is 50m, but request is 10m"},
		{name: "ratio", requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}, limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("450m")},
			want: "cpu max limit to request ratio per Container is 4, but provided ratio is 4.500000"},
		{name: "pod max", requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}, limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m")},
			want: "maximum cpu usage per Pod is 500m, but limit is 600m"},
		// A sidecar runs beside the app container: their limits add up
		// (an ordinary init container's would not).
		{name: "pod max with a sidecar", requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}, limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")},
			sidecar: true, want: "maximum cpu usage per Pod is 500m, but limit is 600m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod("x")
			pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: tc.requests, Limits: tc.limits}
			if tc.sidecar {
				pod.Spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "envoy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
					Resources: *pod.Spec.Containers[0].Resources.DeepCopy()}}
			}
			a := podCreate(pod)
			if err := l.Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			err := l.Validate(context.Background(), a)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r := pod.Spec.Containers[0].Resources; r.Requests.Cpu().String() != "100m" || r.Limits.Cpu().String() != "200m" {
					t.Errorf("defaults = %+v", r)
				}
				return
			}
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestResourceQuotaPlugin(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourcePods: resource.MustParse("2"), corev1.ResourceRequestsMemory: resource.MustParse("1Gi")}}}
	objs := newFakeObjects(q)
	r := &ResourceQuota{Objects: objs, Update: objs.update}
	// The quota's usage starts from what exists.
	init := q.DeepCopy()
	if err := r.InitialUsage(context.Background(), init, true); err != nil {
		t.Fatal(err)
	}
	if init.Status.Used.Pods().Value() != 0 || init.Status.Hard.Pods().Value() != 2 {
		t.Fatalf("initial status = %+v", init.Status)
	}
	objs.add(init)
	sized := func(name, mem string) *corev1.Pod {
		p := newPod(name)
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}
		return p
	}
	a := podCreate(sized("a", "600Mi"))
	if err := r.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	err := r.Validate(context.Background(), podCreate(sized("b", "600Mi")))
	want := `pods "b" is forbidden: exceeded quota: q, requested: requests.memory=600Mi, used: requests.memory=600Mi, limited: requests.memory=1Gi`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	// A write that fails after admission gives the charge back.
	a.Rollback()
	cur, _ := objs.Get(context.Background(), "", "resourcequotas", "ns", "q")
	if used := cur.(*corev1.ResourceQuota).Status.Used; used.Pods().Value() != 0 || !used.Memory().IsZero() {
		t.Errorf("after rollback used = %v", used)
	}
	if err := r.Validate(context.Background(), podCreate(newPod("bare"))); err == nil || !strings.Contains(err.Error(), "failed quota: q: must specify requests.memory for: c") {
		t.Errorf("constraint: %v", err)
	}
	// Deletion gives usage back.
	a = podCreate(sized("c", "100Mi"))
	if err := r.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	r.Deleted(context.Background(), &Attributes{Operation: Delete, Resource: a.Resource, Namespace: "ns", OldObject: a.Object})
	cur, _ = objs.Get(context.Background(), "", "resourcequotas", "ns", "q")
	if used := cur.(*corev1.ResourceQuota).Status.Used; used.Pods().Value() != 0 {
		t.Errorf("after delete used = %v", used)
	}
}

func TestUsage(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}}
	got := Usage(schema.GroupResource{Resource: "services"}, svc)
	if got.Name("services.nodeports", resource.DecimalSI).Value() != 2 || got.Name("services.loadbalancers", resource.DecimalSI).Value() != 1 ||
		got.Name("count/services", resource.DecimalSI).Value() != 1 {
		t.Errorf("service usage = %v", got)
	}
	pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("gold"),
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")}}}}
	got = Usage(schema.GroupResource{Resource: "persistentvolumeclaims"}, pvc)
	if q := got["gold.storageclass.storage.k8s.io/requests.storage"]; q.String() != "3Gi" || got.Name("persistentvolumeclaims", resource.DecimalSI).Value() != 1 {
		t.Errorf("pvc usage = %v", got)
	}
	done := newPod("done")
	done.Status.Phase = corev1.PodSucceeded
	got = Usage(schema.GroupResource{Resource: "pods"}, done)
	if _, ok := got[corev1.ResourcePods]; ok || got.Name("count/pods", resource.DecimalSI).Value() != 1 {
		t.Errorf("terminal pod usage = %v", got)
	}
	got = Usage(schema.GroupResource{Group: "apps", Resource: "deployments"}, nil)
	if len(got) != 1 || got.Name("count/deployments.apps", resource.DecimalSI).Value() != 1 {
		t.Errorf("deployment usage = %v", got)
	}
}

func TestResourceQuotaChargesServiceTypeChanges(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServicesNodePorts: resource.MustParse("1")}},
		Status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{corev1.ResourceServicesNodePorts: resource.MustParse("1")},
			Used: corev1.ResourceList{corev1.ResourceServicesNodePorts: resource.MustParse("0")}}}
	objs := newFakeObjects(q)
	r := &ResourceQuota{Objects: objs, Update: objs.update}
	svc := func(typ corev1.ServiceType, ports int) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: corev1.ServiceSpec{Type: typ}}
		for i := 0; i < ports; i++ {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: int32(80 + i)})
		}
		return s
	}
	update := func(old, cur *corev1.Service) error {
		return r.Validate(context.Background(), &Attributes{Operation: Update, Resource: corev1.SchemeGroupVersion.WithResource("services"),
			Namespace: "ns", Name: "s", Object: cur, OldObject: old})
	}
	used := func() int64 {
		cur, _ := objs.Get(context.Background(), "", "resourcequotas", "ns", "q")
		v := cur.(*corev1.ResourceQuota).Status.Used[corev1.ResourceServicesNodePorts]
		return v.Value()
	}
	if err := update(svc(corev1.ServiceTypeClusterIP, 2), svc(corev1.ServiceTypeNodePort, 2)); !apierrors.IsForbidden(err) {
		t.Errorf("two node ports over a quota of one: %v", err)
	}
	if err := update(svc(corev1.ServiceTypeClusterIP, 1), svc(corev1.ServiceTypeNodePort, 1)); err != nil || used() != 1 {
		t.Errorf("one node port: %v, used %d", err, used())
	}
	if err := update(svc(corev1.ServiceTypeNodePort, 1), svc(corev1.ServiceTypeClusterIP, 1)); err != nil || used() != 0 {
		t.Errorf("back to ClusterIP: %v, used %d", err, used())
	}
}

// TestResourceQuotaDryRunConfirmsAgainstTheStoredQuota: a dry run that the
// cached quota would refuse is checked against the stored one (the cache
// may not have seen a pod deleted a moment ago); nothing is written.
func TestResourceQuotaDryRunConfirmsAgainstTheStoredQuota(t *testing.T) {
	full := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}
	cached := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"}, Spec: corev1.ResourceQuotaSpec{Hard: full},
		Status: corev1.ResourceQuotaStatus{Hard: full, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}}
	for _, tc := range []struct {
		storedUsed string
		wantErr    string
	}{
		{storedUsed: "1"},
		{storedUsed: "2", wantErr: `pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`},
	} {
		stored := cached.DeepCopy()
		stored.Status.Used[corev1.ResourcePods] = resource.MustParse(tc.storedUsed)
		writes := 0
		r := &ResourceQuota{Objects: newFakeObjects(cached), Update: func(_ context.Context, ns, name string, fn func(*corev1.ResourceQuota) error) error {
			cur := stored.DeepCopy()
			if err := fn(cur); err != nil {
				return err
			}
			writes++
			return nil
		}}
		a := podCreate(newPod("x"))
		a.DryRun = true
		err := r.Validate(context.Background(), a)
		if tc.wantErr == "" && err != nil {
			t.Errorf("stored usage %s: %v", tc.storedUsed, err)
		}
		if tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr || !apierrors.IsForbidden(err)) {
			t.Errorf("stored usage %s: err = %v, want 403 %s", tc.storedUsed, err, tc.wantErr)
		}
		if writes != 0 {
			t.Errorf("stored usage %s: a dry run wrote the quota %d times", tc.storedUsed, writes)
		}
	}
}
