# common.sh - shared by check.sh and qemu-test.sh (sourced, not run).
#
# Environment (set by the Makefile, overridable):
#   BUILD     work directory outside the perfmapd tree (/var/tmp/perfmapd-kernel)
#   SRC_TAR   the Linux 6.1 source tarball (/usr/src/linux-source-6.1.tar.xz)
#   JOBS      parallel make jobs (nproc)

set -eu

HERE=$(cd "$(dirname "$0")/.." && pwd)		# kernel-patch/
TOP=$(cd "$HERE/.." && pwd)			# perfmapd checkout
BUILD=${BUILD:-/var/tmp/perfmapd-kernel}
SRC_TAR=${SRC_TAR:-/usr/src/linux-source-6.1.tar.xz}
JOBS=${JOBS:-$(nproc)}
PATCHES=$(ls "$HERE"/patches/*.patch | sort)

case "$BUILD" in
"$TOP"|"$TOP"/*)
	echo "BUILD=$BUILD is inside the perfmapd tree; use a directory outside it" >&2
	exit 2 ;;
esac

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# need_pkgs PKG... : apt-get install the packages that are not installed yet.
need_pkgs() {
	missing=
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	log "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q $missing >/dev/null 2>&1 || {
		apt-get update -q >/dev/null 2>&1
		apt-get install -y -q $missing >/dev/null
	}
}

# find_source : make sure $SRC_TAR exists (install linux-source-6.1 if needed).
find_source() {
	if [ ! -f "$SRC_TAR" ]; then
		need_pkgs linux-source-6.1
		[ -f "$SRC_TAR" ] || SRC_TAR=$(ls /usr/src/linux-source-6.1*.tar.* 2>/dev/null | head -1)
	fi
	[ -n "$SRC_TAR" ] && [ -f "$SRC_TAR" ] || { echo "no Linux 6.1 source tarball" >&2; return 1; }
}

patches_sum() { cat $PATCHES | sha256sum | cut -c1-16; }

# unpack_patched DIR : fresh 6.1 tree in DIR with the series applied.
# Applies with patch -p1 -F0: no fuzz, no rejects (offsets are fine).
unpack_patched() {
	dir=$1
	rm -rf "$dir"
	mkdir -p "$dir.tmp"
	log "unpacking $(basename "$SRC_TAR")"
	tar -xf "$SRC_TAR" -C "$dir.tmp"
	mv "$dir.tmp"/linux-source-6.1* "$dir"
	rmdir "$dir.tmp"
	for p in $PATCHES; do
		log "applying $(basename "$p")"
		if ! out=$(cd "$dir" && patch -p1 -F0 -N --batch --no-backup-if-mismatch < "$p" 2>&1); then
			printf '%s\n' "$out"
			echo "patch $(basename "$p") does not apply cleanly" >&2
			return 1
		fi
		if printf '%s\n' "$out" | grep -qiE 'fuzz|reject'; then
			printf '%s\n' "$out"
			echo "patch $(basename "$p") applies only with fuzz" >&2
			return 1
		fi
	done
}
