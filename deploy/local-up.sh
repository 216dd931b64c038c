#!/usr/bin/env bash
# make up: a one-node skiff cluster on this machine, from nothing. As root it
# installs the Debian packages it lacks, builds bin/, writes the certificates,
# starts each daemon as its own process with its own log, and returns when
# the node is Ready and the cluster's own Services answer.
#
# Safe to run twice: certificates and etcd data are kept, a running daemon is
# left running. On a failure it says why and which log to read, and stops
# everything it started (deploy/local-down.sh).
#
# Environment:
#   SKIFF_HOME             the cluster's state (default .skiff/ at the
#                          repository root); another SKIFF_HOME is another
#                          cluster, whose node state (containerd, pod network
#                          namespaces, cgroups) gets paths of its own, so two
#                          can run in two network namespaces of one machine
#   SKIFF_APISERVER_PORT   the API server's port (default 6443)
#   SKIFF_SKIP_BUILD=1     use bin/ as it is
#   SKIFF_DISABLE_DEFAULT_REGISTRY_ENDPOINT=false
#                          let the kubelet fall back to a registry itself
#                          when its mirrors lack an image (default: never)
#   SKIFF_EVICTION_HARD    the kubelet's --eviction-hard (default: upstream's
#                          memory threshold, the disk ones as free space)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
BIN="$ROOT/bin"
PORT="${SKIFF_APISERVER_PORT:-6443}"
# The examples name their images on this registry.
REGISTRY="127.0.0.1:5000"
SERVICE_CIDR=10.96.0.0/16
CLUSTER_CIDR=10.244.0.0/16
DNS_IP=10.96.0.10
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
START=$SECONDS

LOG_TAG="skiff up"
# log, die, ensure_packages, running, start, wait_for.
# shellcheck source=deploy/local-lib.sh
. "$ROOT/deploy/local-lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	die "must run as root: the kubelet makes network namespaces, bridges, cgroups and mounts, and the proxy writes iptables rules (try: sudo make up)"
fi
mkdir -p "$SKIFF_HOME/logs" "$SKIFF_HOME/run"
SKIFF_HOME="$(cd "$SKIFF_HOME" && pwd)"

# Node state outside $SKIFF_HOME: the default cluster keeps the historical
# names; another SKIFF_HOME gets names of its own.
suffix="$(home_suffix)"
CTRD_STATE="/run/skiff-containerd$suffix"
CTRD_SOCK="$CTRD_STATE/containerd.sock"
NETNS_DIR="/run/skiff-netns$suffix"
CGROUP_ROOT="/skiff$suffix"

# 1. Packages. Each missing one is installed with apt-get; one that cannot be
# is named with the reason.
ensure_packages iproute2 iptables util-linux mount curl ca-certificates containerd runc \
	containernetworking-plugins docker-registry skopeo busybox-static

# 2. Build.
if [ "${SKIFF_SKIP_BUILD:-}" != 1 ]; then
	command -v go >/dev/null || die "needs Go 1.24 or newer to build bin/ (https://go.dev/dl/, in /usr/local/go; Debian 12's golang is too old)"
	log "building bin/ (log $SKIFF_HOME/logs/build.log)"
	make -C "$ROOT" --no-print-directory build >"$SKIFF_HOME/logs/build.log" 2>&1 ||
		die "the build failed" "$SKIFF_HOME/logs/build.log"
fi
BUILT=$SECONDS
for b in skiff-apiserver skiff-controller-manager skiff-scheduler skiff-kubelet skiff-log-driver skiff-pause skiff-proxy skiff-dns skiffctl; do
	[ -x "$BIN/$b" ] || die "$BIN/$b is missing: run without SKIFF_SKIP_BUILD=1"
done

