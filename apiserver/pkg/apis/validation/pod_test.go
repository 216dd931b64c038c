package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestValidatePodCreate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{name: "valid", mutate: func(p *corev1.Pod) {}},
		{name: "invalid name", mutate: func(p *corev1.Pod) { p.Name = "Web_1" }, want: []want{inv("metadata.name")}},
		{name: "missing name", mutate: func(p *corev1.Pod) { p.Name = ""; p.GenerateName = "web-" }, want: []want{req("metadata.name")}},
		{name: "invalid generateName", mutate: func(p *corev1.Pod) { p.GenerateName = "Web_" }, want: []want{inv("metadata.generateName")}},
		{name: "missing namespace", mutate: func(p *corev1.Pod) { p.Namespace = "" }, want: []want{req("metadata.namespace")}},
		{name: "invalid namespace", mutate: func(p *corev1.Pod) { p.Namespace = "a.b" }, want: []want{inv("metadata.namespace")}},
		{name: "invalid label", mutate: func(p *corev1.Pod) { p.Labels = map[string]string{"app": "a b"} }, want: []want{inv("metadata.labels")}},
		{name: "annotations too large", mutate: func(p *corev1.Pod) {
			p.Annotations = map[string]string{"big": strings.Repeat("x", 256*1024+1)}
		}, want: []want{long("metadata.annotations")}},
		{name: "unqualified finalizer", mutate: func(p *corev1.Pod) { p.Finalizers = []string{"custom"} }, want: []want{inv("metadata.finalizers[0]")}},
		{name: "qualified finalizer", mutate: func(p *corev1.Pod) { p.Finalizers = []string{"example.com/cleanup"} }},
		{name: "owner reference without uid", mutate: func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs"}}
		}, want: []want{inv("metadata.ownerReferences.uid")}},
		{name: "no containers", mutate: func(p *corev1.Pod) { p.Spec.Containers = nil }, want: []want{req("spec.containers")}},
		{name: "invalid container name", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Name = "App" }, want: []want{inv("spec.containers[0].name")}},
		{name: "duplicate container name across init and regular", mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{p.Spec.Containers[0]}
			p.Spec.InitContainers[0].Ports = nil
		}, want: []want{dup("spec.initContainers[0].name")}},
		{name: "duplicate container name", mutate: func(p *corev1.Pod) {
			c := p.Spec.Containers[0]
			c.Ports = nil
			p.Spec.Containers = append(p.Spec.Containers, c)
		}, want: []want{dup("spec.containers[1].name")}},
		{name: "missing image", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, want: []want{req("spec.containers[0].image")}},
		{name: "image with whitespace", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = " nginx" }, want: []want{inv("spec.containers[0].image")}},
		{name: "port out of range", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 70000 }, want: []want{inv("spec.containers[0].ports[0].containerPort")}},
		{name: "port missing", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 0 }, want: []want{req("spec.containers[0].ports[0].containerPort")}},
		{name: "port protocol unsupported", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "ICMP" }, want: []want{nsup("spec.containers[0].ports[0].protocol")}},
		{name: "port name invalid", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Name = "http_port_too_long" }, want: []want{inv("spec.containers[0].ports[0].name"), inv("spec.containers[0].ports[0].name")}},
		{name: "port name duplicate", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "http", ContainerPort: 81, Protocol: corev1.ProtocolTCP})
		}, want: []want{dup("spec.containers[0].ports[1].name")}},
		{name: "host port conflict", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{
				{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP},
				{ContainerPort: 81, HostPort: 8080, Protocol: corev1.ProtocolTCP},
			}
		}, want: []want{dup("spec.containers[0].ports[1].hostPort")}},
		{name: "env name relaxed", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "1-weird name!"}}
		}},
		{name: "env name with equals", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A=B"}} }, want: []want{inv("spec.containers[0].env[0].name")}},
		{name: "env name missing", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Value: "x"}} }, want: []want{req("spec.containers[0].env[0].name")}},
		{name: "env valueFrom empty", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{}}}
		}, want: []want{inv("spec.containers[0].env[0].valueFrom")}},
		{name: "env fieldRef unsupported path", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}}}}
		}, want: []want{nsup("spec.containers[0].env[0].valueFrom.fieldRef.fieldPath")}},
		{name: "env fieldRef label subscript", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels['app']"}}}}
		}},
		{name: "negative request", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
		}, want: []want{inv("spec.containers[0].resources.requests[cpu]")}},
		{name: "request above limit", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
			}
		}, want: []want{inv("spec.containers[0].resources.requests")}},
		{name: "unknown resource", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"gpu": resource.MustParse("1")}
		}, want: []want{inv("spec.containers[0].resources.limits[gpu]"), inv("spec.containers[0].resources.limits[gpu]")}},
		{name: "extended resource must be integer", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"example.com/gpu": resource.MustParse("500m")}
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"example.com/gpu": resource.MustParse("500m")}
		}, want: []want{inv("spec.containers[0].resources.limits[example.com/gpu]"), inv("spec.containers[0].resources.requests[example.com/gpu]")}},
		{name: "hugepages without cpu or memory", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"hugepages-2Mi": resource.MustParse("4Mi")}
		}, want: []want{forb("spec.containers[0].resources")}},
		{name: "duplicate volume", mutate: func(p *corev1.Pod) {
			v := corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
			p.Spec.Volumes = []corev1.Volume{v, v}
		}, want: []want{dup("spec.volumes[1].name")}},
		{name: "volume without source", mutate: func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{{Name: "data"}} }, want: []want{req("spec.volumes[0]")}},
		{name: "volume with two sources", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/x"},
			}}}
		}, want: []want{forb("spec.volumes[0].hostPath")}},
		{name: "volume name invalid", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "Data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, want: []want{inv("spec.volumes[0].name")}},
		{name: "secret volume without name and bad mode", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: ptr.To[int32](01000)}}}}
		}, want: []want{req("spec.volumes[0].secret.secretName"), inv("spec.volumes[0].secret.defaultMode")}},
		{name: "hostPath with backsteps and bad type", mutate: func(p *corev1.Pod) {
			t := corev1.HostPathType("Weird")
			p.Spec.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/a/../b", Type: &t}}}}
		}, want: []want{inv("spec.volumes[0].hostPath.path"), nsup("spec.volumes[0].hostPath.type")}},
		{name: "configMap item path absolute", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cm"},
				Items:                []corev1.KeyToPath{{Key: "k", Path: "/etc/k"}},
			}}}}
		}, want: []want{inv("spec.volumes[0].configMap.items[0].path")}},
		{name: "mount of unknown volume", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "missing", MountPath: "/data"}}
		}, want: []want{nf("spec.containers[0].volumeMounts[0].name")}},
		{name: "mount without path", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data"}}
		}, want: []want{req("spec.containers[0].volumeMounts[0].mountPath")}},
		{name: "bidirectional propagation needs privileged", mutate: func(p *corev1.Pod) {
			m := corev1.MountPropagationBidirectional
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", MountPropagation: &m}}
		}, want: []want{forb("spec.containers[0].volumeMounts.mountPropagation")}},
		{name: "restart policy unsupported", mutate: func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, want: []want{nsup("spec.restartPolicy")}},
		{name: "dns policy unsupported", mutate: func(p *corev1.Pod) { p.Spec.DNSPolicy = "Custom" }, want: []want{nsup("spec.dnsPolicy")}},
		{name: "dns none without config", mutate: func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSNone }, want: []want{req("spec.dnsConfig")}},
		{name: "missing grace period", mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = nil }, want: []want{req("spec.terminationGracePeriodSeconds")}},
		{name: "liveness probe success threshold", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{
				ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}},
				SuccessThreshold: 2, PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3,
			}
		}, want: []want{inv("spec.containers[0].livenessProbe.successThreshold")}},
		{name: "probe without handler", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{SuccessThreshold: 1}
		}, want: []want{req("spec.containers[0].readinessProbe")}},
		{name: "probe with two handlers", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
				Exec:      &corev1.ExecAction{Command: []string{"true"}},
				TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")},
			}}
		}, want: []want{forb("spec.containers[0].readinessProbe.tcpSocket")}},
		{name: "http probe bad port and scheme", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(0), Scheme: "FTP"},
			}}
		}, want: []want{inv("spec.containers[0].readinessProbe.httpGet.port"), nsup("spec.containers[0].readinessProbe.httpGet.scheme")}},
		{name: "init container probe forbidden", mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{
				Name: "init", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, SuccessThreshold: 1},
			}}
		}, want: []want{forb("spec.initContainers[0].livenessProbe")}},
		{name: "sidecar init container may have probes", mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{
				Name: "sidecar", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, SuccessThreshold: 1},
			}}
		}},
		{name: "regular container restart policy forbidden", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}, want: []want{forb("spec.containers[0].restartPolicy")}},
		{name: "pull policy unsupported", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Sometimes" }, want: []want{nsup("spec.containers[0].imagePullPolicy")}},
		{name: "termination message policy missing", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].TerminationMessagePolicy = "" }, want: []want{req("spec.containers[0].terminationMessagePolicy")}},
		{name: "node selector invalid", mutate: func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"-bad": "x"} }, want: []want{inv("spec.nodeSelector")}},
		{name: "toleration operator unsupported", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Maybe"}}
		}, want: []want{nsup("spec.tolerations[0].operator")}},
		{name: "toleration empty key needs Exists", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpEqual}}
		}, want: []want{inv("spec.tolerations[0].operator")}},
		{name: "toleration seconds need NoExecute", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](5)}}
		}, want: []want{inv("spec.tolerations[0].effect")}},
		{name: "toleration key invalid", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "a/b/c", Operator: corev1.TolerationOpExists}}
		}, want: []want{inv("spec.tolerations[0].key")}},
		{name: "toleration value invalid", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/k", Operator: corev1.TolerationOpEqual, Value: "-v"}}
		}, want: []want{inv("spec.tolerations[0].operator")}},
		{name: "toleration effect unsupported", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: "Never"}}
		}, want: []want{nsup("spec.tolerations[0].effect")}},
		{name: "node affinity without terms", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}
		}, want: []want{req("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")}},
		{name: "node affinity bad operator", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: "Near"}}}},
			}}}
		}, want: []want{inv("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator")}},
		{name: "pod anti affinity without topology key", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			}}}}
		}, want: []want{
			req("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
			inv("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
			inv("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
		}},
		{name: "preferred affinity weight", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 101, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "zone"},
			}}}}
		}, want: []want{inv("spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight")}},
		{name: "run as user negative", mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext.RunAsUser = ptr.To[int64](-1)
		}, want: []want{inv("spec.securityContext.runAsUser")}},
		{name: "share process namespace with host pid", mutate: func(p *corev1.Pod) {
			p.Spec.HostPID = true
			p.Spec.ShareProcessNamespace = ptr.To(true)
		}, want: []want{inv("spec.securityContext.shareProcessNamespace")}},
		{name: "sysctl with host network", mutate: func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 80
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}
		}, want: []want{inv("spec.securityContext.sysctls[0].name")}},
		{name: "host network needs matching host port", mutate: func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 8080
		}, want: []want{inv("spec.containers[0].ports[0].hostPort")}},
		{name: "container privilege escalation conflict", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false)}
		}, want: []want{inv("spec.containers[0].securityContext")}},
		{name: "seccomp localhost without profile", mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}
		}, want: []want{req("spec.securityContext.seccompProfile.localhostProfile")}},
		{name: "host users false with host network", mutate: func(p *corev1.Pod) {
			p.Spec.HostUsers = ptr.To(false)
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 80
		}, want: []want{forb("spec.hostNetwork")}},
		{name: "active deadline zero", mutate: func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) }, want: []want{inv("spec.activeDeadlineSeconds")}},
		{name: "hostname invalid", mutate: func(p *corev1.Pod) { p.Spec.Hostname = "Host" }, want: []want{inv("spec.hostname")}},
		{name: "service account name invalid", mutate: func(p *corev1.Pod) {
			p.Spec.ServiceAccountName = "Bad_SA"
			p.Spec.DeprecatedServiceAccount = "Bad_SA"
		}, want: []want{inv("spec.serviceAccountName")}},
		{name: "ephemeral containers on create", mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}}}
		}, want: []want{forb("spec.ephemeralContainers")}},
		{name: "node name with scheduling gates", mutate: func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
		}, want: []want{forb("spec.nodeName")}},
		{name: "projected token without service account", mutate: func(p *corev1.Pod) {
			p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "", ""
			p.Spec.Volumes = []corev1.Volume{{Name: "tok", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To[int32](0644),
				Sources:     []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}}},
			}}}}
		}, want: []want{forb("spec.volumes[0].projected.sources[0].serviceAccountToken")}},
		{name: "pod deletion cost invalid", mutate: func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.PodDeletionCost: "+10"}
		}, want: []want{inv("metadata.annotations[controller.kubernetes.io/pod-deletion-cost]")}},
		{name: "topology spread constraint", mutate: func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 0, TopologyKey: "", WhenUnsatisfiable: "Maybe"}}
		}, want: []want{inv("spec.topologySpreadConstraints[0].maxSkew"), req("spec.topologySpreadConstraints[0].topologyKey"), nsup("spec.topologySpreadConstraints[0].whenUnsatisfiable")}},
		{name: "windows pod with linux-only fields", mutate: func(p *corev1.Pod) {
			p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
			p.Spec.SecurityContext.RunAsUser = ptr.To[int64](1000)
		}, want: []want{forb("spec.securityContext.runAsUser")}},
		{name: "os unsupported", mutate: func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: "plan9"} }, want: []want{nsup("spec.os")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validPod()
			tc.mutate(p)
			checkErrs(t, ValidatePod(p), tc.want)
		})
	}
}

