#!/usr/bin/env bash
# Regenerates generated/zz_generated.openapi.go: the OpenAPI definitions of
# the API types skiff serves, made by kube-openapi's openapi-gen.
#
# openapi-gen and its gengo dependency are built in a scratch module in a
# temporary directory, pinned to the k8s.io/api, k8s.io/apimachinery and
# k8s.io/kube-openapi versions the apiserver module builds with, so
# apiserver/go.mod and go.sum stay untouched.
#
# Run it from anywhere (or `go generate ./pkg/openapi/` in apiserver/). It
# needs the Go toolchain and the Go module proxy.
#
# The packages below must match schemeBuilders in scheme.go: a kind is served
# only if its Go type has a definition here and is registered there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
apiserver="$(cd "${here}/../.." && pwd)"

packages=(
	k8s.io/api/core/v1
	k8s.io/api/admissionregistration/v1
	k8s.io/api/apps/v1
	k8s.io/api/authentication/v1
	k8s.io/api/authorization/v1
	k8s.io/api/autoscaling/v1
	k8s.io/api/autoscaling/v2
	k8s.io/api/coordination/v1
	k8s.io/api/discovery/v1
	k8s.io/api/policy/v1
	k8s.io/api/rbac/v1
	k8s.io/api/batch/v1
	k8s.io/api/certificates/v1
	k8s.io/api/events/v1
	k8s.io/api/flowcontrol/v1
	k8s.io/api/networking/v1
	k8s.io/api/node/v1
	k8s.io/api/scheduling/v1
	k8s.io/api/storage/v1
	k8s.io/metrics/pkg/apis/metrics/v1beta1
	k8s.io/apimachinery/pkg/apis/meta/v1
	k8s.io/apimachinery/pkg/runtime
	k8s.io/apimachinery/pkg/util/intstr
	k8s.io/apimachinery/pkg/api/resource
	k8s.io/apimachinery/pkg/version
)

version() {
	(cd "${apiserver}" && go list -m -f '{{.Version}}' "$1")
}

scratch="$(mktemp -d)"
trap 'rm -rf "${scratch}"' EXIT

cat >"${scratch}/go.mod" <<EOF
module skiff.dev/openapigen

go 1.24.0

require (
	k8s.io/api $(version k8s.io/api)
	k8s.io/apimachinery $(version k8s.io/apimachinery)
	k8s.io/kube-openapi $(version k8s.io/kube-openapi)
	k8s.io/metrics $(version k8s.io/metrics)
)
EOF
cat >"${scratch}/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/api/core/v1"
	_ "k8s.io/kube-openapi/cmd/openapi-gen"
	_ "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)
EOF
: >"${scratch}/boilerplate.go.txt"

goflags="$(go env GOFLAGS)"

cd "${scratch}"
GOWORK=off GOFLAGS="${goflags} -mod=mod" go mod tidy
GOWORK=off GOFLAGS="${goflags} -mod=mod" go build -o "${scratch}/openapi-gen" k8s.io/kube-openapi/cmd/openapi-gen

# gengo at this version predates go/types aliases; parse them the old way.
GOWORK=off GOFLAGS="${goflags} -mod=readonly" GODEBUG=gotypesalias=0 "${scratch}/openapi-gen" \
	--output-dir "${here}/generated" \
	--output-pkg skiff.dev/apiserver/pkg/openapi/generated \
	--output-file zz_generated.openapi.go \
	--go-header-file "${scratch}/boilerplate.go.txt" \
	--report-filename "${scratch}/api-violations.report" \
	"${packages[@]}"

# The tree must still build with the apiserver module's own dependencies,
# without touching its go.mod or go.sum.
cd "${apiserver}"
GOFLAGS="${goflags} -mod=readonly" go build ./pkg/openapi/...
echo "generated ${here}/generated/zz_generated.openapi.go"