# 3. Ports: every daemon that is not running yet needs its ports free.
NODE="$(hostname)"
NODE_IP="$(ip -4 -o addr show scope global up | awk '$2 != "skiff0" && $2 != "skiff-svc0" && $2 != "skiff-nodes0" { split($4, a, "/"); print a[1]; exit }')"
[ -n "$NODE_IP" ] || die "no global IPv4 address on this machine for the node (ip -4 addr show scope global up shows none)"
declare -A PORTS=(
	[apiserver]="tcp:$PORT" [controller-manager]="tcp:10257" [scheduler]="tcp:10259"
	[registry]="tcp:${REGISTRY##*:}" [proxy]="tcp:10256 tcp:10249"
	[dns]="tcp:53 udp:53 tcp:8080 tcp:8181 tcp:9153" [kubelet]="tcp:10250"
)
for d in apiserver controller-manager scheduler registry proxy dns kubelet; do
	running "$d" && continue
	for pp in ${PORTS[$d]}; do
		proto="${pp%%:*}" port="${pp#*:}"
		if [ "$proto" = tcp ]; then held="$(ss -Hltnp "sport = :$port" 2>/dev/null)"; else held="$(ss -Hlunp "sport = :$port" 2>/dev/null)"; fi
		if [ -n "$held" ]; then
			who="$(grep -o 'users:(([^)]*))' <<<"$held" | head -1)"
			die "port $port/$proto, which $d needs, is taken${who:+ by $who}; stop that program (or, for the API server, set SKIFF_APISERVER_PORT) and run make up again"
		fi
	done
done

# The CNI portmap plugin's chains (hostPort pods) outlive the pods; make down
# removes them only if they were not on the machine before the first make up.
CNI_HOSTPORT_CHAINS_BEFORE=""
if [ -f "$SKIFF_HOME/run/layout.env" ]; then
	CNI_HOSTPORT_CHAINS_BEFORE="$(sed -n 's/^CNI_HOSTPORT_CHAINS_BEFORE=//p' "$SKIFF_HOME/run/layout.env")"
fi
if [ -z "$CNI_HOSTPORT_CHAINS_BEFORE" ]; then
	if iptables -w -t nat -S CNI-HOSTPORT-DNAT >/dev/null 2>&1; then CNI_HOSTPORT_CHAINS_BEFORE=yes; else CNI_HOSTPORT_CHAINS_BEFORE=no; fi
fi

# From here on a failure stops everything, so nothing is left half-started.
cat >"$SKIFF_HOME/run/layout.env" <<ENV
# Written by deploy/local-up.sh: where this cluster's node state lives.
CTRD_STATE=$CTRD_STATE
CTRD_SOCK=$CTRD_SOCK
NETNS_DIR=$NETNS_DIR
CGROUP_ROOT=$CGROUP_ROOT
CNI_HOSTPORT_CHAINS_BEFORE=$CNI_HOSTPORT_CHAINS_BEFORE
ENV
on_exit() {
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "skiff up: failed; stopping what was started (deploy/local-down.sh); the logs stay in $SKIFF_HOME/logs" >&2
		SKIFF_HOME="$SKIFF_HOME" bash "$ROOT/deploy/local-down.sh" >&2 || true
	fi
}
trap on_exit EXIT

# 4. Certificates and kubeconfigs (kept when already there and right).
"$BIN/skiffctl" certs --dir "$SKIFF_HOME/pki" --kubeconfig-dir "$SKIFF_HOME" \
	--server "https://127.0.0.1:$PORT" --node "$NODE" --node-ip "$NODE=$NODE_IP" \
	>"$SKIFF_HOME/logs/certs.log" 2>&1 || die "writing the certificates failed" "$SKIFF_HOME/logs/certs.log"
log "certificates in $SKIFF_HOME/pki"

# 5. The control plane.
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
	--requestheader-allowed-names front-proxy-client \
	--enable-bootstrap-token-auth \
	--anonymous-auth
wait_for apiserver 60 "the API server is not ready" \
	curl -fsS --cacert "$SKIFF_HOME/pki/ca.crt" "https://127.0.0.1:$PORT/readyz"
log "API server ready at https://127.0.0.1:$PORT"