func TestValidatePodUpdate(t *testing.T) {
	base := func() *corev1.Pod {
		p := validPod()
		p.ObjectMeta = storedMeta(p.ObjectMeta)
		p.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}}
		return p
	}
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{name: "no change", mutate: func(p *corev1.Pod) {}},
		{name: "image change", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" }},
		{name: "label change", mutate: func(p *corev1.Pod) { p.Labels = map[string]string{"tier": "web"} }},
		{name: "set active deadline", mutate: func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) }},
		{name: "add toleration", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists})
		}},
		{name: "remove toleration", mutate: func(p *corev1.Pod) { p.Spec.Tolerations = nil }, want: []want{forb("spec.tolerations")}},
		{name: "change ports", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 8080 }, want: []want{forb("spec")}},
		{name: "add container", mutate: func(p *corev1.Pod) {
			c := p.Spec.Containers[0]
			c.Name = "second"
			c.Ports = nil
			p.Spec.Containers = append(p.Spec.Containers, c)
		}, want: []want{forb("spec.containers")}},
		{name: "clear image", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, want: []want{req("spec.containers[0].image"), req("spec.containers[0].image")}},
		{name: "rename", mutate: func(p *corev1.Pod) { p.Name = "other" }, want: []want{inv("metadata.name")}},
		{name: "change namespace", mutate: func(p *corev1.Pod) { p.Namespace = "other" }, want: []want{inv("metadata.namespace")}},
		{name: "change uid", mutate: func(p *corev1.Pod) { p.UID = "other" }, want: []want{inv("metadata.uid")}},
		{name: "change creation timestamp", mutate: func(p *corev1.Pod) { p.CreationTimestamp = metav1.Unix(100, 0) }, want: []want{inv("metadata.creationTimestamp")}},
		{name: "missing resource version", mutate: func(p *corev1.Pod) { p.ResourceVersion = "" }, want: []want{inv("metadata.resourceVersion")}},
		{name: "deadline raised", mutate: func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](100) }, want: []want{inv("spec.activeDeadlineSeconds")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := base()
			if tc.name == "deadline raised" {
				old.Spec.ActiveDeadlineSeconds = ptr.To[int64](50)
			}
			p := old.DeepCopy()
			tc.mutate(p)
			checkErrs(t, ValidatePodUpdate(p, old), tc.want)
		})
	}
}

