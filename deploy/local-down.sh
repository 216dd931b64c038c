#!/usr/bin/env bash
# make down: stop what deploy/local-up.sh started and remove what it put
# into the kernel and the filesystem outside $SKIFF_HOME: the pods'
# containers, cgroups, network namespaces and mounts (local-path claims
# included), the pod bridge, the traffic-safety routes and the proxy's
# iptables chains. The certificates, etcd data, registry, local-path volumes
# and logs in $SKIFF_HOME stay for the next make up.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
[ -d "$SKIFF_HOME/run" ] || exit 0
SKIFF_HOME="$(cd "$SKIFF_HOME" && pwd)"
export PATH="$PATH:/usr/sbin:/sbin"
if [ "$(id -u)" -ne 0 ]; then
	echo "skiff down: must run as root (it removes network namespaces, routes, iptables chains and mounts)" >&2
	exit 1
fi

# Where make up put the node's state (run/layout.env); a cluster started
# before that file existed used these names.
CTRD_STATE=/run/skiff-containerd
CTRD_SOCK=/run/skiff-containerd/containerd.sock
NETNS_DIR=
CGROUP_ROOT=/
if [ -f "$SKIFF_HOME/run/layout.env" ]; then
	# shellcheck source=/dev/null
	. "$SKIFF_HOME/run/layout.env"
fi

stop() {
	local name="$1"
	local pidfile="$SKIFF_HOME/run/$name.pid"
	[ -e "$pidfile" ] || return 0
	local pid
	pid="$(cat "$pidfile")"
	# Only our process: its command line names $SKIFF_HOME (a pid of a
	# daemon long gone may be another program's now).
	if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$SKIFF_HOME"; then
		kill "$pid" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null && sleep 0.2
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
# Shims whose containerd was killed before its tasks were removed: they
# name this containerd's socket.
for p in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $CTRD_SOCK( |$)" 2>/dev/null); do
	kill -9 "$p" 2>/dev/null && echo "skiff down: killed a leftover shim (pid $p)"
done
for f in "$SKIFF_HOME"/run/*.pid; do
	[ -e "$f" ] || continue
	stop "$(basename "$f" .pid)"
done

# The proxy's rules, chains, egress guard, service route and skiff-svc0.
if [ -x "$ROOT/bin/skiff-proxy" ]; then
	"$ROOT/bin/skiff-proxy" --cleanup >/dev/null 2>&1 && echo "skiff down: removed the proxy's iptables chains and the service route"
fi

# The CNI portmap plugin's chains (CNI-HOSTPORT-*, CNI-DN-*) and the jumps to
# them, when this cluster's pods made them (layout.env says they were not
# there before the first make up).
if [ "${CNI_HOSTPORT_CHAINS_BEFORE:-}" = no ]; then
	iptables -w -t nat -S 2>/dev/null | grep -E '^-A .* -j CNI-(HOSTPORT-|DN-)' | sed 's/^-A /-D /' |
		while read -r rule; do eval "iptables -w -t nat $rule" 2>/dev/null; done
	for c in $(iptables -w -t nat -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^CNI-(HOSTPORT-|DN-)/ { print $2 }'); do
		iptables -w -t nat -F "$c" 2>/dev/null
	done
	for c in $(iptables -w -t nat -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^CNI-(HOSTPORT-|DN-)/ { print $2 }'); do
		iptables -w -t nat -X "$c" 2>/dev/null
	done
	echo "skiff down: removed the CNI portmap chains"
fi

# Pod network namespaces and their IP leases.
if [ -n "$NETNS_DIR" ]; then
	for ns in "$NETNS_DIR"/*; do
		[ -e "$ns" ] || continue
		umount "$ns" 2>/dev/null || umount -l "$ns" 2>/dev/null
		rm -f "$ns"
	done
	rmdir "$NETNS_DIR" 2>/dev/null
else
	for ns in /var/run/netns/skiff-*; do
		[ -e "$ns" ] || continue
		# The kubelet's pod namespaces are skiff-<pod uid>.
		[[ "$(basename "$ns")" =~ ^skiff-[0-9a-f]{8}-[0-9a-f]{4}- ]] || continue
		ip netns delete "$(basename "$ns")" 2>/dev/null || { umount "$ns" 2>/dev/null; rm -f "$ns"; }
	done
fi
rm -rf "$SKIFF_HOME/kubelet/cni/networks" "$SKIFF_HOME/kubelet/cni/cache"
ip link delete skiff0 2>/dev/null && echo "skiff down: removed bridge skiff0"
ip route delete blackhole 10.244.0.0/16 2>/dev/null && echo "skiff down: removed the cluster CIDR blackhole route"

# Mounts left by a killed containerd (rootfs of its tasks) and the pods'
# volumes, local-path claims included (the kubelet leaves them for its next
# start to adopt), deepest first.
grep -o " $SKIFF_HOME/[^ ]*\| $CTRD_STATE/[^ ]*\| $CTRD_STATE " /proc/mounts | sed 's/^ //; s/ $//' | sort -r | while read -r m; do
	umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
done
rm -rf "$CTRD_STATE"

# The pods' cgroups (kubepods under the kubelet's cgroup root; before
# layout.env, kubepods at the top and containerd's namespace skiff-<node>):
# empty now that the containers are gone.
if [ "$CGROUP_ROOT" = / ]; then tops=(kubepods "skiff-$(hostname)"); else tops=("${CGROUP_ROOT#/}"); fi
for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
	[ -d "$h" ] || continue
	for top in "${tops[@]/#/$h/}"; do
		[ -d "$top" ] || continue
		find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
done
rm -f "$SKIFF_HOME/run/layout.env"
echo "skiff down: done"
exit 0
