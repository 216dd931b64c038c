#!/usr/bin/env bash
# make down: stop what deploy/local-up.sh started and remove what it put
# into the kernel and the filesystem outside $SKIFF_HOME: the pods'
# containers, cgroups, network namespaces and mounts (local-path claims
# included), the pod bridge, the traffic-safety routes and the proxy's
# iptables chains; and the nodes make node-up added (local-node.sh down).
# The certificates, etcd data, registry, local-path volumes
# and logs in $SKIFF_HOME stay for the next make up.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
[ -d "$SKIFF_HOME/run" ] || exit 0
SKIFF_HOME="$(cd "$SKIFF_HOME" && pwd)"
export PATH="$PATH:/usr/sbin:/sbin"
LOG_TAG="skiff down"
# log, running, stop, remove_containers, kill_shims, remove_pod_netns,
# unmount_under, remove_cgroups.
# shellcheck source=deploy/local-lib.sh
. "$ROOT/deploy/local-lib.sh"
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

# The nodes of make node-up first, while the API server still runs: their
# Node objects are deleted with them.
for n in "$SKIFF_HOME"/nodes/*/node.env; do
	[ -e "$n" ] || continue
	SKIFF_HOME="$SKIFF_HOME" bash "$ROOT/deploy/local-node.sh" down "$(basename "$(dirname "$n")")"
done

# skiff-dns while the API server still runs: on a clean stop it deletes its
# EndpointSlice of the kube-dns Service.
stop dns
# The kubelet next: it leaves its containers running (a restarted kubelet
# adopts them), so they are removed here, while containerd still runs.
stop kubelet
remove_containers "$CTRD_SOCK"
stop containerd
kill_shims "$CTRD_SOCK"
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
	remove_pod_netns "$NETNS_DIR"
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
unmount_under "$SKIFF_HOME" "$CTRD_STATE"
rm -rf "$CTRD_STATE"

# The pods' cgroups (kubepods under the kubelet's cgroup root; before
# layout.env, kubepods at the top and containerd's namespace skiff-<node>):
# empty now that the containers are gone.
if [ "$CGROUP_ROOT" = / ]; then tops=(kubepods "skiff-$(hostname)"); else tops=("${CGROUP_ROOT#/}"); fi
remove_cgroups "${tops[@]}"
rm -f "$SKIFF_HOME/run/layout.env"
echo "skiff down: done"
exit 0