func TestPodUpdateMessage(t *testing.T) {
	old := validPod()
	old.ResourceVersion = "1"
	p := old.DeepCopy()
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	errs := ValidatePodUpdate(p, old)
	e := errAt(errs, "spec")
	if e == nil || !strings.HasPrefix(e.Detail, "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)") {
		t.Fatalf("unexpected errors: %v", errs)
	}
}

func TestPodGatedUpdate(t *testing.T) {
	old := validPod()
	old.ResourceVersion = "1"
	old.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	old.Spec.NodeSelector = map[string]string{"a": "1"}

	added := old.DeepCopy()
	added.Spec.NodeSelector["b"] = "2"
	added.Spec.SchedulingGates = nil
	checkErrs(t, ValidatePodUpdate(added, old), nil)

	changed := old.DeepCopy()
	changed.Spec.NodeSelector = map[string]string{"a": "2"}
	checkErrs(t, ValidatePodUpdate(changed, old), []want{inv("spec.nodeSelector")})

	newGate := old.DeepCopy()
	newGate.Spec.SchedulingGates = append(newGate.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: "example.com/other"})
	checkErrs(t, ValidatePodUpdate(newGate, old), []want{forb("spec.schedulingGates[1].name")})
}

func TestPodDeprecatedServiceAccountAlias(t *testing.T) {
	p := validPod()
	p.Spec.ServiceAccountName = ""
	p.Spec.DeprecatedServiceAccount = "builder"
	p.Spec.Volumes = []corev1.Volume{{Name: "tok", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0644),
		Sources:     []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}}},
	}}}}
	checkErrs(t, ValidatePod(p), nil)
}

func TestPodRatchetingOnUpdate(t *testing.T) {
	old := validPod()
	old.ResourceVersion = "1"
	old.Annotations = map[string]string{corev1.PodDeletionCost: "007"}
	p := old.DeepCopy()
	// An invalid value already stored stays acceptable.
	checkErrs(t, ValidatePodUpdate(p, old), nil)
	checkErrs(t, ValidatePod(p), []want{inv("metadata.annotations[controller.kubernetes.io/pod-deletion-cost]")})
}
