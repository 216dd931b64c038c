package pod

import (
	corev1 "k8s.io/api/core/v1"
)

// SecurityFor merges the pod's and the container's security contexts as
// upstream does (the container's fields win) into what the runtime
// applies. allowPrivilegeEscalation defaults to true, so no_new_privs is
// set only when it is false and the container is not privileged.
func SecurityFor(p *corev1.Pod, c *corev1.Container) Security {
	var s Security
	if psc := p.Spec.SecurityContext; psc != nil {
		s.RunAsUser, s.RunAsGroup = psc.RunAsUser, psc.RunAsGroup
		s.SupplementalGroups = append(s.SupplementalGroups, psc.SupplementalGroups...)
		for _, sc := range psc.Sysctls {
			if s.Sysctls == nil {
				s.Sysctls = map[string]string{}
			}
			s.Sysctls[sc.Name] = sc.Value
		}
	}
	csc := c.SecurityContext
	if csc == nil {
		return s
	}
	if csc.RunAsUser != nil {
		s.RunAsUser = csc.RunAsUser
	}
	if csc.RunAsGroup != nil {
		s.RunAsGroup = csc.RunAsGroup
	}
	s.ReadOnlyRootFilesystem = csc.ReadOnlyRootFilesystem != nil && *csc.ReadOnlyRootFilesystem
	s.Privileged = csc.Privileged != nil && *csc.Privileged
	if caps := csc.Capabilities; caps != nil {
		for _, c := range caps.Add {
			s.CapAdd = append(s.CapAdd, string(c))
		}
		for _, c := range caps.Drop {
			s.CapDrop = append(s.CapDrop, string(c))
		}
	}
	s.NoNewPrivileges = csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation && !s.Privileged
	return s
}
