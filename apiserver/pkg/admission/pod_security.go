package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PodSecurityName is upstream's plugin name.
const PodSecurityName = "PodSecurity"

// EnforceLabel sets a namespace's level: privileged, baseline or restricted.
const EnforceLabel = "pod-security.kubernetes.io/enforce"

// PodSecurity enforces the Pod Security Standards' baseline level, as
// upstream defines it, on pods in namespaces that do not set another level
// (skiff's default is baseline). "privileged" lifts every check; "restricted"
// is enforced as baseline for now (skiff does not implement its extra checks
// yet, and says so in the error when it matters).
type PodSecurity struct {
	// Labels returns a namespace's labels.
	Labels func(ctx context.Context, namespace string) (map[string]string, error)
	// DefaultLevel applies where a namespace sets none.
	DefaultLevel string
}

// Name implements Plugin.
func (*PodSecurity) Name() string { return PodSecurityName }

var baselineCapabilities = map[corev1.Capability]bool{
	"AUDIT_WRITE": true, "CHOWN": true, "DAC_OVERRIDE": true, "FOWNER": true, "FSETID": true, "KILL": true, "MKNOD": true,
	"NET_BIND_SERVICE": true, "SETFCAP": true, "SETGID": true, "SETPCAP": true, "SETUID": true, "SYS_CHROOT": true,
}

var safeSysctls = map[string]bool{
	"kernel.shm_rmid_forced": true, "net.ipv4.ip_local_port_range": true, "net.ipv4.ip_unprivileged_port_start": true,
	"net.ipv4.tcp_syncookies": true, "net.ipv4.ping_group_range": true, "net.ipv4.ip_local_reserved_ports": true,
	"net.ipv4.tcp_keepalive_time": true, "net.ipv4.tcp_fin_timeout": true, "net.ipv4.tcp_keepalive_intvl": true,
	"net.ipv4.tcp_keepalive_probes": true,
}

var allowedSELinuxTypes = map[string]bool{"": true, "container_t": true, "container_init_t": true, "container_kvm_t": true, "container_engine_t": true}

// Validate implements ValidationInterface.
func (p *PodSecurity) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" || (a.Operation != Create && a.Operation != Update) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	level := p.DefaultLevel
	if labels, err := p.Labels(ctx, a.Namespace); err == nil && labels[EnforceLabel] != "" {
		level = labels[EnforceLabel]
	}
	if level == "privileged" {
		return nil
	}
	violations := CheckBaseline(&pod.Spec, pod.Annotations)
	if len(violations) == 0 {
		return nil
	}
	return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name,
		fmt.Errorf("violates PodSecurity %q: %s", "baseline:latest", strings.Join(violations, ", ")))
}

type containerRef struct {
	name string
	sc   *corev1.SecurityContext
	c    *corev1.Container
}

