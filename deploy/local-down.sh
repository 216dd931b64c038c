#!/usr/bin/env bash
# Stop what local-up.sh started and remove what it put into the kernel: the
# pods' containers, network namespaces and mounts, the pod bridge and the
# traffic-safety routes, the proxy's iptables chains; skiff-dns. The certificates and etcd data in $SKIFF_HOME stay.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
CTRD_SOCK="/run/skiff-containerd/containerd.sock"
[ -d "$SKIFF_HOME/run" ] || exit 0

stop() {
	local name="$1"
	local pidfile="$SKIFF_HOME/run/$name.pid"
	[ -e "$pidfile" ] || return 0
	local pid
	pid="$(cat "$pidfile")"
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
		echo "skiff down: stopped $name (pid $pid)"
	fi
	rm -f "$pidfile"
}

# skiff-dns while the API server still runs: on a clean stop it deletes its
# EndpointSlice of the kube-dns Service.
stop dns
# The kubelet next: it leaves its containers running (a restarted kubelet
# adopts them), so they are removed here, while containerd still runs.
stop kubelet
if [ -S "$CTRD_SOCK" ]; then
	for ns in $(ctr --address "$CTRD_SOCK" namespaces list -q 2>/dev/null | grep '^skiff-'); do
		for task in $(ctr --address "$CTRD_SOCK" -n "$ns" tasks list -q 2>/dev/null); do
			ctr --address "$CTRD_SOCK" -n "$ns" tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
			ctr --address "$CTRD_SOCK" -n "$ns" tasks delete -f "$task" >/dev/null 2>&1 || true
		done
		for c in $(ctr --address "$CTRD_SOCK" -n "$ns" containers list -q 2>/dev/null); do
			ctr --address "$CTRD_SOCK" -n "$ns" containers delete "$c" >/dev/null 2>&1 || true
		done
		echo "skiff down: removed the containers of containerd namespace $ns"
	done
fi
stop containerd
for f in "$SKIFF_HOME"/run/*.pid; do
	[ -e "$f" ] || continue
	stop "$(basename "$f" .pid)"
done

# The proxy's rules, chains, egress guard, service route and skiff-svc0.
if [ -x "$ROOT/bin/skiff-proxy" ]; then
	"$ROOT/bin/skiff-proxy" --cleanup >/dev/null 2>&1 && echo "skiff down: removed the proxy's iptables chains and the service route"
fi

# The pods' cgroups (kubepods, made by the kubelet) and containerd's
# per-namespace cgroups: empty now that the containers are gone.
for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
	for top in "$h"/kubepods "$h"/skiff-*; do
		[ -d "$top" ] || continue
		find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
done

# Pod network namespaces, their IP leases, the bridge and the routes.
for ns in /var/run/netns/skiff-*; do
	[ -e "$ns" ] || continue
	ip netns delete "$(basename "$ns")" 2>/dev/null || { umount "$ns" 2>/dev/null; rm -f "$ns"; }
done
rm -rf "$SKIFF_HOME/kubelet/cni/networks" "$SKIFF_HOME/kubelet/cni/cache"
ip link delete skiff0 2>/dev/null && echo "skiff down: removed bridge skiff0"
ip route delete blackhole 10.244.0.0/16 2>/dev/null && echo "skiff down: removed the cluster CIDR blackhole route"
# Mounts left by a killed containerd (rootfs of its tasks) and the pods' volumes
# (the kubelet leaves them for its next start to adopt).
grep -o " $SKIFF_HOME/containerd/[^ ]*\| $SKIFF_HOME/kubelet/[^ ]*\| /run/skiff-containerd/[^ ]*" /proc/mounts | sort -r | while read -r m; do
	umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
done
exit 0
