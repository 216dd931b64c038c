#!/usr/bin/env bash
# The busybox of the conformance images, built from Debian's source package.
#
#   busybox.sh OUT   build a static busybox at OUT (nothing to do when OUT
#                    exists and passes the check below)
#
# Debian's busybox-static (1.35) drops, when its ash starts, the environment
# variables whose names are not shell identifiers: Debian reverts upstream's
# commit 9c143ce ("ash: pass on badly-named variables") and guards it behind
# FEATURE_DI_ENV_HACK, which only its installer's build turns on. Upstream's
# busybox image (e2e-test-images/busybox:1.36.1-1) passes them on, and the
# envFrom tests look for them ("data-1", "p-data-1") in the output of
# `sh -c env`. Debian's static configuration also makes ash run its own
# applets before looking in PATH (FEATURE_PREFER_APPLETS, FEATURE_SH_STANDALONE),
# where upstream's image finds commands in PATH: the Services tests' `nc` must
# be the image's /usr/bin/nc (OpenBSD's), not busybox's applet. So this builds
# the same source package (the version of the installed busybox-static,
# through `apt-get source` with the deb-src twin of the machine's own apt
# sources) with Debian's static configuration, that option on and those two
# off: ash as /bin/sh, as upstream's image has it.
set -euo pipefail
OUT="${1:?usage: busybox.sh OUT}"
WORK="$(dirname "$OUT")/busybox-src"

log() { echo "conformance busybox: $*"; }

# check BINARY: ash passes a badly-named variable on to a command, and finds
# a command in PATH before its own applet of that name.
check() {
	[ -x "$1" ] || return 1
	env data-1=passed "$1" sh -c env 2>/dev/null | grep -qx 'data-1=passed' || return 1
	local dir
	dir="$(mktemp -d)"
	printf '#!%s sh\necho from-path\n' "$(readlink -f "$1")" >"$dir/nc"
	chmod +x "$dir/nc"
	local out
	out="$(env PATH="$dir:/usr/bin:/bin" "$1" sh -c 'nc' 2>/dev/null || true)"
	rm -rf "$dir"
	[ "$out" = from-path ]
}

if check "$OUT"; then
	exit 0
fi
for tool in apt-get dpkg-source make gcc; do
	if ! command -v "$tool" >/dev/null; then
		echo "conformance busybox: needs $tool (Debian packages apt, dpkg-dev, make, gcc)" >&2
		exit 1
	fi
done
version="$(dpkg-query -W -f='${source:Version}' busybox-static 2>/dev/null || true)"
if [ -z "$version" ]; then
	echo "conformance busybox: needs Debian's busybox-static installed (its version names the source package)" >&2
	exit 1
fi

rm -rf "$WORK"
mkdir -p "$WORK/lists/partial" "$WORK/parts" "$WORK/src"
# The deb-src twin of every apt source of this machine, in both formats.
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && { sed 's/^Types:.*/Types: deb-src/' "$f"; echo; }
done >"$WORK/parts/deb-src.sources"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && sed -n 's/^deb \(.*\)/deb-src \1/p' "$f"
done >"$WORK/deb-src.list"
apt_opts=(
	-o "Dir::Etc::SourceList=$WORK/deb-src.list"
	-o "Dir::Etc::SourceParts=$WORK/parts"
	-o "Dir::State::Lists=$WORK/lists"
	-o "APT::Sandbox::User=root"
)
log "fetching Debian's busybox $version source"
apt-get "${apt_opts[@]}" -q update >"$WORK/apt.log" 2>&1 ||
	{ tail -5 "$WORK/apt.log" >&2; echo "conformance busybox: apt-get update of the deb-src sources failed" >&2; exit 1; }
(cd "$WORK/src" && apt-get "${apt_opts[@]}" -q source --download-only "busybox=$version") >>"$WORK/apt.log" 2>&1 ||
	{ tail -5 "$WORK/apt.log" >&2; echo "conformance busybox: apt-get source busybox=$version failed" >&2; exit 1; }
dsc="$(ls "$WORK"/src/busybox_*.dsc)"
dpkg-source -x "$dsc" "$WORK/src/busybox" >>"$WORK/apt.log" 2>&1

cd "$WORK/src/busybox"
cp debian/config/pkg/static .config
grep -q '^# CONFIG_FEATURE_DI_ENV_HACK is not set$' .config ||
	{ echo "conformance busybox: Debian's static config has no FEATURE_DI_ENV_HACK line to turn on" >&2; exit 1; }
sed -i -e 's/^# CONFIG_FEATURE_DI_ENV_HACK is not set$/CONFIG_FEATURE_DI_ENV_HACK=y/' \
	-e 's/^CONFIG_FEATURE_PREFER_APPLETS=y$/# CONFIG_FEATURE_PREFER_APPLETS is not set/' \
	-e 's/^CONFIG_FEATURE_SH_STANDALONE=y$/# CONFIG_FEATURE_SH_STANDALONE is not set/' .config
log "building (Debian's static configuration, FEATURE_DI_ENV_HACK on, FEATURE_PREFER_APPLETS and FEATURE_SH_STANDALONE off)"
{ yes '' || true; } | make oldconfig >"$WORK/build.log" 2>&1
nice -n 19 make -j"$(nproc)" busybox >>"$WORK/build.log" 2>&1 ||
	{ tail -20 "$WORK/build.log" >&2; echo "conformance busybox: the build failed; see $WORK/build.log" >&2; exit 1; }
if ! check ./busybox; then
	echo "conformance busybox: the built busybox's ash drops badly-named variables or runs its applets before PATH's commands" >&2
	exit 1
fi
install -m 0755 ./busybox "$OUT"
log "built $OUT ($("$OUT" 2>&1 | head -1))"
rm -rf "$WORK"
