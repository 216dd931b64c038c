#!/usr/bin/env bash
# make node-up NODE=NAME / make node-down NODE=NAME: another node for the
# cluster of make up, on this machine. The node is a network namespace of
# its own (skiff-node-NAME) with its containerd, kubelet and proxy, joined
# with a bootstrap token (skiffctl token create, skiffctl join, the
# kubelet's TLS bootstrap), as a second machine would be.
#
#   local-node.sh up NAME     add the node; returns when it is Ready
#   local-node.sh down NAME   remove it: its Node object, processes,
#                             containers, mounts, cgroups, namespace, routes
#
# The network: the bridge skiff-nodes0 on the machine, 198.51.100.1/24
# (TEST-NET-2, RFC 5737: nothing is behind it), and a veth pair per node,
# its end in the node's namespace 198.51.100.N. In the namespace the
# machine's node address (make up's node, the API server, cluster DNS) is on
# that link; there is no default route, so nothing leaves the machine by a
# node. The node's kubelet routes the other nodes' pod CIDRs and blackholes
# the rest of the cluster CIDR, its proxy routes the service range to its
# own skiff-svc0 (DESIGN.md, "Network"), as make up's node does; make up's
# kubelet routes this node's pod CIDR to 198.51.100.N, and make up's proxy
# lets cluster traffic out by skiff-nodes0 only (and its pod bridge).
# The registries on the machine's loopback (make up's 127.0.0.1:5000, make
# conformance's 127.0.0.1:5055; SKIFF_NODE_LOOPBACK_PORTS) answer on the
# node's loopback too, through a pair of socat forwarders over a Unix socket.
#
# State: $SKIFF_HOME/nodes/NAME (containerd's root, the kubelet's, its
# certificates), logs in $SKIFF_HOME/logs/node-NAME-*.log. make down
# removes every node first.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
BIN="$ROOT/bin"
PORT="${SKIFF_APISERVER_PORT:-6443}"
LOOPBACK_PORTS="${SKIFF_NODE_LOOPBACK_PORTS:-5000 5055}"
CLUSTER_CIDR=10.244.0.0/16
SERVICE_CIDR=10.96.0.0/16
DNS_IP=10.96.0.10
BRIDGE=skiff-nodes0
NET_PREFIX=198.51.100
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
LOG_TAG="skiff node"
# shellcheck source=deploy/local-lib.sh
. "$ROOT/deploy/local-lib.sh"