// appendContainers appends every container of spec to out.
func appendContainers(out []containerRef, spec *corev1.PodSpec) []containerRef {
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		out = append(out, containerRef{c.Name, c.SecurityContext, c})
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		out = append(out, containerRef{c.Name, c.SecurityContext, c})
	}
	for i := range spec.EphemeralContainers {
		c := (*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)
		out = append(out, containerRef{c.Name, c.SecurityContext, c})
	}
	return out
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CheckBaseline returns the baseline violations of a pod, worded as
// upstream's pod-security admission words them.
func CheckBaseline(spec *corev1.PodSpec, annotations map[string]string) []string {
	var out []string
	var buf [8]containerRef // pods rarely have more: no allocation
	cs := appendContainers(buf[:0], spec)
	var hostNS []string
	if spec.HostNetwork {
		hostNS = append(hostNS, "hostNetwork=true")
	}
	if spec.HostPID {
		hostNS = append(hostNS, "hostPID=true")
	}
	if spec.HostIPC {
		hostNS = append(hostNS, "hostIPC=true")
	}
	if len(hostNS) > 0 {
		out = append(out, fmt.Sprintf("host namespaces (%s)", strings.Join(hostNS, ", ")))
	}
	var privileged []string
	for _, c := range cs {
		if c.sc != nil && c.sc.Privileged != nil && *c.sc.Privileged {
			privileged = append(privileged, c.name)
		}
	}
	if len(privileged) > 0 {
		out = append(out, fmt.Sprintf("privileged (%s %s must not set securityContext.privileged=true)", plural(len(privileged), "container", "containers"), quoted(privileged)))
	}
	var capNames, badCaps []string
	var seenCap map[string]bool
	for _, c := range cs {
		if c.sc == nil || c.sc.Capabilities == nil {
			continue
		}
		bad := false
		for _, cap := range c.sc.Capabilities.Add {
			if !baselineCapabilities[cap] {
				bad = true
				if !seenCap[string(cap)] {
					if seenCap == nil {
						seenCap = map[string]bool{}
					}
					seenCap[string(cap)] = true
					badCaps = append(badCaps, string(cap))
				}
			}
		}
		if bad {
			capNames = append(capNames, c.name)
		}
	}
	if len(capNames) > 0 {
		sort.Strings(badCaps)
		out = append(out, fmt.Sprintf("non-default capabilities (%s %s must not include %s in securityContext.capabilities.add)",
			plural(len(capNames), "container", "containers"), quoted(capNames), quoted(badCaps)))
	}
	var hostPaths []string
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			hostPaths = append(hostPaths, v.Name)
		}
	}
	if len(hostPaths) > 0 {
		out = append(out, fmt.Sprintf("hostPath %s (%s %s)", plural(len(hostPaths), "volume", "volumes"), plural(len(hostPaths), "volume", "volumes"), quoted(hostPaths)))
	}
	var portNames []string
	var ports []string
	for _, c := range cs {
		bad := false
		for _, p := range c.c.Ports {
			if p.HostPort != 0 {
				bad = true
				ports = append(ports, fmt.Sprint(p.HostPort))
			}
		}
		if bad {
			portNames = append(portNames, c.name)
		}
	}
	if len(portNames) > 0 {
		out = append(out, fmt.Sprintf("hostPort (%s %s %s %s)", plural(len(portNames), "container", "containers"), quoted(portNames),
			plural(len(ports), "uses hostPort", "use hostPorts"), strings.Join(ports, ", ")))
	}
	var seLinux []string
	badSE := func(o *corev1.SELinuxOptions) bool {
		return o != nil && (!allowedSELinuxTypes[o.Type] || o.User != "" || o.Role != "")
	}
	if spec.SecurityContext != nil && badSE(spec.SecurityContext.SELinuxOptions) {
		seLinux = append(seLinux, "pod")
	}
	for _, c := range cs {
		if c.sc != nil && badSE(c.sc.SELinuxOptions) {
			seLinux = append(seLinux, fmt.Sprintf("container %q", c.name))
		}
	}
	if len(seLinux) > 0 {
		out = append(out, fmt.Sprintf("seLinuxOptions (%s set forbidden securityContext.seLinuxOptions)", strings.Join(seLinux, ", ")))
	}
	var procMount []string
	for _, c := range cs {
		if c.sc != nil && c.sc.ProcMount != nil && *c.sc.ProcMount != corev1.DefaultProcMount {
			procMount = append(procMount, c.name)
		}
	}
	if len(procMount) > 0 {
		out = append(out, fmt.Sprintf("procMount (%s %s must not set securityContext.procMount to Unmasked)", plural(len(procMount), "container", "containers"), quoted(procMount)))
	}
	var seccomp []string
	if spec.SecurityContext != nil && spec.SecurityContext.SeccompProfile != nil && spec.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
		seccomp = append(seccomp, "pod")
	}
	for _, c := range cs {
		if c.sc != nil && c.sc.SeccompProfile != nil && c.sc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
			seccomp = append(seccomp, fmt.Sprintf("container %q", c.name))
		}
	}
	if len(seccomp) > 0 {
		out = append(out, fmt.Sprintf("seccompProfile (%s must not set securityContext.seccompProfile.type to \"Unconfined\")", strings.Join(seccomp, " and ")))
	}
	if spec.SecurityContext != nil {
		var bad []string
		for _, s := range spec.SecurityContext.Sysctls {
			if !safeSysctls[s.Name] {
				bad = append(bad, s.Name)
			}
		}
		if len(bad) > 0 {
			out = append(out, fmt.Sprintf("forbidden sysctls (%s)", strings.Join(bad, ", ")))
		}
	}
	var hostProcess []string
	if spec.SecurityContext != nil && spec.SecurityContext.WindowsOptions != nil && spec.SecurityContext.WindowsOptions.HostProcess != nil && *spec.SecurityContext.WindowsOptions.HostProcess {
		hostProcess = append(hostProcess, "pod")
	}
	for _, c := range cs {
		if c.sc != nil && c.sc.WindowsOptions != nil && c.sc.WindowsOptions.HostProcess != nil && *c.sc.WindowsOptions.HostProcess {
			hostProcess = append(hostProcess, fmt.Sprintf("container %q", c.name))
		}
	}
	if len(hostProcess) > 0 {
		out = append(out, fmt.Sprintf("hostProcess (%s must not set securityContext.windowsOptions.hostProcess=true)", strings.Join(hostProcess, " and ")))
	}
	var appArmor []string
	for k, v := range annotations {
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) && v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && !strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			appArmor = append(appArmor, fmt.Sprintf("%s=%q", k, v))
		}
	}
	unconfined := func(p *corev1.AppArmorProfile) bool {
		return p != nil && p.Type == corev1.AppArmorProfileTypeUnconfined
	}
	if spec.SecurityContext != nil && unconfined(spec.SecurityContext.AppArmorProfile) {
		appArmor = append(appArmor, "pod")
	}
	for _, c := range cs {
		if c.sc != nil && unconfined(c.sc.AppArmorProfile) {
			appArmor = append(appArmor, fmt.Sprintf("container %q", c.name))
		}
	}
	if len(appArmor) > 0 {
		sort.Strings(appArmor)
		out = append(out, fmt.Sprintf("forbidden AppArmor profiles (%s)", strings.Join(appArmor, ", ")))
	}
	return out
}
