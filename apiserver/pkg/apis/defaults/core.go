package defaults

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DefaultNamespace defaults a Namespace: the kubernetes.io/metadata.name label
// (when the name is known) and status.phase Active.
func DefaultNamespace(ns *corev1.Namespace) {
	if len(ns.Name) > 0 {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// DefaultPod defaults a Pod: everything DefaultPodSpec does, plus the defaults
// upstream applies only to pods (not to pod templates).
func DefaultPod(pod *corev1.Pod) {
	spec := &pod.Spec
	// Requests default to limits for every resource that has a limit but no
	// request. Upstream does this for Pods only, never for templates.
	for i := range spec.Containers {
		defaultRequestsFromLimits(&spec.Containers[i].Resources)
	}
	for i := range spec.InitContainers {
		defaultRequestsFromLimits(&spec.InitContainers[i].Resources)
	}
	if spec.EnableServiceLinks == nil {
		v := corev1.DefaultEnableServiceLinks
		spec.EnableServiceLinks = &v
	}
	if spec.HostNetwork {
		defaultHostNetworkPorts(spec.Containers)
		defaultHostNetworkPorts(spec.InitContainers)
	}
	DefaultPodSpec(spec)
	normalizePodStatus(&pod.Status)
}

// DefaultPodTemplateSpec defaults the pod spec inside a template.
func DefaultPodTemplateSpec(t *corev1.PodTemplateSpec) {
	DefaultPodSpec(&t.Spec)
}

// DefaultPodSpec applies upstream's PodSpec defaults and the defaults of
// everything nested in a PodSpec. It is what upstream runs for pod templates.
func DefaultPodSpec(spec *corev1.PodSpec) {
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		period := int64(corev1.DefaultTerminationGracePeriodSeconds)
		spec.TerminationGracePeriodSeconds = &period
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	// serviceAccount is a deprecated alias of serviceAccountName; upstream's
	// conversion makes the new field win and echoes it into the old one.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName

	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	defaultResourceList(spec.Overhead)
}

func defaultRequestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = make(corev1.ResourceList, len(r.Limits))
	}
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

// With host networking, container ports default to host ports.
func defaultHostNetworkPorts(containers []corev1.Container) {
	for i := range containers {
		for j := range containers[i].Ports {
			if containers[i].Ports[j].HostPort == 0 {
				containers[i].Ports[j].HostPort = containers[i].Ports[j].ContainerPort
			}
		}
	}
}

func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		} else {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil {
			defaultObjectFieldSelector(vf.FieldRef)
		}
	}
	defaultResourceList(c.Resources.Limits)
	defaultResourceList(c.Resources.Requests)
	defaultProbe(c.LivenessProbe)
	defaultProbe(c.ReadinessProbe)
	defaultProbe(c.StartupProbe)
	if c.Lifecycle != nil {
		defaultLifecycleHandler(c.Lifecycle.PostStart)
		defaultLifecycleHandler(c.Lifecycle.PreStop)
	}
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if p.HTTPGet != nil {
		defaultHTTPGetAction(p.HTTPGet)
	}
	if p.GRPC != nil && p.GRPC.Service == nil {
		service := ""
		p.GRPC.Service = &service
	}
}

func defaultLifecycleHandler(h *corev1.LifecycleHandler) {
	if h != nil && h.HTTPGet != nil {
		defaultHTTPGetAction(h.HTTPGet)
	}
}

func defaultHTTPGetAction(a *corev1.HTTPGetAction) {
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

func defaultObjectFieldSelector(s *corev1.ObjectFieldSelector) {
	if s.APIVersion == "" {
		s.APIVersion = "v1"
	}
}

// defaultResourceList rounds every quantity up to milli precision, as
// upstream's SetDefaults_ResourceList does.
func defaultResourceList(list corev1.ResourceList) {
	for name, q := range list {
		const milliScale = -3
		q.RoundUp(milliScale)
		list[name] = q
	}
}

func defaultVolume(v *corev1.Volume) {
	src := &v.VolumeSource
	if *src == (corev1.VolumeSource{}) {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		t := corev1.HostPathUnset
		src.HostPath.Type = &t
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		mode := corev1.SecretVolumeSourceDefaultMode
		src.Secret.DefaultMode = &mode
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		mode := corev1.ConfigMapVolumeSourceDefaultMode
		src.ConfigMap.DefaultMode = &mode
	}
	if src.DownwardAPI != nil {
		if src.DownwardAPI.DefaultMode == nil {
			mode := corev1.DownwardAPIVolumeSourceDefaultMode
			src.DownwardAPI.DefaultMode = &mode
		}
		for i := range src.DownwardAPI.Items {
			if src.DownwardAPI.Items[i].FieldRef != nil {
				defaultObjectFieldSelector(src.DownwardAPI.Items[i].FieldRef)
			}
		}
	}
	if src.Projected != nil {
		if src.Projected.DefaultMode == nil {
			mode := corev1.ProjectedVolumeSourceDefaultMode
			src.Projected.DefaultMode = &mode
		}
		for i := range src.Projected.Sources {
			s := &src.Projected.Sources[i]
			if s.DownwardAPI != nil {
				for j := range s.DownwardAPI.Items {
					if s.DownwardAPI.Items[j].FieldRef != nil {
						defaultObjectFieldSelector(s.DownwardAPI.Items[j].FieldRef)
					}
				}
			}
			if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
				hour := int64(time.Hour.Seconds())
				s.ServiceAccountToken.ExpirationSeconds = &hour
			}
		}
	}
	if src.ISCSI != nil && src.ISCSI.ISCSIInterface == "" {
		src.ISCSI.ISCSIInterface = "default"
	}
	if src.RBD != nil {
		if src.RBD.RBDPool == "" {
			src.RBD.RBDPool = "rbd"
		}
		if src.RBD.RadosUser == "" {
			src.RBD.RadosUser = "admin"
		}
		if src.RBD.Keyring == "" {
			src.RBD.Keyring = "/etc/ceph/keyring"
		}
	}
	if src.AzureDisk != nil {
		defaultAzureDisk(src.AzureDisk)
	}
	if src.ScaleIO != nil {
		if src.ScaleIO.StorageMode == "" {
			src.ScaleIO.StorageMode = "ThinProvisioned"
		}
		if src.ScaleIO.FSType == "" {
			src.ScaleIO.FSType = "xfs"
		}
	}
	if src.Ephemeral != nil && src.Ephemeral.VolumeClaimTemplate != nil {
		pvc := &src.Ephemeral.VolumeClaimTemplate.Spec
		if pvc.VolumeMode == nil {
			mode := corev1.PersistentVolumeFilesystem
			pvc.VolumeMode = &mode
		}
		defaultResourceList(pvc.Resources.Limits)
		defaultResourceList(pvc.Resources.Requests)
	}
}

