#!/usr/bin/env bash
# Bring up a one-node skiff cluster on this machine from nothing. Safe to run
# twice: certificates are kept, a running daemon is left running.
# State: $SKIFF_HOME (default .skiff/ at the repository root).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
BIN="$ROOT/bin"
PORT="${SKIFF_APISERVER_PORT:-6443}"
mkdir -p "$SKIFF_HOME/logs" "$SKIFF_HOME/run"

log() { echo "skiff up: $*"; }

# Certificates and kubeconfigs (kept when already there).
"$BIN/skiffctl" certs --dir "$SKIFF_HOME/pki" --kubeconfig-dir "$SKIFF_HOME" \
	--server "https://127.0.0.1:$PORT" >"$SKIFF_HOME/logs/certs.log"
log "certificates in $SKIFF_HOME/pki"

running() {
	local pidfile="$SKIFF_HOME/run/$1.pid"
	[ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

start() {
	local name="$1"
	shift
	if running "$name"; then
		log "$name already running (pid $(cat "$SKIFF_HOME/run/$name.pid"))"
		return
	fi
	nohup "$@" >>"$SKIFF_HOME/logs/$name.log" 2>&1 &
	echo $! >"$SKIFF_HOME/run/$name.pid"
	log "$name started (pid $!), log $SKIFF_HOME/logs/$name.log"
}

start apiserver "$BIN/skiff-apiserver" \
	--secure-port "$PORT" \
	--tls-cert-file "$SKIFF_HOME/pki/apiserver.crt" \
	--tls-private-key-file "$SKIFF_HOME/pki/apiserver.key" \
	--client-ca-file "$SKIFF_HOME/pki/ca.crt" \
	--etcd-data-dir "$SKIFF_HOME/etcd" \
	--authorization-mode Node,RBAC \
	--service-account-signing-key-file "$SKIFF_HOME/pki/sa.key" \
	--service-account-key-file "$SKIFF_HOME/pki/sa.pub" \
	--audit-log-path "$SKIFF_HOME/logs/audit.log" \
	--kubelet-client-certificate "$SKIFF_HOME/pki/apiserver-kubelet-client.crt" \
	--kubelet-client-key "$SKIFF_HOME/pki/apiserver-kubelet-client.key" \
	--kubelet-certificate-authority "$SKIFF_HOME/pki/ca.crt" \
	--proxy-client-cert-file "$SKIFF_HOME/pki/front-proxy-client.crt" \
	--proxy-client-key-file "$SKIFF_HOME/pki/front-proxy-client.key" \
	--requestheader-client-ca-file "$SKIFF_HOME/pki/front-proxy-ca.crt" \
	--requestheader-allowed-names front-proxy-client

# Wait for readiness with a deadline.
deadline=$((SECONDS + 60))
until curl -fsS --cacert "$SKIFF_HOME/pki/ca.crt" "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do
	if ! running apiserver; then
		echo "skiff up: the API server exited; see $SKIFF_HOME/logs/apiserver.log" >&2
		tail -20 "$SKIFF_HOME/logs/apiserver.log" >&2
		exit 1
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "skiff up: the API server is not ready after 60s; see $SKIFF_HOME/logs/apiserver.log" >&2
		exit 1
	fi
	sleep 0.2
done
log "API server ready at https://127.0.0.1:$PORT"

# wait_healthy NAME PORT: poll the daemon's /healthz with a deadline.
wait_healthy() {
	local name="$1" port="$2"
	local deadline=$((SECONDS + 30))
	until curl -fsSk "https://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
		if ! running "$name"; then
			echo "skiff up: $name exited; see $SKIFF_HOME/logs/$name.log" >&2
			tail -20 "$SKIFF_HOME/logs/$name.log" >&2
			exit 1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "skiff up: $name is not healthy after 30s; see $SKIFF_HOME/logs/$name.log" >&2
			exit 1
		fi
		sleep 0.2
	done
	log "$name healthy"
}

start controller-manager "$BIN/skiff-controller-manager" \
	--kubeconfig "$SKIFF_HOME/controller-manager.kubeconfig" \
	--bind-address 127.0.0.1 \
	--secure-port 10257 \
	--client-ca-file "$SKIFF_HOME/pki/ca.crt" \
	--root-ca-file "$SKIFF_HOME/pki/ca.crt" \
	--cluster-cidr 10.244.0.0/16
wait_healthy controller-manager 10257

start scheduler "$BIN/skiff-scheduler" \
	--kubeconfig "$SKIFF_HOME/scheduler.kubeconfig" \
	--bind-address 127.0.0.1 \
	--secure-port 10259 \
	--client-ca-file "$SKIFF_HOME/pki/ca.crt"
wait_healthy scheduler 10259
# The node: containerd (its own root, state and socket, so it never touches
# a system containerd) and the kubelet.
NODE="$(hostname)"
CTRD="$SKIFF_HOME/containerd"
CTRD_SOCK="/run/skiff-containerd/containerd.sock"
mkdir -p "$CTRD"
cat >"$CTRD/config.toml" <<CONF
version = 2
root = "$CTRD/root"
state = "/run/skiff-containerd"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CTRD_SOCK"
CONF
start containerd containerd --config "$CTRD/config.toml"
deadline=$((SECONDS + 30))
until ctr --address "$CTRD_SOCK" version >/dev/null 2>&1; do
	if ! running containerd; then
		echo "skiff up: containerd exited; see $SKIFF_HOME/logs/containerd.log" >&2
		tail -20 "$SKIFF_HOME/logs/containerd.log" >&2
		exit 1
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "skiff up: containerd does not answer after 30s; see $SKIFF_HOME/logs/containerd.log" >&2
		exit 1
	fi
	sleep 0.2
done
log "containerd ready at $CTRD_SOCK"

# Traffic safety (DESIGN.md, "Network"): the whole cluster CIDR ends in a
# blackhole under the more specific per-node routes, so no packet for a pod
# address leaves the machine.
ip route replace blackhole 10.244.0.0/16

# The proxy before the kubelet: at its start it routes the service range to
# its local interface skiff-svc0 (no packet for a ClusterIP leaves the
# machine, rules or not), masquerades pod egress and installs the egress
# guard (chain SKIFF-EGRESS-GUARD: forwarded pod traffic may leave only by
# the pods' bridge), all before the first pod starts. Its /healthz answers
# once that is in place.
start proxy "$BIN/skiff-proxy" \
	--kubeconfig "$SKIFF_HOME/proxy.kubeconfig" \
	--hostname-override "$NODE" \
	--cluster-cidr 10.244.0.0/16 \
	--service-cluster-ip-range 10.96.0.0/16 \
	--egress-guard-allow-interfaces skiff0
deadline=$((SECONDS + 30))
until curl -fsS "http://127.0.0.1:10256/healthz" >/dev/null 2>&1; do
	if ! running proxy; then
		echo "skiff up: the proxy exited; see $SKIFF_HOME/logs/proxy.log" >&2
		tail -20 "$SKIFF_HOME/logs/proxy.log" >&2
		exit 1
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "skiff up: the proxy is not healthy after 30s; see $SKIFF_HOME/logs/proxy.log" >&2
		exit 1
	fi
	sleep 0.2
done
log "proxy healthy; service range 10.96.0.0/16 routed to skiff-svc0, egress guard in place"

# Cluster DNS (docs/dns.md): CoreDNS with its kubernetes plugin, as
# system:skiff-dns, on port 53 of the node. It keeps the kube-dns Service at
# 10.96.0.10 (the tenth address of the service range) and an EndpointSlice
# naming this node's address, which the proxy DNATs the Service to. The
# node's address is the kubelet's (its first global IPv4 address).
NODE_IP="$(ip -4 -o addr show scope global up | awk '$2 != "skiff0" && $2 != "skiff-svc0" { split($4, a, "/"); print a[1]; exit }')"
if [ -z "$NODE_IP" ]; then
	echo "skiff up: no global IPv4 address for the node" >&2
	exit 1
fi
start dns "$BIN/skiff-dns" \
	--kubeconfig "$SKIFF_HOME/dns.kubeconfig" \
	--hostname-override "$NODE" \
	--advertise-address "$NODE_IP" \
	--cluster-ip 10.96.0.10 \
	--cluster-domain cluster.local \
	--health-bind-address 127.0.0.1:8080 \
	--ready-bind-address 127.0.0.1:8181 \
	--metrics-bind-address :9153
deadline=$((SECONDS + 30))
until curl -fsS "http://127.0.0.1:8181/ready" >/dev/null 2>&1; do
	if ! running dns; then
		echo "skiff up: skiff-dns exited; see $SKIFF_HOME/logs/dns.log" >&2
		tail -20 "$SKIFF_HOME/logs/dns.log" >&2
		exit 1
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "skiff up: skiff-dns is not ready after 30s; see $SKIFF_HOME/logs/dns.log" >&2
		exit 1
	fi
	sleep 0.2
done
log "skiff-dns ready; kube-dns Service at 10.96.0.10 -> $NODE_IP:53"

registries=()
if [ -f "$SKIFF_HOME/registries.yaml" ]; then
	registries=(--registries-config "$SKIFF_HOME/registries.yaml")
fi
start kubelet "$BIN/skiff-kubelet" \
	--kubeconfig "$SKIFF_HOME/kubelet-$NODE.kubeconfig" \
	--node-name "$NODE" \
	--containerd-address "$CTRD_SOCK" \
	--containerd-root "$CTRD/root" \
	--root-dir "$SKIFF_HOME/kubelet" \
	--local-path-dir "$SKIFF_HOME/storage" \
	--bridge-name skiff0 \
	--address 0.0.0.0 \
	--port 10250 \
	--client-ca-file "$SKIFF_HOME/pki/ca.crt" \
	--tls-cert-file "$SKIFF_HOME/pki/kubelet-$NODE.crt" \
	--tls-private-key-file "$SKIFF_HOME/pki/kubelet-$NODE.key" \
	--cluster-dns 10.96.0.10 \
	--cluster-domain cluster.local \
	"${registries[@]}"
wait_healthy kubelet 10250

deadline=$((SECONDS + 60))
until KUBECONFIG="$SKIFF_HOME/admin.kubeconfig" kubectl get node "$NODE" \
	-o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; do
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "skiff up: node $NODE is not Ready after 60s; see $SKIFF_HOME/logs/kubelet.log" >&2
		exit 1
	fi
	sleep 0.5
done
log "node $NODE Ready"
log "kubeconfig: export KUBECONFIG=$SKIFF_HOME/admin.kubeconfig"
