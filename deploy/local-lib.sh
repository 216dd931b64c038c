# Functions shared by deploy/local-up.sh (make up), local-down.sh (make
# down) and local-node.sh (make node-up, make node-down). Sourced, not run.
# They use SKIFF_HOME (absolute), ROOT, and LOG_TAG ("skiff up", ...): a
# daemon NAME has its pid in $SKIFF_HOME/run/NAME.pid and its log in
# $SKIFF_HOME/logs/NAME.log.

log() { echo "$LOG_TAG: $*"; }

# die CAUSE [LOG]: the cause, the log to read and its last lines.
die() {
	echo "$LOG_TAG: $1" >&2
	if [ -n "${2:-}" ]; then
		echo "$LOG_TAG: see $2; its last lines:" >&2
		tail -15 "$2" 2>/dev/null | sed 's/^/    /' >&2
	fi
	exit 1
}

# home_suffix: "" for the default cluster (.skiff at the repository root),
# else a suffix of its own for the node state outside $SKIFF_HOME.
home_suffix() {
	if [ "$SKIFF_HOME" != "$ROOT/.skiff" ]; then
		printf -- "-%s" "$(printf %s "$SKIFF_HOME" | sha256sum | cut -c1-8)"
	fi
}

# ensure_packages PACKAGE...: each missing Debian package is installed with
# apt-get; one that cannot be is named with the reason.
ensure_packages() {
	local missing=() p
	for p in "$@"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
	done
	[ "${#missing[@]}" -gt 0 ] || return 0
	local apt_log="$SKIFF_HOME/logs/apt.log"
	log "installing ${missing[*]} (apt-get, log $apt_log)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >>"$apt_log" 2>&1 || log "apt-get update failed (see $apt_log); trying the package lists there are"
	for p in "${missing[@]}"; do
		if ! apt-get install -y -q --no-install-recommends "$p" >>"$apt_log" 2>&1; then
			die "cannot install the Debian package $p: $(grep -E '^E: ' "$apt_log" | tail -1)" "$apt_log"
		fi
	done
}

# containerd_config FILE ROOT STATE SOCKET: a containerd of its own (its
# root, state and socket, without CRI), so it never touches a containerd of
# the machine's.
containerd_config() {
	cat >"$1" <<CONF
version = 2
root = "$2"
state = "$3"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$4"
[ttrpc]
  address = "$4.ttrpc"
CONF
}

# running NAME: its process (pid file) runs, and is ours: its command line
# names $SKIFF_HOME.
running() {
	local pidfile="$SKIFF_HOME/run/$1.pid" pid stat
	[ -f "$pidfile" ] || return 1
	pid="$(cat "$pidfile")"
	stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
	# After the command's name: the state (Z: it has exited) and the parent.
	set -- ${stat##*) }
	[ "$1" != Z ] || return 1
	# This shell's own child may not have exec'ed its command yet (its
	# cmdline is still this script's): it is the daemon being started.
	[ "$2" = "$$" ] && return 0
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$SKIFF_HOME"
}

# start NAME COMMAND...: start COMMAND in the background with its log,
# unless NAME already runs.
start() {
	local name="$1"
	shift
	if running "$name"; then
		log "$name already running (pid $(cat "$SKIFF_HOME/run/$name.pid"))"
		return
	fi
	echo "--- $(date -u +%FT%TZ) started by $LOG_TAG" >>"$SKIFF_HOME/logs/$name.log"
	nohup "$@" >>"$SKIFF_HOME/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$SKIFF_HOME/run/$name.pid"
	log "$name started (pid $!), log $SKIFF_HOME/logs/$name.log"
}

# wait_for NAME SECONDS WHAT COMMAND...: run COMMAND until it succeeds; fail
# when NAME exits or at the deadline.
wait_for() {
	local name="$1" secs="$2" what="$3"
	shift 3
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		if [ -n "$name" ] && ! running "$name"; then
			die "$name exited while starting" "$SKIFF_HOME/logs/$name.log"
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			die "$what: not after ${secs}s" "$SKIFF_HOME/logs/${name:-kubelet}.log"
		fi
		sleep 0.2
	done
}

# stop NAME: end the daemon NAME (TERM, then KILL after 10 s) if it is ours
# (a pid of a daemon long gone may be another program's now).
stop() {
	local name="$1"
	local pidfile="$SKIFF_HOME/run/$name.pid"
	[ -e "$pidfile" ] || return 0
	local pid
	pid="$(cat "$pidfile")"
	if running "$name"; then
		kill "$pid" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null && sleep 0.2
		log "stopped $name (pid $pid)"
	fi
	rm -f "$pidfile"
}

# remove_containers SOCKET: kill and delete the containers of every skiff-*
# namespace of the containerd on SOCKET (a stopped kubelet leaves them
# running, for its next start to adopt).
remove_containers() {
	local sock="$1" ns task c
	[ -S "$sock" ] || return 0
	for ns in $(ctr --address "$sock" namespaces list -q 2>/dev/null | grep '^skiff-'); do
		for task in $(ctr --address "$sock" -n "$ns" tasks list -q 2>/dev/null); do
			ctr --address "$sock" -n "$ns" tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
			ctr --address "$sock" -n "$ns" tasks delete -f "$task" >/dev/null 2>&1 || true
		done
		for c in $(ctr --address "$sock" -n "$ns" containers list -q 2>/dev/null); do
			ctr --address "$sock" -n "$ns" containers delete "$c" >/dev/null 2>&1 || true
		done
		log "removed the containers of containerd namespace $ns"
	done
}

# kill_shims SOCKET: shims whose containerd was killed before its tasks were
# removed; they name that containerd's socket.
kill_shims() {
	local p
	for p in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $1( |\$)" 2>/dev/null); do
		kill -9 "$p" 2>/dev/null && log "killed a leftover shim (pid $p)"
	done
}

# remove_pod_netns DIR: the kubelet's pod network namespaces in DIR.
remove_pod_netns() {
	local ns
	for ns in "$1"/*; do
		[ -e "$ns" ] || continue
		umount "$ns" 2>/dev/null || umount -l "$ns" 2>/dev/null
		rm -f "$ns"
	done
	rmdir "$1" 2>/dev/null
	return 0
}

# unmount_under PATH...: every mount at or under one of the PATHs (a
# killed containerd's task root filesystems, the pods' volumes), deepest
# first.
unmount_under() {
	local pat="" p
	for p in "$@"; do pat="$pat${pat:+\\|} $p/[^ ]*\\| $p "; done
	grep -o "$pat" /proc/mounts | sed 's/^ //; s/ $//' | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}

# remove_cgroups TOP...: the cgroup directories TOP (relative to each
# hierarchy) and below, empty once their processes are gone.
remove_cgroups() {
	local h top
	for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
		[ -d "$h" ] || continue
		for top in "${@/#/$h/}"; do
			[ -d "$top" ] || continue
			find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null
		done
	done
	return 0
}