func defaultAzureDisk(d *corev1.AzureDiskVolumeSource) {
	if d.CachingMode == nil {
		m := corev1.AzureDataDiskCachingReadWrite
		d.CachingMode = &m
	}
	if d.FSType == nil {
		fs := "ext4"
		d.FSType = &fs
	}
	if d.ReadOnly == nil {
		ro := false
		d.ReadOnly = &ro
	}
	if d.Kind == nil {
		k := corev1.AzureSharedBlobDisk
		d.Kind = &k
	}
}

// normalizePodStatus keeps podIP/podIPs and hostIP/hostIPs in step, as
// upstream's v1 <-> internal conversion does: the singular field is
// authoritative when both are set and differ.
func normalizePodStatus(s *corev1.PodStatus) {
	if s.PodIP != "" && (len(s.PodIPs) == 0 || s.PodIPs[0].IP != s.PodIP) {
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	}
	if len(s.PodIPs) > 0 {
		s.PodIP = s.PodIPs[0].IP
	}
	if s.HostIP != "" && (len(s.HostIPs) == 0 || s.HostIPs[0].IP != s.HostIP) {
		s.HostIPs = []corev1.HostIP{{IP: s.HostIP}}
	}
	if len(s.HostIPs) > 0 {
		s.HostIP = s.HostIPs[0].IP
	}
}

// DefaultNode defaults a Node: allocatable copies capacity when unset, and
// quantities are rounded up to milli precision.
func DefaultNode(node *corev1.Node) {
	if node.Status.Allocatable == nil && node.Status.Capacity != nil {
		node.Status.Allocatable = make(corev1.ResourceList, len(node.Status.Capacity))
		for name, q := range node.Status.Capacity {
			node.Status.Allocatable[name] = q.DeepCopy()
		}
	}
	defaultResourceList(node.Status.Capacity)
	defaultResourceList(node.Status.Allocatable)
	// podCIDR is the singular form of podCIDRs; upstream's conversion keeps
	// them in step, the singular field winning when both are set and differ.
	spec := &node.Spec
	if spec.PodCIDR != "" && (len(spec.PodCIDRs) == 0 || spec.PodCIDRs[0] != spec.PodCIDR) {
		spec.PodCIDRs = []string{spec.PodCIDR}
	}
	if len(spec.PodCIDRs) > 0 {
		spec.PodCIDR = spec.PodCIDRs[0]
	}
}

// ExternallyAccessible reports whether a Service is reachable from outside
// the cluster: NodePort, LoadBalancer, or ClusterIP with external IPs.
func ExternallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer ||
		svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

// DefaultService defaults a Service. The cluster IPs, IP families and family
// policy are left to the IP allocator, node ports to the port allocator.
func DefaultService(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		c := spec.SessionAffinityConfig
		if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			timeout := corev1.DefaultClientIPServiceAffinitySeconds
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if ExternallyAccessible(svc) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil {
		switch spec.Type {
		case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP:
			p := corev1.ServiceInternalTrafficPolicyCluster
			spec.InternalTrafficPolicy = &p
		}
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			allocate := true
			spec.AllocateLoadBalancerNodePorts = &allocate
		}
		for i := range svc.Status.LoadBalancer.Ingress {
			ing := &svc.Status.LoadBalancer.Ingress[i]
			if ing.IP != "" && ing.IPMode == nil {
				mode := corev1.LoadBalancerIPModeVIP
				ing.IPMode = &mode
			}
		}
	}
}

// DefaultEndpoints defaults every port's protocol to TCP.
func DefaultEndpoints(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if ep.Subsets[i].Ports[j].Protocol == "" {
				ep.Subsets[i].Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// DefaultConfigMap makes data a non-nil map, as upstream does.
func DefaultConfigMap(cm *corev1.ConfigMap) {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
}

// DefaultSecret defaults the type to Opaque and merges stringData into data
// (stringData winning), which upstream does while converting a v1 Secret to
// its internal form; stringData is write-only and never stored.
func DefaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
}

// DefaultLimitRange: for type Container, default takes max, and
// defaultRequest takes default, then min, for resources they do not name.
func DefaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		if item.Default == nil {
			item.Default = corev1.ResourceList{}
		}
		if item.DefaultRequest == nil {
			item.DefaultRequest = corev1.ResourceList{}
		}
		fill := func(dst, src corev1.ResourceList) {
			for k, v := range src {
				if _, ok := dst[k]; !ok {
					dst[k] = v.DeepCopy()
				}
			}
		}
		fill(item.Default, item.Max)
		fill(item.DefaultRequest, item.Default)
		fill(item.DefaultRequest, item.Min)
	}
}