start controller-manager "$BIN/skiff-controller-manager" \
	--kubeconfig "$SKIFF_HOME/controller-manager.kubeconfig" \
	--bind-address 127.0.0.1 \
	--secure-port 10257 \
	--client-ca-file "$SKIFF_HOME/pki/ca.crt" \
	--root-ca-file "$SKIFF_HOME/pki/ca.crt" \
	--cluster-cidr "$CLUSTER_CIDR" \
	--cluster-signing-cert-file "$SKIFF_HOME/pki/ca.crt" \
	--cluster-signing-key-file "$SKIFF_HOME/pki/ca.key" \
	--controllers '*,bootstrapsigner,tokencleaner'
wait_for controller-manager 30 "the controller manager is not healthy" curl -fsSk https://127.0.0.1:10257/healthz

start scheduler "$BIN/skiff-scheduler" \
	--kubeconfig "$SKIFF_HOME/scheduler.kubeconfig" \
	--bind-address 127.0.0.1 \
	--secure-port 10259 \
	--client-ca-file "$SKIFF_HOME/pki/ca.crt"
wait_for scheduler 30 "the scheduler is not healthy" curl -fsSk https://127.0.0.1:10259/healthz
log "controller manager and scheduler healthy"

# 6. containerd: its own root, state and socket, so it never touches a
# containerd of the machine's; started unless one answers on that socket.
CTRD="$SKIFF_HOME/containerd"
mkdir -p "$CTRD"
containerd_config "$CTRD/config.toml" "$CTRD/root" "$CTRD_STATE" "$CTRD_SOCK"
if running containerd || ! ctr --address "$CTRD_SOCK" version >/dev/null 2>&1; then
	start containerd containerd --config "$CTRD/config.toml"
	wait_for containerd 30 "containerd does not answer on $CTRD_SOCK" ctr --address "$CTRD_SOCK" version
else
	log "containerd already answers on $CTRD_SOCK"
fi

# 7. The registry on loopback, with the images the examples use, built from
# Debian's static busybox: library/busybox, and examples/web:v1 and v2 (a
# web server that answers with its version and its pod's name).
mkdir -p "$SKIFF_HOME/registry"
cat >"$SKIFF_HOME/registry/config.yml" <<CONF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $SKIFF_HOME/registry/data
http:
  addr: $REGISTRY
CONF
start registry docker-registry serve "$SKIFF_HOME/registry/config.yml"
wait_for registry 30 "the registry does not answer on $REGISTRY" curl -fsS "http://$REGISTRY/v2/"

# oci_image DIR TAG ENV ENTRYPOINT: an OCI layout in DIR with one layer (the
# rootfs in $IMG/rootfs) and this config, tagged TAG.
IMG="$SKIFF_HOME/images"
rm -rf "$IMG" && mkdir -p "$IMG/rootfs/bin" "$IMG/rootfs/tmp" "$IMG/rootfs/etc"
cp /bin/busybox "$IMG/rootfs/bin/busybox"
chmod 1777 "$IMG/rootfs/tmp"
for a in sh httpd echo mkdir sleep cat true false env ls wget id touch grep head tail hostname nslookup ps kill date; do
	ln -s busybox "$IMG/rootfs/bin/$a"