ACTION="${1:-}"
NAME="${2:-}"
case "$ACTION" in
up | down) ;;
*) die "usage: local-node.sh up|down NAME (make node-up NODE=NAME, make node-down NODE=NAME)" ;;
esac
# A DNS label, short enough for the names made from it.
[[ "$NAME" =~ ^[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?$ ]] ||
	die "NODE=$NAME: a node name of lowercase letters, digits and '-', at most 20 characters (make node-up NODE=vm2)"
[ "$(id -u)" -eq 0 ] || die "must run as root: the node is a network namespace with its own kubelet, containerd and iptables"
[ "$NAME" != "$(hostname)" ] || die "NODE=$NAME is make up's own node"
LOG_TAG="skiff node $NAME"

[ -d "$SKIFF_HOME" ] || { [ "$ACTION" = down ] && exit 0; die "no cluster in $SKIFF_HOME: run make up first"; }
SKIFF_HOME="$(cd "$SKIFF_HOME" && pwd)"
KC="$SKIFF_HOME/admin.kubeconfig"
ND="$SKIFF_HOME/nodes/$NAME"
NS="skiff$(home_suffix)-node-$NAME"
D="node-$NAME" # the prefix of its daemons' pid and log files
kubectl_() { "$BIN/skiffctl" --kubeconfig "$KC" --request-timeout 10s "$@"; }

# Where make up keeps its node's state; the node's goes beside it.
if [ ! -f "$SKIFF_HOME/run/layout.env" ]; then
	[ "$ACTION" = up ] || [ -e "$ND/node.env" ] || exit 0
	[ "$ACTION" = down ] || die "no cluster in $SKIFF_HOME: run make up first"
fi
CTRD_STATE=/run/skiff-containerd CGROUP_ROOT=/skiff NETNS_DIR=/run/skiff-netns
if [ -f "$SKIFF_HOME/run/layout.env" ]; then
	# shellcheck source=/dev/null
	. "$SKIFF_HOME/run/layout.env"
fi
N_CTRD_STATE="$CTRD_STATE-node-$NAME"
N_CTRD_SOCK="$N_CTRD_STATE/containerd.sock"
N_NETNS_DIR="$NETNS_DIR-node-$NAME"
N_CGROUP_ROOT="${CGROUP_ROOT%/}-node-$NAME"

# The node's address: 198.51.100.N, N kept in node.env, else the lowest
# one no other node of this cluster has.
node_index() {
	if [ -f "$ND/node.env" ]; then
		sed -n 's/^INDEX=//p' "$ND/node.env"
		return
	fi
	local i
	for i in $(seq 2 254); do
		grep -qx "INDEX=$i" "$SKIFF_HOME"/nodes/*/node.env 2>/dev/null || { echo "$i"; return; }
	done
	die "no address left in $NET_PREFIX.0/24 for another node"
}

down() {
	# As make down: each step is tried, whatever the one before did.
	set +e
	log "removing node $NAME"
	# The kubelet first: it would register its Node again.
	stop "$D-kubelet"
	remove_containers "$N_CTRD_SOCK"
	stop "$D-containerd"
	kill_shims "$N_CTRD_SOCK"
	local f
	for f in "$SKIFF_HOME/run/$D"-*.pid; do
		[ -e "$f" ] || continue
		stop "$(basename "$f" .pid)"
	done
	remove_pod_netns "$N_NETNS_DIR"
	unmount_under "$ND" "$N_CTRD_STATE"
	rm -rf "$N_CTRD_STATE" "$ND/kubelet/cni/networks" "$ND/kubelet/cni/cache"
	remove_cgroups "${N_CGROUP_ROOT#/}"
	# The namespace: its end of the veth pair, its routes and iptables go
	# with it.
	if [ -e "/run/netns/$NS" ]; then
		ip netns delete "$NS" && log "removed network namespace $NS"
	fi
	local index="" pod_cidr=""
	if [ -f "$ND/node.env" ]; then
		index="$(sed -n 's/^INDEX=//p' "$ND/node.env")"
		pod_cidr="$(sed -n 's/^POD_CIDR=//p' "$ND/node.env")"
	fi
	[ -n "$index" ] && ip link delete "skiff-n$index" 2>/dev/null
	# The Node object, so the cluster is as it was: its pods are deleted
	# with it (the pod garbage collector), and make up's kubelet drops its
	# route to the node's pod CIDR (removed here too, as it may be
	# stopped next).
	if [ -f "$KC" ] && kubectl_ get --raw /readyz >/dev/null 2>&1; then
		kubectl_ delete node "$NAME" --ignore-not-found --wait=false >/dev/null && log "deleted Node $NAME"
	fi
	if [ -n "$pod_cidr" ] && [ -n "$index" ]; then
		ip route delete "$pod_cidr" via "$NET_PREFIX.$index" 2>/dev/null && log "removed the route to $pod_cidr"
	fi
	rm -f "$ND/node.env"
	# The bridge goes with the last node.
	if ! compgen -G "$SKIFF_HOME/nodes/*/node.env" >/dev/null && ip link show "$BRIDGE" >/dev/null 2>&1; then
		ip link delete "$BRIDGE" && log "removed bridge $BRIDGE"
	fi
	log "node $NAME removed"
}

if [ "$ACTION" = down ]; then
	down
	exit 0
fi

# --- up ---
START=$SECONDS
[ -f "$KC" ] && kubectl_ get --raw /readyz >/dev/null 2>&1 || die "no cluster answers with $KC: run make up first"
for b in skiff-kubelet skiff-proxy skiffctl; do
	[ -x "$BIN/$b" ] || die "$BIN/$b is missing: run make build (or make up)"
done
command -v kubectl >/dev/null || die "needs kubectl (to approve the node's serving certificate)"
running proxy || die "make up's proxy is not running (make up first)"
tr '\0' ' ' <"/proc/$(cat "$SKIFF_HOME/run/proxy.pid")/cmdline" | grep -q -- "$BRIDGE" ||
	die "make up's proxy does not let cluster traffic out by $BRIDGE (it was started by an older make up): make down, then make up"
mkdir -p "$SKIFF_HOME/logs" "$SKIFF_HOME/run" "$ND"
ensure_packages socat
HOST_NODE="$(hostname)"
HOST_IP="$(kubectl_ get node "$HOST_NODE" -o 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')"
[ -n "$HOST_IP" ] || die "make up's node $HOST_NODE has no InternalIP"
INDEX="$(node_index)"
NODE_IP="$NET_PREFIX.$INDEX"
VETH="skiff-n$INDEX"
echo "INDEX=$INDEX" >"$ND/node.env"
# From here on a failure removes what was made.
trap 'rc=$?; if [ $rc -ne 0 ]; then echo "$LOG_TAG: failed; removing the node (logs stay in $SKIFF_HOME/logs)" >&2; down >&2 || true; fi' EXIT

# 1. The network.
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
	ip link add "$BRIDGE" type bridge
	ip link set "$BRIDGE" addrgenmode none
	ip addr add "$NET_PREFIX.1/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	log "bridge $BRIDGE ($NET_PREFIX.1/24)"
fi
[ -e "/run/netns/$NS" ] || ip netns add "$NS"
if ! ip link show "$VETH" >/dev/null 2>&1; then
	ip link add "$VETH" type veth peer name eth0 netns "$NS"
	ip link set "$VETH" addrgenmode none
	ip link set "$VETH" master "$BRIDGE" up
	# Hairpin: a frame may leave by the port it came in by. The machine's
	# br_netfilter (the pods' bridge needs it) DNATs frames on this bridge
	# too, and a NodePort of make up's node answered by a pod on this node
	# (asked from this node) goes back out this node's port; without
	# hairpin the bridge drops it. A switch between machines does not
	# rewrite frames, so there is no such path there.
	ip link set "$VETH" type bridge_slave hairpin on
	ip -n "$NS" link set eth0 addrgenmode none
	ip -n "$NS" addr add "$NODE_IP/24" dev eth0
	ip -n "$NS" link set eth0 up
	ip -n "$NS" link set lo up
	# make up's node (API server, cluster DNS, its pods' gateway) on the link.
	ip -n "$NS" route add "$HOST_IP/32" dev eth0 scope link
fi
IN_NS=(nsenter "--net=/run/netns/$NS")
log "network namespace $NS, $NODE_IP on $BRIDGE"

# 2. The machine's loopback registries on the node's loopback.
for p in $LOOPBACK_PORTS; do
	start "$D-lo-$p" socat "UNIX-LISTEN:$ND/lo-$p.sock,fork,unlink-early" "TCP:127.0.0.1:$p"
	start "$D-nslo-$p" "${IN_NS[@]}" socat "TCP-LISTEN:$p,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$ND/lo-$p.sock"
done

# 3. containerd, its own root, state and socket.
mkdir -p "$ND/containerd"
containerd_config "$ND/containerd/config.toml" "$ND/containerd/root" "$N_CTRD_STATE" "$N_CTRD_SOCK"
start "$D-containerd" "${IN_NS[@]}" containerd --config "$ND/containerd/config.toml"
wait_for "$D-containerd" 30 "containerd does not answer on $N_CTRD_SOCK" ctr --address "$N_CTRD_SOCK" version

# 4. The join: a bootstrap token, the printed command run on the node.
SERVER="https://$HOST_IP:$PORT"
if [ ! -s "$ND/kubelet.kubeconfig" ]; then
	read -r -a JOIN < <(kubectl_ token create --ttl 1h --server "$SERVER" --description "make node-up $NAME")
	[ "${JOIN[1]:-}" = join ] || die "skiffctl token create printed: ${JOIN[*]}"
	"${IN_NS[@]}" "$BIN/skiffctl" "${JOIN[@]:1}" --bootstrap-kubeconfig "$ND/bootstrap-kubelet.kubeconfig" \
		--ca-file "$ND/pki/ca.crt" --discovery-timeout 60s >>"$SKIFF_HOME/logs/$D-join.log" 2>&1 ||
		die "skiffctl join failed" "$SKIFF_HOME/logs/$D-join.log"
	log "joined with a bootstrap token (skiffctl join $SERVER)"
fi

# 5. The proxy (before the kubelet, as on make up's node): the service range
# routed to its skiff-svc0, pod egress masqueraded, the egress guard.
sed "s#^\( *server:\).*#\1 $SERVER#" "$SKIFF_HOME/proxy.kubeconfig" >"$ND/proxy.kubeconfig"
start "$D-proxy" "${IN_NS[@]}" "$BIN/skiff-proxy" \
	--kubeconfig "$ND/proxy.kubeconfig" \
	--hostname-override "$NAME" \
	--cluster-cidr "$CLUSTER_CIDR" \
	--service-cluster-ip-range "$SERVICE_CIDR" \
	--egress-guard-allow-interfaces skiff0,eth0 \
	--healthz-bind-address "$NODE_IP:10256" \
	--metrics-bind-address 127.0.0.1:10249
wait_for "$D-proxy" 30 "the proxy is not healthy" curl -fsS "http://$NODE_IP:10256/healthz"

# 6. The kubelet, with make up's kubelet's mirrors and eviction thresholds.
REG_FILE="$SKIFF_HOME/registries.yaml"
[ -f "$REG_FILE" ] || REG_FILE="$SKIFF_HOME/run/registries.yaml"
disable_default=(--disable-default-registry-endpoint)
[ "${SKIFF_DISABLE_DEFAULT_REGISTRY_ENDPOINT:-true}" = false ] && disable_default=()
kubelet_pid="$(cat "$SKIFF_HOME/run/kubelet.pid" 2>/dev/null || true)"
EVICTION_HARD="$(tr '\0' '\n' <"/proc/$kubelet_pid/cmdline" 2>/dev/null | sed -n '/^--eviction-hard$/{n;p}')"
mkdir -p "$N_NETNS_DIR"
start "$D-kubelet" "${IN_NS[@]}" "$BIN/skiff-kubelet" \
	--bootstrap-kubeconfig "$ND/bootstrap-kubelet.kubeconfig" \
	--kubeconfig "$ND/kubelet.kubeconfig" \
	--cert-dir "$ND/pki" \
	--rotate-certificates \
	--rotate-server-certificates \
	--client-ca-file "$ND/pki/ca.crt" \
	--node-name "$NAME" \
	--node-ip "$NODE_IP" \
	--address "$NODE_IP" \
	--port 10250 \
	--containerd-address "$N_CTRD_SOCK" \
	--containerd-root "$ND/containerd/root" \
	--root-dir "$ND/kubelet" \
	--local-path-dir "$ND/storage" \
	--netns-dir "$N_NETNS_DIR" \
	--cgroup-root "$N_CGROUP_ROOT" \
	--bridge-name skiff0 \
	--cluster-cidr "$CLUSTER_CIDR" \
	--cluster-dns "$DNS_IP" \
	--cluster-domain cluster.local \
	--registries-config "$REG_FILE" \
	${EVICTION_HARD:+--eviction-hard "$EVICTION_HARD"} \
	"${disable_default[@]}"

node_ready() {
	[ "$(kubectl_ get node "$NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
wait_for "$D-kubelet" 90 "node $NAME is not Ready" node_ready
POD_CIDR="$(kubectl_ get node "$NAME" -o 'jsonpath={.spec.podCIDR}')"
printf 'INDEX=%s\nPOD_CIDR=%s\n' "$INDEX" "$POD_CIDR" >"$ND/node.env"

# Its serving certificate: the kubelet asks for it (signer
# kubernetes.io/kubelet-serving) once its Node has its address; as upstream,
# nothing approves those by itself, so node-up does, for this node only.
approve_serving() {
	local csrs
	csrs="$(kubectl_ get csr -o jsonpath='{range .items[?(@.spec.signerName=="kubernetes.io/kubelet-serving")]}{.metadata.name} {.spec.username} {.status.conditions[*].type}{"\n"}{end}' |
		awk -v u="system:node:$NAME" '$2 == u && NF == 2 { print $1 }')"
	# shellcheck disable=SC2086
	[ -z "$csrs" ] || kubectl --kubeconfig "$KC" certificate approve $csrs >/dev/null
	curl -fsS --max-time 2 --cacert "$SKIFF_HOME/pki/ca.crt" "https://$NODE_IP:10250/healthz"
}
wait_for "$D-kubelet" 60 "the kubelet's serving certificate (https://$NODE_IP:10250)" approve_serving
# make up's kubelet routes the node's pod CIDR to it.
host_route() { ip route show "$POD_CIDR" | grep -q "via $NODE_IP "; }
wait_for kubelet 40 "make up's kubelet routes $POD_CIDR via $NODE_IP" host_route
trap - EXIT
log "node $NAME Ready in $((SECONDS - START))s: $NODE_IP, pod CIDR $POD_CIDR; make node-down NODE=$NAME removes it"
