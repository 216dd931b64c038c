#!/usr/bin/env bash
# Build upstream's conformance binaries from the Go module proxy: e2e.test
# (k8s.io/kubernetes/test/e2e), ginkgo (at the version kubernetes requires),
# and the Go programs of the test images: agnhost
# (k8s.io/kubernetes/test/images/agnhost), nnp
# (k8s.io/kubernetes/test/images/nonewprivs), sample-apiserver
# (k8s.io/sample-apiserver, at the staging tag, as upstream's
# test/images/sample-apiserver image has it) and etcd
# (go.etcd.io/etcd/server/v3 at the version kubernetes requires, the
# etcd image's server). Nothing of upstream's
# source enters the repository: a throwaway module is written under
# conformance/_output/mod (git-ignored) that requires k8s.io/kubernetes and
# pins its staging modules (replaced by ./staging/... in upstream's own
# go.mod) to their v0.<minor>.<patch> tags.
#
# Outputs, kept between runs (a second run with the same version does
# nothing): conformance/_output/bin/{e2e.test,ginkgo,agnhost,nnp,sample-apiserver,etcd}.
#
# Environment: KUBE_VERSION (default v1.32.4), CONFORMANCE_OUT (default
# conformance/_output), NICE (default "nice -n 19": the build is long).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
KUBE_VERSION="${KUBE_VERSION:-v1.32.4}"
OUT="${CONFORMANCE_OUT:-$ROOT/conformance/_output}"
NICE="${NICE:-nice -n 19}"
MOD="$OUT/mod"
BIN="$OUT/bin"
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

log() { echo "conformance build: $*"; }

# built NAME: NAME is in $BIN, built for $KUBE_VERSION.
built() { [ -x "$BIN/$1" ] && [ "$(cat "$BIN/.$1.version" 2>/dev/null)" = "$KUBE_VERSION" ]; }

if built e2e.test && built ginkgo && built agnhost && built nnp && built sample-apiserver && built etcd; then
	log "e2e.test, ginkgo, agnhost, nnp, sample-apiserver and etcd $KUBE_VERSION already in $BIN"
	exit 0
fi

# v1.32.4 -> v0.32.4, the tag of every staging module.
STAGING_VERSION="v0.${KUBE_VERSION#v1.}"

log "downloading k8s.io/kubernetes@$KUBE_VERSION from the module proxy"
dir="$(cd /tmp && GOFLAGS= go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
	echo "conformance build: cannot download k8s.io/kubernetes@$KUBE_VERSION (is the Go module proxy reachable?)" >&2
	exit 1
fi

# The staging modules: every "k8s.io/x => ./staging/src/k8s.io/x" line of
# upstream's go.mod.
mapfile -t staging < <(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/.*#\1#p' "$dir/go.mod")
if [ "${#staging[@]}" -lt 20 ]; then
	echo "conformance build: found only ${#staging[@]} staging modules in $dir/go.mod" >&2
	exit 1
fi
log "${#staging[@]} staging modules pinned to $STAGING_VERSION"
ginkgo_version="$(sed -n 's#^[[:space:]]*github.com/onsi/ginkgo/v2 \(v[^ ]*\).*#\1#p' "$dir/go.mod" | head -1)"
go_version="$(sed -n 's/^go \(.*\)/\1/p' "$dir/go.mod")"

mkdir -p "$MOD" "$BIN"
{
	echo "// Written by conformance/build.sh; throwaway, not part of skiff."
	echo "module skiff.local/conformance-build"
	echo
	echo "go $go_version"
	echo
	echo "require ("
	echo "	k8s.io/kubernetes $KUBE_VERSION"
	echo "	github.com/onsi/ginkgo/v2 $ginkgo_version"
	echo ")"
	echo
	echo "replace ("
	for m in "${staging[@]}"; do
		echo "	$m => $m $STAGING_VERSION"
	done
	echo ")"
} >"$MOD/go.mod"
# The packages built, so that "go build" has them in the module graph.
cat >"$MOD/tools.go" <<GO
//go:build tools

// Package tools names the packages conformance/build.sh builds.
package tools

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/images/agnhost"
	_ "k8s.io/kubernetes/test/images/nonewprivs"
	_ "k8s.io/sample-apiserver"
	_ "go.etcd.io/etcd/server/v3"
)
GO

cd "$MOD"
# build NAME PACKAGE [test]: go build (go test -c with "test") into $BIN,
# unless already built for this version.
build() {
	local name="$1" pkg="$2"
	if built "$name"; then
		log "$name already built"
		return
	fi
	log "building $name from $pkg"
	if [ "${3:-}" = test ]; then
		$NICE go test -c -trimpath -o "$BIN/$name" "$pkg"
	else
		$NICE go build -trimpath -o "$BIN/$name" "$pkg"
	fi
	echo "$KUBE_VERSION" >"$BIN/.$name.version"
}
build ginkgo github.com/onsi/ginkgo/v2/ginkgo
build agnhost k8s.io/kubernetes/test/images/agnhost
build nnp k8s.io/kubernetes/test/images/nonewprivs
build sample-apiserver k8s.io/sample-apiserver
build etcd go.etcd.io/etcd/server/v3
log "e2e.test is long to build: several minutes even on a quiet machine"
build e2e.test k8s.io/kubernetes/test/e2e test
log "done: $BIN/e2e.test, $BIN/ginkgo, $BIN/agnhost, $BIN/nnp, $BIN/sample-apiserver, $BIN/etcd"
