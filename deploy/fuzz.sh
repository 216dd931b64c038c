#!/usr/bin/env bash
# Run every fuzz target of the workspace for a while, one after the other
# (`make fuzz FUZZTIME=30s` calls this with the duration). Targets are found
# by their declaration, `func FuzzXxx(f *testing.F)` in a _test.go file, so a
# new one is picked up without editing this script.
#
#   deploy/fuzz.sh [FUZZTIME]      default 30s, any -fuzztime value (30s, 5m, 10000x)
#   FUZZ_FILTER=Patch deploy/fuzz.sh 60s   only targets whose name matches
#
# A target that finds a failure writes the input under
# <package>/testdata/fuzz/<FuzzName>/ (so plain `go test` replays it from then
# on) and this script exits non-zero after running the others.
#
# The endpoint targets start a real API server with embedded etcd in each
# fuzzing worker, so they run with one worker by default (FUZZ_PARALLEL), and
# minimizing an input is bounded by a number of runs (FUZZ_MINIMIZE): go's
# default of 60s would be spent mostly minimizing inputs that only look new
# because the server's background goroutines moved the coverage counters, and
# a time bound makes go kill the worker (and its server) when it expires.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GO="${GO:-go}"
FUZZTIME="${1:-30s}"
PARALLEL="${FUZZ_PARALLEL:-1}"
MINIMIZE="${FUZZ_MINIMIZE:-100x}"
FILTER="${FUZZ_FILTER:-}"
MODULES=(apiserver component-base ctl controller-manager kubelet proxy scheduler)

# "<module-relative package dir> <FuzzName>" for every target, sorted.
targets=()
for m in "${MODULES[@]}"; do
	[ -d "$ROOT/$m" ] || continue
	while IFS= read -r line; do
		file="${line%%:*}"
		name="$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"${line#*:}")"
		targets+=("$(dirname "${file#"$ROOT"/}") $name")
	done < <(grep -rE --include='*_test.go' --exclude-dir=testdata --exclude-dir=vendor \
		'^func Fuzz[A-Za-z0-9_]*\([a-zA-Z_]+ \*testing\.F\)' "$ROOT/$m" | sort)
done

if [ "${#targets[@]}" -eq 0 ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi

# The go command kills fuzzing workers without letting them tear down the API
# server they started; remove the state directories of workers that are gone.
clean_stale() {
	local d pid
	for d in "${TMPDIR:-/tmp}"/skiff-fuzz-*-*; do
		[ -d "$d" ] || continue
		pid="${d##*/skiff-fuzz-}"
		pid="${pid%%-*}"
		case "$pid" in '' | *[!0-9]*) continue ;; esac
		[ -d "/proc/$pid" ] || rm -rf "$d"
	done
}

failed=()
ran=0
for t in "${targets[@]}"; do
	dir="${t% *}"
	name="${t#* }"
	if [ -n "$FILTER" ] && ! grep -qE -- "$FILTER" <<<"$name"; then
		continue
	fi
	ran=$((ran + 1))
	echo "== $name ($dir) for $FUZZTIME"
	start=$SECONDS
	if (cd "$ROOT/$dir" && "$GO" test -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" \
		-fuzzminimizetime="$MINIMIZE" -parallel="$PARALLEL" .); then
		echo "== $name: ok ($((SECONDS - start))s)"
	else
		echo "== $name: FAILED ($((SECONDS - start))s)"
		failed+=("$dir $name")
	fi
	clean_stale
done

if [ "$ran" -eq 0 ]; then
	echo "fuzz: no target matches FUZZ_FILTER=$FILTER" >&2
	exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz: ${#failed[@]} of $ran targets failed:"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "fuzz: all $ran targets ran for $FUZZTIME without a failure"
