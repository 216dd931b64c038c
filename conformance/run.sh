#!/usr/bin/env bash
# make conformance: upstream's conformance suite against the running skiff
# cluster, as sonobuoy's e2e plugin runs it: the parallel tests on ginkgo's
# parallel nodes, then the [Serial] ones alone. Then docs/conformance.md
# gets the results.
#
# Environment:
#   FOCUS               regexp of the [Conformance] tests to run (default
#                       '\[Conformance\]': all 411); anything else is a
#                       subset, and the page says so.
#   SKIP                regexp of tests to leave out, besides [Serial] in the
#                       parallel phase (default: none).
#   CONFORMANCE_NODES   ginkgo's parallel nodes (default 4).
#   KUBE_VERSION        upstream release (default v1.32.4).
#   SKIFF_HOME          the cluster's state (default .skiff); its
#                       admin.kubeconfig must answer (make up).
# Results: conformance/_output/results/{parallel,serial}/junit_01.xml and
# e2e.log, nodes.json and version.json.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
KUBE_VERSION="${KUBE_VERSION:-v1.32.4}"
OUT="${CONFORMANCE_OUT:-$ROOT/conformance/_output}"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
KC="$SKIFF_HOME/admin.kubeconfig"
DEFAULT_FOCUS='\[Conformance\]'
FOCUS="${FOCUS:-$DEFAULT_FOCUS}"
SKIP="${SKIP:-}"
NODES="${CONFORMANCE_NODES:-4}"
RESULTS="$OUT/results"
export KUBE_VERSION CONFORMANCE_OUT="$OUT" SKIFF_HOME

log() { echo "conformance: $*"; }

# 1. The cluster must be up.
if [ ! -f "$KC" ] || ! kubectl --kubeconfig "$KC" --request-timeout 10s get --raw /readyz >/dev/null 2>&1; then
	echo "conformance: no cluster answers with $KC; run 'make up' first" >&2
	exit 1
fi
log "cluster answers with $KC"

# 2. e2e.test, ginkgo and the test images' programs (cached).
bash "$ROOT/conformance/build.sh"

# 3. The images in the registry on loopback (stopped again at the end).
stop_registry() {
	if [ -z "${CONFORMANCE_KEEP_REGISTRY:-}" ]; then
		bash "$ROOT/conformance/images.sh" stop
	fi
}
trap stop_registry EXIT
bash "$ROOT/conformance/images.sh"
export KUBE_TEST_REPO_LIST="$OUT/repo-list.yaml"
kubelet_pid="$(cat "$SKIFF_HOME/run/kubelet.pid" 2>/dev/null || true)"
if [ -n "$kubelet_pid" ] && ! tr '\0' ' ' <"/proc/$kubelet_pid/cmdline" 2>/dev/null | grep -q -- '--registries-config'; then
	log "note: the kubelet runs without $SKIFF_HOME/registries.yaml (written after its start);" \
		"the suite's images name the loopback registry directly, so this matters only for images named by their public registry"
fi

# 4. The run.
rm -rf "$RESULTS"
mkdir -p "$RESULTS/parallel" "$RESULTS/serial"
kubectl --kubeconfig "$KC" get nodes -o json >"$RESULTS/nodes.json"
kubectl --kubeconfig "$KC" version -o json >"$RESULTS/version.json" 2>/dev/null || true
kube_src="$(cd /tmp && GOFLAGS= go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"

# phase NAME GINKGO-FLAGS...: one ginkgo run, its JUnit report and log in
# $RESULTS/NAME.
phase() {
	local name="$1"
	shift
	log "$name phase: ginkgo $*"
	local rc=0
	"$OUT/bin/ginkgo" --no-color --timeout=24h "$@" "$OUT/bin/e2e.test" -- \
		--kubeconfig="$KC" \
		--provider=skeleton \
		--repo-root="$kube_src" \
		--report-dir="$RESULTS/$name" \
		--disable-log-dump \
		>"$RESULTS/$name/e2e.log" 2>&1 || rc=$?
	tail -5 "$RESULTS/$name/e2e.log" | sed "s/^/conformance: $name: /"
	return "$rc"
}

# The parallel tests: the [Conformance] ones among FOCUS, without
# [Serial]; then the [Serial] ones among them, one at a time. (The
# Conformance and Serial labels of upstream's specs match their [Conformance]
# and [Serial] tags: 411 and 26 in v1.32.4.)
skip='\[Serial\]'
[ -n "$SKIP" ] && skip="$skip|$SKIP"
failed=0
phase parallel --nodes="$NODES" --focus="$FOCUS" --skip="$skip" --label-filter='Conformance' || failed=1
serial_skip=()
[ -n "$SKIP" ] && serial_skip=(--skip="$SKIP")
phase serial --nodes=1 --focus="$FOCUS" "${serial_skip[@]}" --label-filter='Conformance && Serial' || failed=1

# 5. The page.
( cd "$ROOT/conformance" && GOWORK=off go build -o "$OUT/bin/summary" ./cmd/summary )
"$OUT/bin/summary" -results "$RESULTS" -doc "$ROOT/docs/conformance.md" \
	-causes "$ROOT/conformance/causes.json" -focus "$FOCUS" -nodes "$NODES" \
	-kube-version "$KUBE_VERSION"
log "JUnit reports and logs in $RESULTS"
exit "$failed"
