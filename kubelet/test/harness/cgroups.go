package harness

import (
	"path"

	"skiff.dev/kubelet/pkg/cm"
)

// RemoveCgroups removes the cgroup root (an absolute cgroup path such as
// "/skiff-e2e-abc123") and every cgroup below it, in every mounted
// hierarchy. Processes must be gone first; what cannot be removed is
// logged.
func RemoveCgroups(t T, root string) {
	if root == "" || root == "/" || path.Clean(root) != root {
		t.Logf("not removing cgroup root %q", root)
		return
	}
	hs, err := cm.DiscoverHierarchies("/proc/self/mountinfo")
	if err != nil {
		t.Logf("cgroups: %v", err)
		return
	}
	m, err := cm.New(cm.Options{Hierarchies: hs, Root: root})
	if err != nil {
		t.Logf("cgroups: %v", err)
		return
	}
	if err := m.RemoveAll(); err != nil {
		t.Logf("removing cgroup %s: %v", root, err)
	}
}
