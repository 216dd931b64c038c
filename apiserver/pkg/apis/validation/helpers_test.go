package validation

import (
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

// want is one expected error: its type and field path.
type want struct {
	Type  field.ErrorType
	Field string
}

func (w want) String() string { return string(w.Type) + " " + w.Field }

// checkErrs compares the errors' types and paths with want, ignoring order.
func checkErrs(t *testing.T, errs field.ErrorList, wants []want) {
	t.Helper()
	got := make([]string, 0, len(errs))
	for _, e := range errs {
		got = append(got, want{e.Type, e.Field}.String())
	}
	exp := make([]string, 0, len(wants))
	for _, w := range wants {
		exp = append(exp, w.String())
	}
	sort.Strings(got)
	sort.Strings(exp)
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Errorf("errors differ\n got: %q\nwant: %q\nfull: %v", got, exp, errs)
	}
}

// errWithDetail returns the first error at path, or nil.
func errAt(errs field.ErrorList, path string) *field.Error {
	for _, e := range errs {
		if e.Field == path {
			return e
		}
	}
	return nil
}

func req(p string) want  { return want{field.ErrorTypeRequired, p} }
func inv(p string) want  { return want{field.ErrorTypeInvalid, p} }
func nsup(p string) want { return want{field.ErrorTypeNotSupported, p} }
func dup(p string) want  { return want{field.ErrorTypeDuplicate, p} }
func forb(p string) want { return want{field.ErrorTypeForbidden, p} }
func nf(p string) want   { return want{field.ErrorTypeNotFound, p} }
func long(p string) want { return want{field.ErrorTypeTooLong, p} }
func many(p string) want { return want{field.ErrorTypeTooMany, p} }

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default"}
}

// defaulted defaults obj with its kind's defaulting, as the API server
// would before validating it.
func defaulted[T runtime.Object](defaultKind func(T), obj T) T {
	defaultKind(obj)
	return obj
}

// forUpdate returns a copy of a stored object as a client would send it back.
func storedMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	m.ResourceVersion = "1"
	m.UID = "6b7a0c4e-2f8a-4b5e-9a3c-1d2e3f4a5b6c"
	return m
}

func validPod() *corev1.Pod {
	return defaulted(defaults.DefaultPod, &corev1.Pod{
		ObjectMeta: meta("web"),
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			}},
		},
	})
}

func validReplicaSet() *appsv1.ReplicaSet {
	two := int32(2)
	return defaulted(defaults.DefaultReplicaSet, &appsv1.ReplicaSet{
		ObjectMeta: meta("my-replicaset"),
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &two,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "my-app"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "my-app"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "my-container", Image: "nginx",
					Ports: []corev1.ContainerPort{{ContainerPort: 80}},
				}}},
			},
		},
	})
}

func validDeployment() *appsv1.Deployment {
	rs := validReplicaSet()
	return defaulted(defaults.DefaultDeployment, &appsv1.Deployment{
		ObjectMeta: meta("web"),
		Spec: appsv1.DeploymentSpec{
			Selector: rs.Spec.Selector,
			Template: rs.Spec.Template,
		},
	})
}

func ns(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "default"} }

func q(s string) resource.Quantity { return resource.MustParse(s) }

func withRestart(t corev1.PodTemplateSpec, p corev1.RestartPolicy) corev1.PodTemplateSpec {
	t.Spec.RestartPolicy = p
	return t
}

func TestDefaultedSeedObjectsAreValid(t *testing.T) {
	checkErrs(t, ValidatePod(validPod()), nil)
	checkErrs(t, ValidateReplicaSet(validReplicaSet()), nil)
	checkErrs(t, ValidateDeployment(validDeployment()), nil)
	checkErrs(t, ValidateService(validService()), nil)
	checkErrs(t, ValidateNode(validNode()), nil)
	checkErrs(t, ValidateEndpointSlice(validSlice()), nil)
}
