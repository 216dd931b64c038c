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
#   CONFORMANCE_RUN     a name to keep this run under: its results go to
#                       conformance/_output/runs/NAME (replacing an earlier
#                       run of that name), and the page is written from every
#                       run kept there, FOCUS being the union of theirs; of a
#                       test that ran in several, the latest run's outcome
#                       counts. So subsets run one after the other (one SIG at
#                       a time, a test run again alone) add up on the page.
#                       Remove conformance/_output/runs to start afresh.
# Results: conformance/_output/results/{parallel,serial}/junit_01.xml and
# e2e.log, nodes.json and version.json (runs/NAME/... with CONFORMANCE_RUN).
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
RUN_NAME="${CONFORMANCE_RUN:-}"
if [ -n "$RUN_NAME" ]; then
	case "$RUN_NAME" in
	*/* | .*)
		echo "conformance: CONFORMANCE_RUN=$RUN_NAME: a name without '/', not starting with '.'" >&2
		exit 1
		;;
	esac
	RESULTS="$OUT/runs/$RUN_NAME"
fi
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
printf '%s\n' "$FOCUS" >"$RESULTS/focus"
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
page_results="$RESULTS" page_focus="$FOCUS" page_runs=""
if [ -n "$RUN_NAME" ]; then
	# Every kept run: the cluster's shape of this one, the union of the
	# focuses (one run's alone when there is one).
	page_results="$OUT/runs"
	cp "$RESULTS/nodes.json" "$RESULTS/version.json" "$page_results/"
	mapfile -t focuses < <(cat "$page_results"/*/focus | sort -u)
	if [ "${#focuses[@]}" -gt 1 ]; then
		page_focus="$(printf '(%s)|' "${focuses[@]}")"
		page_focus="${page_focus%|}"
	fi
	page_runs="$(cd "$page_results" && ls -d */ | tr -d / | paste -sd,)"
	log "the page counts the runs kept in $page_results: ${page_runs//,/ }"
fi
"$OUT/bin/summary" -results "$page_results" -doc "$ROOT/docs/conformance.md" \
	-causes "$ROOT/conformance/causes.json" -focus "$page_focus" -runs "$page_runs" -nodes "$NODES" \
	-kube-version "$KUBE_VERSION"
log "JUnit reports and logs in $RESULTS"
exit "$failed"
