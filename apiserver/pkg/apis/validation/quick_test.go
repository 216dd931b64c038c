package validation

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// quickPod is a pod with the ServiceAccount plugin's projected volume, a
// second projected volume of Secret and ConfigMap items, an emptyDir, and
// mounts of them: what the quick checks accept.
func quickPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst,
			TerminationGracePeriodSeconds: ptr.To[int64](30), SchedulerName: "default-scheduler",
			SecurityContext: &corev1.PodSecurityContext{}, ServiceAccountName: "default",
			Volumes: []corev1.Volume{
				{Name: "kube-api-access-x7k2q", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					DefaultMode: ptr.To[int32](420),
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
					},
				}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{
						{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "tls"}, Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "tls/tls.crt", Mode: ptr.To[int32](0o400)}}}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}}}}},
					},
				}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.local/app:1", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "kube-api-access-x7k2q", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
					{Name: "config", MountPath: "/etc/app"},
					{Name: "scratch", MountPath: "/tmp"},
				},
			}},
		},
	}
}

// quickMutations each break (or keep valid) one thing the quick checks
// look at, or something next to it.
var quickMutations = map[string]func(p *corev1.Pod){}

func init() {
	sa := func(p *corev1.Pod) *corev1.ProjectedVolumeSource { return p.Spec.Volumes[0].Projected }
	cfg := func(p *corev1.Pod) *corev1.ProjectedVolumeSource { return p.Spec.Volumes[1].Projected }
	token := func(p *corev1.Pod) *corev1.ServiceAccountTokenProjection { return sa(p).Sources[0].ServiceAccountToken }
	dw := func(p *corev1.Pod) *corev1.DownwardAPIVolumeFile { return &sa(p).Sources[2].DownwardAPI.Items[0] }
	item := func(p *corev1.Pod) *corev1.KeyToPath {
		if src := cfg(p).Sources; len(src) > 0 {
			return &src[0].Secret.Items[0]
		}
		return &corev1.KeyToPath{} // removed by "projected with no sources"
	}
	fieldRef := func(p *corev1.Pod) *corev1.ObjectFieldSelector {
		if dw(p).FieldRef == nil {
			dw(p).FieldRef = &corev1.ObjectFieldSelector{} // removed by "fieldRef nil"
		}
		return dw(p).FieldRef
	}
	mount := func(p *corev1.Pod, i int) *corev1.VolumeMount { return &p.Spec.Containers[0].VolumeMounts[i] }
	paths := []string{"", "/abs", "..", "../x", "..x", "x/..", "a/../b", "a/..b", "a/b/", "./a", "a//b", ".x", "ok"}
	for _, v := range paths {
		quickMutations["token path "+v] = func(p *corev1.Pod) { token(p).Path = v }
		quickMutations["item path "+v] = func(p *corev1.Pod) { item(p).Path = v }
		quickMutations["downward path "+v] = func(p *corev1.Pod) { dw(p).Path = v }
		quickMutations["subPath "+v] = func(p *corev1.Pod) { mount(p, 1).SubPath = v }
	}
	for _, v := range []*int64{nil, ptr.To[int64](0), ptr.To[int64](599), ptr.To[int64](600), ptr.To[int64](1 << 32), ptr.To[int64](1<<32 + 1)} {
		quickMutations[fmt.Sprintf("expiration %v", ptr.Deref(v, -1))] = func(p *corev1.Pod) { token(p).ExpirationSeconds = v }
	}
	for _, v := range []*int32{nil, ptr.To[int32](-1), ptr.To[int32](0), ptr.To[int32](0o777), ptr.To[int32](0o1000)} {
		quickMutations[fmt.Sprintf("default mode %v", ptr.Deref(v, -2))] = func(p *corev1.Pod) { sa(p).DefaultMode = v }
		quickMutations[fmt.Sprintf("item mode %v", ptr.Deref(v, -2))] = func(p *corev1.Pod) { item(p).Mode = v }
		quickMutations[fmt.Sprintf("downward mode %v", ptr.Deref(v, -2))] = func(p *corev1.Pod) { dw(p).Mode = v }
	}
	for _, v := range []string{"", "Bad_Name", "-x", strings.Repeat("a", 63), strings.Repeat("a", 64), "config"} {
		quickMutations["volume name "+v] = func(p *corev1.Pod) { p.Spec.Volumes[0].Name = v }
	}
	for _, v := range []string{"", "v2", "v1"} {
		quickMutations["fieldRef apiVersion "+v] = func(p *corev1.Pod) { fieldRef(p).APIVersion = v }
	}
	for _, v := range []string{"", "metadata.name", "metadata.uid", "metadata.labels['a']", "metadata.annotations['b']", "metadata.labels['-']", "spec.nodeName", "status.podIP", "metadata.namespace['x']"} {
		quickMutations["fieldPath "+v] = func(p *corev1.Pod) { fieldRef(p).FieldPath = v }
	}
	quickMutations["fieldRef nil"] = func(p *corev1.Pod) { dw(p).FieldRef = nil }
	quickMutations["resourceFieldRef too"] = func(p *corev1.Pod) {
		dw(p).ResourceFieldRef = &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}
	}
	quickMutations["resourceFieldRef only"] = func(p *corev1.Pod) {
		dw(p).FieldRef, dw(p).ResourceFieldRef = nil, &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}
	}
	quickMutations["no service account"] = func(p *corev1.Pod) { p.Spec.ServiceAccountName = "" }
	quickMutations["configMap name empty"] = func(p *corev1.Pod) { sa(p).Sources[1].ConfigMap.Name = "" }
	quickMutations["secret name empty"] = func(p *corev1.Pod) {
		if src := cfg(p).Sources; len(src) > 0 {
			src[0].Secret.Name = ""
		}
	}
	quickMutations["item key empty"] = func(p *corev1.Pod) { item(p).Key = "" }
	quickMutations["two kinds in a source"] = func(p *corev1.Pod) {
		sa(p).Sources[0].ConfigMap = &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}
	}
	quickMutations["empty source"] = func(p *corev1.Pod) { sa(p).Sources = append(sa(p).Sources, corev1.VolumeProjection{}) }
	quickMutations["cluster trust bundle"] = func(p *corev1.Pod) {
		sa(p).Sources = append(sa(p).Sources, corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), Path: "b.pem"}})
	}
	quickMutations["duplicate path across sources"] = func(p *corev1.Pod) { dw(p).Path = "ca.crt" }
	quickMutations["duplicate item paths"] = func(p *corev1.Pod) {
		if src := cfg(p).Sources; len(src) > 0 {
			s := src[0].Secret
			s.Items = append(s.Items, corev1.KeyToPath{Key: "tls.key", Path: s.Items[0].Path})
		}
	}
	quickMutations["token path as an item path"] = func(p *corev1.Pod) { token(p).Path = "ca.crt" }
	quickMutations["second volume type"] = func(p *corev1.Pod) { p.Spec.Volumes[0].EmptyDir = &corev1.EmptyDirVolumeSource{} }
	quickMutations["projected with no sources"] = func(p *corev1.Pod) { cfg(p).Sources = nil }
	quickMutations["mount name empty"] = func(p *corev1.Pod) { mount(p, 0).Name = "" }
	quickMutations["mount of a missing volume"] = func(p *corev1.Pod) { mount(p, 0).Name = "missing" }
	quickMutations["mount path empty"] = func(p *corev1.Pod) { mount(p, 0).MountPath = "" }
	quickMutations["mount path twice"] = func(p *corev1.Pod) { mount(p, 2).MountPath = mount(p, 1).MountPath }
	quickMutations["subPathExpr"] = func(p *corev1.Pod) { mount(p, 1).SubPathExpr = "$(POD)" }
	quickMutations["propagation"] = func(p *corev1.Pod) { mount(p, 1).MountPropagation = ptr.To(corev1.MountPropagationBidirectional) }
	quickMutations["recursive read-only"] = func(p *corev1.Pod) {
		mount(p, 0).RecursiveReadOnly = ptr.To(corev1.RecursiveReadOnlyEnabled)
	}
	quickMutations["device with a mount's name"] = func(p *corev1.Pod) {
		p.Spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "config", DevicePath: "/dev/x"}}
	}
	quickMutations["device at a mount's path"] = func(p *corev1.Pod) {
		p.Spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "scratch", DevicePath: "/etc/app"}}
	}
	quickMutations["an init container's mounts"] = func(p *corev1.Pod) {
		c := p.Spec.Containers[0].DeepCopy()
		c.Name = "init"
		p.Spec.InitContainers = append(p.Spec.InitContainers, *c)
	}
}

