# common.sh - shared by check.sh and qemu-test.sh (sourced, not run).
#
# Usage of the sourcing script: SCRIPT VERSION, VERSION one of $KERNELS.
#
# Environment (set by the Makefile, overridable):
#   BUILD     work directory outside the perfmapd tree (/var/tmp/perfmapd-kernel)
#   JOBS      parallel make jobs (nproc)
#   SRC_TAR   the source tarball (/usr/src/linux-source-VERSION.tar.xz)

set -eu

HERE=$(cd "$(dirname "$0")/.." && pwd)		# kernel-patch/
TOP=$(cd "$HERE/.." && pwd)			# perfmapd checkout
BUILD=${BUILD:-/var/tmp/perfmapd-kernel}
JOBS=${JOBS:-$(nproc)}
KERNELS="6.1 6.12"				# patches/VERSION/ for each

KV=${1:-}
case " $KERNELS " in
*" $KV "*) ;;
*)	echo "usage: $0 VERSION (one of: $KERNELS)" >&2
	exit 2 ;;
esac
SRC_PKG=linux-source-$KV
SRC_TAR=${SRC_TAR:-/usr/src/$SRC_PKG.tar.xz}
PATCHES=$(ls "$HERE/patches/$KV"/*.patch | sort)

case "$BUILD" in
"$TOP"|"$TOP"/*)
	echo "BUILD=$BUILD is inside the perfmapd tree; use a directory outside it" >&2
	exit 2 ;;
esac

log() { printf '[%s] %s: %s\n' "$(date +%H:%M:%S)" "$KV" "$*"; }

# deps TARGET : install what TARGET (check, qemu-test) needs (scripts/deps.sh).
deps() { sh "$HERE/scripts/deps.sh" "$1"; }

# find_source : the source tarball of $KV must be there (scripts/deps.sh).
find_source() {
	[ -f "$SRC_TAR" ] || { echo "no $SRC_TAR (package $SRC_PKG)" >&2; return 1; }
}

patches_sum() { cat $PATCHES | sha256sum | cut -c1-16; }

# The two copies of the UAPI header, as the series leaves them.
UAPI_FILES="include/uapi/linux/perf_event.h tools/include/uapi/linux/perf_event.h"

# unpack_patched DIR : fresh tree in DIR with the series applied; the
# pristine UAPI headers are kept in DIR.pristine/.
# Applies with patch -p1 -F0: no fuzz, no rejects (offsets are fine).
unpack_patched() {
	dir=$1
	rm -rf "$dir" "$dir.tmp" "$dir.pristine"
	mkdir -p "$dir.tmp"
	log "unpacking $(basename "$SRC_TAR")"
	tar -xf "$SRC_TAR" -C "$dir.tmp"
	mv "$dir.tmp/$SRC_PKG" "$dir"
	rmdir "$dir.tmp"
	(cd "$dir" && mkdir -p "$dir.pristine" && cp --parents $UAPI_FILES "$dir.pristine/")
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
