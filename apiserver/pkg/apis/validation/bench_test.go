package validation_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry"
)

// benchPod is the pod test/bench creates, defaulted as the server stores it.
func benchPod() *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-000001", Namespace: "bench", UID: "6b1c1a0e-3c1f-4f53-9d87-1f0f1c2d3e4f",
			CreationTimestamp: metav1.Now(),
			Labels:            map[string]string{"app": "bench", "tier": "web", "pod-template-hash": "7d9c8b5f4", "index": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "127.0.0.1:5000/busybox:1.36", Command: []string{"httpd", "-f", "-p", "8080"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
			}},
		}}},
	}
	registry.Default(p)
	return p
}

// admittedPod is benchPod with what admission adds (test/bench's
// admittedBenchPod).
func admittedPod() *corev1.Pod {
	p := benchPod()
	vol := "kube-api-access-x7k2q"
	p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "default", "default"
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](420),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}})
	p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts,
		corev1.VolumeMount{Name: vol, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"})
	p.Spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	p.Spec.Priority, p.Spec.PreemptionPolicy = ptr.To[int32](0), ptr.To(corev1.PreemptLowerPriority)
	return p
}

func benchValidate(b *testing.B, p *corev1.Pod) {
	if errs := validation.ValidatePod(p); len(errs) > 0 {
		b.Fatal(errs)
	}
	b.ReportAllocs()
	for b.Loop() {
		validation.ValidatePod(p)
	}
}

// BenchmarkValidatePod: the bench's pod as it is validated on create.
func BenchmarkValidatePod(b *testing.B) { benchValidate(b, benchPod()) }

// BenchmarkValidateAdmittedPod: the same pod after admission.
func BenchmarkValidateAdmittedPod(b *testing.B) { benchValidate(b, admittedPod()) }
