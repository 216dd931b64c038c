#!/usr/bin/env bash
# The images of the conformance tests, in a registry on loopback.
#
#   images.sh        start the registry (docker-registry on $REGISTRY, storage
#                    in conformance/_output/registry) unless it runs, build and
#                    push the images it lacks (cmd/images), and write
#                    conformance/_output/repo-list.yaml (KUBE_TEST_REPO_LIST)
#                    and the kubelet's mirrors ($SKIFF_HOME/registries.yaml).
#   images.sh stop   stop the registry.
#
# Environment: CONFORMANCE_REGISTRY (default 127.0.0.1:5055), KUBE_VERSION,
# CONFORMANCE_OUT, SKIFF_HOME.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
KUBE_VERSION="${KUBE_VERSION:-v1.32.4}"
OUT="${CONFORMANCE_OUT:-$ROOT/conformance/_output}"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
REGISTRY="${CONFORMANCE_REGISTRY:-127.0.0.1:5055}"
PIDFILE="$OUT/run/registry.pid"
export GOWORK=off CGO_ENABLED=0

log() { echo "conformance images: $*"; }

case "$REGISTRY" in
127.*:* | localhost:*) ;;
*)
	echo "conformance images: CONFORMANCE_REGISTRY=$REGISTRY is not on loopback" >&2
	exit 1
	;;
esac

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

if [ "${1:-}" = stop ]; then
	if running; then
		pid="$(cat "$PIDFILE")"
		kill "$pid"
		deadline=$((SECONDS + 10))
		while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
		log "stopped the registry (pid $pid)"
	fi
	rm -f "$PIDFILE"
	exit 0
fi

for tool in docker-registry skopeo; do
	if ! command -v "$tool" >/dev/null; then
		echo "conformance images: needs $tool (Debian package $tool)" >&2
		exit 1
	fi
done
# The images' busybox: Debian's, built with ash passing on every variable
# (busybox.sh says why).
bash "$ROOT/conformance/busybox.sh" "$OUT/bin/busybox"
# need COMMAND PACKAGE WHY: install a Debian package the images copy from.
need() {
	if ! command -v "$1" >/dev/null; then
		log "installing $2 ($1, $3)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null ||
			log "could not install $2: the images will have no $1 ($3)"
	fi
}
need dig bind9-dnsutils "for the DNS tests' probes"
need nc.openbsd netcat-openbsd "the nc of upstream's agnhost image, for the Services tests"

# The registry.
mkdir -p "$OUT/run" "$OUT/registry" "$OUT/logs"
if ! running; then
	cat >"$OUT/registry/config.yml" <<CONF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $OUT/registry/data
  delete:
    enabled: true
http:
  addr: $REGISTRY
CONF
	nohup docker-registry serve "$OUT/registry/config.yml" >>"$OUT/logs/registry.log" 2>&1 &
	echo $! >"$PIDFILE"
	log "registry started on $REGISTRY (pid $!), log $OUT/logs/registry.log"
fi
deadline=$((SECONDS + 30))
until curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1; do
	if ! running; then
		echo "conformance images: the registry exited; see $OUT/logs/registry.log" >&2
		tail -5 "$OUT/logs/registry.log" >&2
		exit 1
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "conformance images: the registry does not answer on $REGISTRY after 30s" >&2
		exit 1
	fi
	sleep 0.2
done

# The images.
kube_src="$(cd /tmp && GOFLAGS= go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
( cd "$ROOT/conformance" && go build -trimpath -o "$OUT/bin/pause" ./cmd/pause && go build -o "$OUT/bin/images" ./cmd/images )
"$OUT/bin/images" -bin "$OUT/bin" -busybox "$OUT/bin/busybox" -kube-src "$kube_src" -out "$OUT/images" -registry "$REGISTRY" |
	tee "$OUT/logs/images.log"

# A tag pushed again (its content changed) is stale where a node already
# has it: the kubelet pulls IfNotPresent. Those copies go from every node's
# containerd (make up's socket, and make node-up's), so the next pod pulls
# the new one.
for CTRD_SOCK in /run/skiff-containerd/containerd.sock /run/skiff-containerd-node-*/containerd.sock; do
	[ -S "$CTRD_SOCK" ] || continue
	for ref in $(sed -n 's/^images: pushed \([^ ]*\) .*/\1/p' "$OUT/logs/images.log"); do
		for ns in $(ctr --address "$CTRD_SOCK" namespaces list -q 2>/dev/null | grep '^skiff-'); do
			if ctr --address "$CTRD_SOCK" -n "$ns" images rm "$ref" >/dev/null 2>&1; then
				log "removed the node's stale copy of $ref (containerd namespace $ns)"
			fi
		done
	done
done

# KUBE_TEST_REPO_LIST: every registry of test/utils/image/manifest.go on the
# loopback registry, under upstream's paths. The images nobody can build
# here (authenticated ones, the invalid registry's) are simply absent, so
# their pulls fail as the tests that use them expect.
cat >"$OUT/repo-list.yaml" <<YAML
# Written by conformance/images.sh: every registry of upstream's
# test/utils/image/manifest.go, served by the registry on $REGISTRY.
gcAuthenticatedRegistry: $REGISTRY/authenticated-image-pulling
promoterE2eRegistry: $REGISTRY/e2e-test-images
buildImageRegistry: $REGISTRY/build-image
invalidRegistry: $REGISTRY/invalid
gcEtcdRegistry: $REGISTRY
gcRegistry: $REGISTRY
sigStorageRegistry: $REGISTRY/sig-storage
privateRegistry: $REGISTRY/k8s-authenticated-test
dockerLibraryRegistry: $REGISTRY/library
cloudProviderGcpRegistry: $REGISTRY/cloud-provider-gcp
YAML
log "KUBE_TEST_REPO_LIST=$OUT/repo-list.yaml"

# The kubelet's mirrors (k3s's format): the public registries the tests or
# their defaults name, served by the loopback registry under the same
# paths. Written only when the file is absent or ours; the kubelet reads it
# at start.
marker="# Written by conformance/images.sh"
mirrors="$SKIFF_HOME/registries.yaml"
if [ ! -f "$mirrors" ] || head -1 "$mirrors" | grep -qF "$marker"; then
	mkdir -p "$SKIFF_HOME"
	{
		echo "$marker: the conformance images' registries on $REGISTRY."
		echo "mirrors:"
		for host in registry.k8s.io gcr.io docker.io invalid.registry.k8s.io k8s.gcr.io; do
			echo "  $host:"
			echo "    endpoint:"
			echo "      - http://$REGISTRY"
		done
	} >"$mirrors.tmp"
	if ! cmp -s "$mirrors.tmp" "$mirrors"; then
		mv "$mirrors.tmp" "$mirrors"
		log "wrote the kubelet's mirrors in $mirrors (read at the kubelet's start: make down && make up to apply)"
	else
		rm -f "$mirrors.tmp"
	fi
else
	log "$mirrors is not ours; left alone (add mirrors of registry.k8s.io, gcr.io and docker.io to http://$REGISTRY)"
fi