done
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$IMG/rootfs" -cf "$IMG/layer.tar" .
gzip -n -c "$IMG/layer.tar" >"$IMG/layer.tar.gz"
diff_id="sha256:$(sha256sum "$IMG/layer.tar" | cut -d' ' -f1)"
blob() { # blob FILE DIR: store FILE as a blob of DIR, print its digest and size
	local d
	d="$(sha256sum "$1" | cut -d' ' -f1)"
	mkdir -p "$2/blobs/sha256"
	cp "$1" "$2/blobs/sha256/$d"
	echo "sha256:$d $(stat -c %s "$1")"
}
oci_image() {
	local dir="$1" tag="$2" env="$3" entrypoint="$4" layer cfg man
	mkdir -p "$dir"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
	read -r ldig lsize < <(blob "$IMG/layer.tar.gz" "$dir")
	printf '{"architecture":"amd64","os":"linux","config":{"Env":[%s],"Entrypoint":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
		"$env" "$entrypoint" "$diff_id" >"$dir/config.json"
	read -r cdig csize < <(blob "$dir/config.json" "$dir")
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"%s","size":%s}]}' \
		"$cdig" "$csize" "$ldig" "$lsize" >"$dir/manifest.json"
	read -r mdig msize < <(blob "$dir/manifest.json" "$dir")
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
		"$mdig" "$msize" "$tag" >"$dir/index.json"
}
push() { # push LAYOUT TAG REPO:TAG
	skopeo copy --quiet --dest-tls-verify=false "oci:$1:$2" "docker://$REGISTRY/$3" >>"$SKIFF_HOME/logs/images.log" 2>&1 ||
		die "pushing $REGISTRY/$3 failed" "$SKIFF_HOME/logs/images.log"
}
PATH_ENV='"PATH=/bin"'
oci_image "$IMG/busybox" latest "$PATH_ENV" '["sh"]'
push "$IMG/busybox" latest library/busybox:latest
WEB='["sh","-c","mkdir -p /tmp/www && echo \"$VERSION $(hostname)\" >/tmp/www/index.html && exec httpd -f -p 80 -h /tmp/www"]'
for v in v1 v2; do
	oci_image "$IMG/web-$v" "$v" "$PATH_ENV,\"VERSION=$v\"" "$WEB"
	push "$IMG/web-$v" "$v" "examples/web:$v"
done
log "registry at http://$REGISTRY with library/busybox:latest, examples/web:v1 and examples/web:v2"

# 8. Traffic safety (DESIGN.md, "Network"): the whole cluster CIDR ends in a
# blackhole under the more specific per-node routes, so no packet for a pod
# address leaves the machine.
ip route replace blackhole "$CLUSTER_CIDR"

# The proxy before the kubelet: at its start it routes the service range to
# its local interface skiff-svc0, masquerades pod egress and installs the
# egress guard, all before the first pod starts; /healthz answers once that
# is in place. Cluster traffic may leave by the pod bridge and by
# skiff-nodes0, the bridge to the nodes of make node-up (local-node.sh).
start proxy "$BIN/skiff-proxy" \
	--kubeconfig "$SKIFF_HOME/proxy.kubeconfig" \
	--hostname-override "$NODE" \
	--cluster-cidr "$CLUSTER_CIDR" \
	--service-cluster-ip-range "$SERVICE_CIDR" \
	--egress-guard-allow-interfaces skiff0,skiff-nodes0
wait_for proxy 30 "the proxy is not healthy" curl -fsS http://127.0.0.1:10256/healthz
log "proxy healthy; service range $SERVICE_CIDR routed to skiff-svc0, egress guard in place"

# Cluster DNS (docs/dns.md): the kube-dns Service at $DNS_IP and an
# EndpointSlice naming this node's address, port 53.
start dns "$BIN/skiff-dns" \
	--kubeconfig "$SKIFF_HOME/dns.kubeconfig" \
	--hostname-override "$NODE" \
	--advertise-address "$NODE_IP" \
	--cluster-ip "$DNS_IP" \
	--cluster-domain cluster.local \
	--health-bind-address 127.0.0.1:8080 \
	--ready-bind-address 127.0.0.1:8181 \
	--metrics-bind-address :9153
wait_for dns 30 "skiff-dns is not ready" curl -fsS http://127.0.0.1:8181/ready
log "skiff-dns ready; kube-dns Service at $DNS_IP -> $NODE_IP:53"

# 9. The kubelet. Registry mirrors: $SKIFF_HOME/registries.yaml when it
# exists (k3s's format), else make up's own: the public registries mirrored
# to the loopback registry. Either way a mirrored registry is never asked
# itself (--disable-default-registry-endpoint).
REG_FILE="$SKIFF_HOME/registries.yaml"
if [ ! -f "$REG_FILE" ]; then
	REG_FILE="$SKIFF_HOME/run/registries.yaml"
	{
		echo "# Written by make up: the public registries, mirrored to its registry on $REGISTRY."
		echo "# Put a registries.yaml of your own in $SKIFF_HOME to replace it."
		echo "mirrors:"
		for host in docker.io registry.k8s.io gcr.io quay.io ghcr.io; do
			printf '  %s:\n    endpoint:\n      - http://%s\n' "$host" "$REGISTRY"
		done
	} >"$REG_FILE"
