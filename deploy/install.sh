#!/usr/bin/env bash
# Install skiff on this machine for the roles given, from a built tree
# (make build): the binaries in /usr/local/bin, the systemd units in
# /etc/systemd/system and the flags files in /etc/skiff, as
# docs/operations.md describes. A flags file that exists is kept (it holds
# the site's edits); binaries and units are replaced. --root DIR installs
# under DIR instead of /, which the tests use. It starts nothing: run
# `systemctl daemon-reload` and enable the units afterwards.
#
#   deploy/install.sh [--root DIR] ROLE...
#   ROLE: etcd | control-plane | worker
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
root=/

usage() {
	echo "usage: $0 [--root DIR] etcd|control-plane|worker ..." >&2
	exit 2
}

roles=()
while [ $# -gt 0 ]; do
	case "$1" in
	--root) [ $# -ge 2 ] || usage; root="$2"; shift 2 ;;
	--root=*) root="${1#--root=}"; shift ;;
	etcd | control-plane | worker) roles+=("$1"); shift ;;
	*) echo "$0: unknown argument $1" >&2; usage ;;
	esac
done
[ "${#roles[@]}" -gt 0 ] || usage
if [ "$root" = / ] && [ "$(id -u)" != 0 ]; then
	echo "$0: installing into / needs root" >&2
	exit 1
fi

bins=()
units=()
configs=()
for role in "${roles[@]}"; do
	case "$role" in
	etcd)
		# Debian's etcd-server provides /usr/bin/etcd; this unit replaces
		# the package's.
		if [ ! -x "$root/usr/bin/etcd" ]; then
			echo "$0: $root/usr/bin/etcd is missing: apt-get install etcd-server first" >&2
			exit 1
		fi
		units+=(etcd)
		configs+=(etcd.env)
		;;
	control-plane)
		bins+=(skiff-apiserver skiff-controller-manager skiff-scheduler skiffctl)
		units+=(skiff-apiserver skiff-controller-manager skiff-scheduler)
		configs+=(apiserver.yaml controller-manager.yaml scheduler.yaml)
		;;
	worker)
		# skiff-log-driver lies next to skiff-kubelet: the kubelet hands it
		# to containerd's shims as the containers' log writer; skiff-pause
		# too: the pause program of pods' sandbox containers.
		bins+=(skiff-kubelet skiff-log-driver skiff-pause skiff-proxy skiff-dns skiffctl)
		units+=(skiff-kubelet skiff-proxy skiff-dns)
		configs+=(kubelet.yaml proxy.yaml dns.yaml)
		;;
	esac
done

for b in "${bins[@]}"; do
	if [ ! -x "$repo/bin/$b" ]; then
		echo "$0: $repo/bin/$b is missing: run make build first" >&2
		exit 1
	fi
done

install -d -m 0755 "$root/usr/local/bin" "$root/etc/systemd/system"
install -d -m 0755 "$root/etc/skiff"
install -d -m 0700 "$root/etc/skiff/pki"
for b in $(printf '%s\n' "${bins[@]}" | sort -u); do
	install -m 0755 "$repo/bin/$b" "$root/usr/local/bin/$b"
	echo "installed /usr/local/bin/$b"
done
for u in "${units[@]}"; do
	install -m 0644 "$here/systemd/$u.service" "$root/etc/systemd/system/$u.service"
	echo "installed /etc/systemd/system/$u.service"
done
for c in "${configs[@]}"; do
	if [ -e "$root/etc/skiff/$c" ]; then
		echo "kept      /etc/skiff/$c"
		continue
	fi
	install -m 0644 "$here/config/$c" "$root/etc/skiff/$c"
	if grep -q EDIT "$here/config/$c"; then
		echo "installed /etc/skiff/$c (edit the lines marked EDIT)"
	else
		echo "installed /etc/skiff/$c"
	fi
done