// validateBoth validates p with and without the quick checks.
func validateBoth(p *corev1.Pod) (quick, full field.ErrorList) {
	quickChecks = true
	quick = ValidatePod(p.DeepCopy())
	quickChecks = false
	defer func() { quickChecks = true }()
	full = ValidatePod(p.DeepCopy())
	return quick, full
}

// TestQuickChecksAgreeWithValidators: a pod's validation gives the same
// errors with the quick checks as without them, for the pod they accept
// and for every mutation of it, alone and three at a time.
func TestQuickChecksAgreeWithValidators(t *testing.T) {
	p := quickPod()
	if errs := ValidatePod(p); len(errs) > 0 {
		t.Fatalf("the base pod is invalid: %v", errs)
	}
	for i := range p.Spec.Volumes[:2] {
		if !volumeOK(&p.Spec.Volumes[i], nil, podValidationOptions{}) {
			t.Errorf("volume %s: the quick check does not accept it", p.Spec.Volumes[i].Name)
		}
	}
	vols := map[string]*corev1.VolumeSource{}
	for i := range p.Spec.Volumes {
		vols[p.Spec.Volumes[i].Name] = &p.Spec.Volumes[i].VolumeSource
	}
	if !volumeMountsOK(p.Spec.Containers[0].VolumeMounts, nil, vols) {
		t.Error("the quick check does not accept the mounts")
	}
	names := make([]string, 0, len(quickMutations))
	for name := range quickMutations {
		names = append(names, name)
	}
	slices.Sort(names)
	check := func(desc string, muts ...string) {
		p := quickPod()
		for _, m := range muts {
			quickMutations[m](p)
		}
		quick, full := validateBoth(p)
		if d := cmp.Diff(full, quick); d != "" {
			t.Errorf("%s: errors differ with the quick checks (-without +with):\n%s", desc, d)
		}
	}
	invalid := 0
	for _, name := range names {
		check(name, name)
		if _, full := validateBoth(func() *corev1.Pod { p := quickPod(); quickMutations[name](p); return p }()); len(full) > 0 {
			invalid++
		}
	}
	// The mutations must reach the errors the quick checks guard.
	if invalid < len(names)/2 {
		t.Errorf("only %d of %d mutations make the pod invalid", invalid, len(names))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		muts := []string{names[rng.IntN(len(names))], names[rng.IntN(len(names))], names[rng.IntN(len(names))]}
		check(strings.Join(muts, " + "), muts...)
	}
}