fi
disable_default=(--disable-default-registry-endpoint)
[ "${SKIFF_DISABLE_DEFAULT_REGISTRY_ENDPOINT:-true}" = false ] && disable_default=()
# Node-pressure eviction. Upstream's disk thresholds are shares of the
# filesystem (imagefs.available<15%): on a developer's large disk that other
# things mostly fill they refuse every pod with DiskPressure while tens of
# gigabytes are free (kind turns them off for the same reason). make up keeps
# upstream's memory and inode thresholds and asks for 2Gi free on each disk.
EVICTION_HARD="${SKIFF_EVICTION_HARD:-memory.available<100Mi,nodefs.available<2Gi,imagefs.available<2Gi,nodefs.inodesFree<5%,imagefs.inodesFree<5%}"
mkdir -p "$NETNS_DIR"
start kubelet "$BIN/skiff-kubelet" \
	--kubeconfig "$SKIFF_HOME/kubelet-$NODE.kubeconfig" \
	--node-name "$NODE" \
	--node-ip "$NODE_IP" \
	--containerd-address "$CTRD_SOCK" \
	--containerd-root "$CTRD/root" \
	--root-dir "$SKIFF_HOME/kubelet" \
	--local-path-dir "$SKIFF_HOME/storage" \
	--netns-dir "$NETNS_DIR" \
	--cgroup-root "$CGROUP_ROOT" \
	--bridge-name skiff0 \
	--address 0.0.0.0 \
	--port 10250 \
	--client-ca-file "$SKIFF_HOME/pki/ca.crt" \
	--tls-cert-file "$SKIFF_HOME/pki/kubelet-$NODE.crt" \
	--tls-private-key-file "$SKIFF_HOME/pki/kubelet-$NODE.key" \
	--cluster-dns "$DNS_IP" \
	--cluster-domain cluster.local \
	--registries-config "$REG_FILE" \
	--eviction-hard "$EVICTION_HARD" \
	"${disable_default[@]}"
wait_for kubelet 30 "the kubelet is not healthy" curl -fsSk https://127.0.0.1:10250/healthz

KC="$SKIFF_HOME/admin.kubeconfig"
node_ready() {
	[ "$("$BIN/skiffctl" --kubeconfig "$KC" --request-timeout 5s get node "$NODE" \
		-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
wait_for kubelet 60 "node $NODE is not Ready" node_ready
log "node $NODE Ready"

# 10. The cluster's own Services, as a pod would use them: the kubernetes
# Service through the proxy's rules, and kube-dns answering a query.
wait_for proxy 30 "the kubernetes Service (https://10.96.0.1) does not answer through the proxy" \
	curl -fsS --max-time 2 --cacert "$SKIFF_HOME/pki/ca.crt" https://10.96.0.1/readyz
dns_answers() {
	busybox nslookup kubernetes.default.svc.cluster.local "$DNS_IP" 2>&1 | grep -q 'Address: *10\.96\.0\.1$'
}
wait_for dns 30 "kube-dns ($DNS_IP) does not answer kubernetes.default.svc.cluster.local" dns_answers
log "Services answer: kubernetes.default (10.96.0.1) through the proxy, kube-dns ($DNS_IP)"

KUBECTL=kubectl
command -v kubectl >/dev/null || KUBECTL="$BIN/skiffctl"
cat <<NEXT
skiff up: the cluster is up in $((SECONDS - START))s ($((BUILT - START))s packages and build, $((SECONDS - BUILT))s certificates, daemons and checks). Next:
    export KUBECONFIG=$KC
    $KUBECTL get nodes
    $KUBECTL apply -f $ROOT/examples/      # the README's walk-through
    make down                              # stops it all
  logs: $SKIFF_HOME/logs/<daemon>.log
NEXT
