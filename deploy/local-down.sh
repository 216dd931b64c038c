#!/usr/bin/env bash
# Stop what local-up.sh started: today the API server (its embedded etcd
# stops with it) and the scheduler; nothing has been put into the kernel yet.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SKIFF_HOME="${SKIFF_HOME:-$ROOT/.skiff}"
[ -d "$SKIFF_HOME/run" ] || exit 0
for pidfile in "$SKIFF_HOME"/run/*.pid; do
	[ -e "$pidfile" ] || continue
	name="$(basename "$pidfile" .pid)"
	pid="$(cat "$pidfile")"
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
		echo "skiff down: stopped $name (pid $pid)"
	fi
	rm -f "$pidfile"
done
