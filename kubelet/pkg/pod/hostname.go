package pod

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// podHostname is the hostname of a pod's containers and of its line in
// /etc/hosts, as upstream's kubelet (GeneratePodHostNameAndDomain):
// spec.hostname, else the pod's name. A pod name may be a DNS subdomain of
// up to 253 characters, but the kernel takes a hostname of at most 63
// (sethostname fails with EINVAL), so a longer one is cut to 63 and loses
// any '-' and '.' it then ends with (truncatePodHostnameIfNeeded).
func podHostname(p *corev1.Pod) string {
	hostname := p.Name
	if p.Spec.Hostname != "" {
		hostname = p.Spec.Hostname
	}
	if len(hostname) <= utilvalidation.DNS1123LabelMaxLength {
		return hostname
	}
	return strings.TrimRight(hostname[:utilvalidation.DNS1123LabelMaxLength], "-.")
}

// podHostDomain is the domain of a pod with spec.subdomain,
// "<subdomain>.<namespace>.svc.<cluster domain>", or "" without one, as
// upstream's GeneratePodHostNameAndDomain.
func podHostDomain(p *corev1.Pod, clusterDomain string) string {
	if p.Spec.Subdomain == "" {
		return ""
	}
	return p.Spec.Subdomain + "." + p.Namespace + ".svc." + clusterDomain
}
