package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ServiceAccountName is upstream's plugin name.
const ServiceAccountName = "ServiceAccount"

const (
	// DefaultServiceAccount is what a pod naming none runs as.
	DefaultServiceAccount = "default"
	// TokenVolumePrefix starts the name of the projected token volume.
	TokenVolumePrefix = "kube-api-access-"
	// TokenMountPath is where every container finds its token, CA and namespace.
	TokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// RootCAConfigMap is published in every namespace by the controller-manager.
	RootCAConfigMap = "kube-root-ca.crt"
	// tokenExpirationSeconds is upstream's WarnOnlyBoundTokenExpirationSeconds.
	tokenExpirationSeconds = int64(3607)
	mirrorPodAnnotation    = "kubernetes.io/config.mirror"
)

// ServiceAccount gives new pods the "default" service account when they
// name none, refuses pods whose service account does not exist, and mounts
// a projected volume with a bound token, the cluster CA (kube-root-ca.crt)
// and the namespace at /var/run/secrets/kubernetes.io/serviceaccount in
// every container, unless automountServiceAccountToken is false on the pod
// (or, when the pod does not say, on the service account).
type ServiceAccount struct {
	Objects Objects
	// Suffix makes the volume name's random part; tests fix it.
	Suffix func() string
}

// Name implements Plugin.
func (*ServiceAccount) Name() string { return ServiceAccountName }

// Admit implements MutationInterface.
func (s *ServiceAccount) Admit(ctx context.Context, a *Attributes) error {
	if !isCreateOf(a, "", "pods") {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		// The v1 alias too, which upstream's conversion to v1 fills in.
		pod.Spec.ServiceAccountName = DefaultServiceAccount
		pod.Spec.DeprecatedServiceAccount = DefaultServiceAccount
	}
	obj, err := s.Objects.Get(ctx, "", "serviceaccounts", a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			err = apierrors.NewNotFound(corev1.Resource("serviceaccount"), pod.Spec.ServiceAccountName)
		}
		return forbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	sa := obj.(*corev1.ServiceAccount)
	if automount(sa, pod) {
		s.mountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = append([]corev1.LocalObjectReference(nil), sa.ImagePullSecrets...)
	}
	return nil
}

// automount: the pod's setting wins, then the service account's, then true.
func automount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// volumeName is the token volume's: the prefix and five random characters.
func (s *ServiceAccount) volumeName() string {
	if s.Suffix != nil {
		return TokenVolumePrefix + s.Suffix()
	}
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 0, len(TokenVolumePrefix)+5)
	b = append(b, TokenVolumePrefix...)
	for range 5 {
		b = append(b, alphabet[rand.IntN(len(alphabet))])
	}
	return string(b)
}

func (s *ServiceAccount) mountToken(pod *corev1.Pod) {
	volumeName := ""
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, TokenVolumePrefix) {
			volumeName = v.Name
			break
		}
	}
	hasVolume := volumeName != ""
	if !hasVolume {
		volumeName = s.volumeName()
	}
	mount := corev1.VolumeMount{Name: volumeName, ReadOnly: true, MountPath: TokenMountPath}
	needed := false
	add := func(containers []corev1.Container) {
		for i := range containers {
			mounted := false
			for _, m := range containers[i].VolumeMounts {
				if m.MountPath == TokenMountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				containers[i].VolumeMounts = append(containers[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	if !hasVolume && needed {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name: volumeName, VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()},
		})
	}
}

// tokenVolume holds every part of the projected token volume, so that one
// allocation per pod makes them all (the volume points into it).
type tokenVolume struct {
	source     corev1.ProjectedVolumeSource
	mode       int32
	expiration int64
	sources    [3]corev1.VolumeProjection
	token      corev1.ServiceAccountTokenProjection
	configMap  corev1.ConfigMapProjection
	caItems    [1]corev1.KeyToPath
	downward   corev1.DownwardAPIProjection
	files      [1]corev1.DownwardAPIVolumeFile
	fieldRef   corev1.ObjectFieldSelector
}

// TokenVolumeSource is upstream's projected service account volume.
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	v := &tokenVolume{mode: corev1.ProjectedVolumeSourceDefaultMode, expiration: tokenExpirationSeconds}
	v.token = corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &v.expiration}
	v.caItems[0] = corev1.KeyToPath{Key: "ca.crt", Path: "ca.crt"}
	v.configMap = corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap}, Items: v.caItems[:]}
	v.fieldRef = corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}
	v.files[0] = corev1.DownwardAPIVolumeFile{Path: "namespace", FieldRef: &v.fieldRef}
	v.downward = corev1.DownwardAPIProjection{Items: v.files[:]}
	v.sources = [3]corev1.VolumeProjection{{ServiceAccountToken: &v.token}, {ConfigMap: &v.configMap}, {DownwardAPI: &v.downward}}
	v.source = corev1.ProjectedVolumeSource{DefaultMode: &v.mode, Sources: v.sources[:]}
	return &v.source
}
