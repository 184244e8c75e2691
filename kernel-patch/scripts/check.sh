#!/bin/sh
# check.sh - apply the series to a fresh Linux 6.1 tree and compile what it
# touches with warnings as errors.  Run through "make -C kernel-patch check".
. "$(dirname "$0")/common.sh"

start=$(date +%s)
fail() { echo "FAIL: check: $*  ($(( $(date +%s) - start ))s)"; exit 1; }

need_pkgs make gcc perl bc flex bison libssl-dev libelf-dev xz-utils patch || fail "cannot install build dependencies"
find_source || fail "no 6.1 source"

tree=$BUILD/check/linux
mkdir -p "$BUILD/check"
unpack_patched "$tree" || fail "series does not apply cleanly to $(basename "$SRC_TAR")"
cd "$tree"

# Kernel coding style of the series (no Signed-off-by: the sender adds theirs).
log "scripts/checkpatch.pl"
for p in $PATCHES; do
	perl scripts/checkpatch.pl --no-tree --quiet --ignore MISSING_SIGN_OFF "$p" ||
		fail "checkpatch: $(basename "$p")"
done

# The .c files the series changes: each must compile with -Werror.
objs=$(cat $PATCHES | sed -n 's|^+++ b/\(.*\)\.c$|\1.o|p' | grep -v '^tools/' | sort -u)
log "make defconfig"
make -s defconfig >/dev/null || fail "make defconfig"
log "make KCFLAGS=-Werror $objs"
make -s -j"$JOBS" KCFLAGS=-Werror $objs || fail "compiling $objs"
for o in $objs; do [ -s "$o" ] || fail "$o not built"; done

# The UAPI header: tools/ copy in sync, installs, and gives the ABI of
# common/perf_abi.h (record type and attr bit).
cmp -s include/uapi/linux/perf_event.h tools/include/uapi/linux/perf_event.h ||
	fail "tools/include/uapi/linux/perf_event.h not in sync"
log "make headers"
make -s headers >/dev/null || fail "make headers"
type=$(awk '$2 == "PERF_RECORD_MMAP3" { print $3 }' "$TOP/common/perf_abi.h")
bit=$(awk '$2 == "PERF_ATTR_FLAG_MMAP3_BIT" { print $3 }' "$TOP/common/perf_abi.h")
[ -n "$type" ] && [ -n "$bit" ] || fail "cannot read the ABI from common/perf_abi.h"
cat > "$BUILD/check/uapi-check.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>

_Static_assert(PERF_RECORD_MMAP3 == EXPECT_TYPE, "PERF_RECORD_MMAP3");
_Static_assert(PERF_RECORD_MMAP3 == PERF_RECORD_AUX_OUTPUT_HW_ID + 1, "first free type");
_Static_assert(PERF_RECORD_MAX == PERF_RECORD_MMAP3 + 1, "PERF_RECORD_MAX");
_Static_assert(sizeof(struct perf_event_attr) == PERF_ATTR_SIZE_VER7, "attr size");

int main(void)
{
	struct perf_event_attr a;
	uint64_t w;

	memset(&a, 0, sizeof(a));
	a.mmap3 = 1;
	memcpy(&w, (char *)&a + offsetof(struct perf_event_attr, read_format) + 8, 8);
	if (w != 1ULL << EXPECT_BIT)
		return 1;
	memset(&a, 0, sizeof(a));
	a.sigtrap = 1;
	memcpy(&w, (char *)&a + offsetof(struct perf_event_attr, read_format) + 8, 8);
	return w != 1ULL << (EXPECT_BIT - 1);	/* mmap3 is right after sigtrap */
}
EOF
gcc -Wall -Werror -std=gnu11 -I usr/include -DEXPECT_TYPE="$type" -DEXPECT_BIT="$bit" \
	-o "$BUILD/check/uapi-check" "$BUILD/check/uapi-check.c" || fail "UAPI header does not match common/perf_abi.h"
"$BUILD/check/uapi-check" || fail "attr.mmap3 is not bit $bit of the flags word"
log "UAPI: PERF_RECORD_MMAP3 = $type, attr.mmap3 = flags bit $bit, tools/ copy in sync"

echo "PASS: check: $(ls "$HERE"/patches/*.patch | wc -l) patches apply cleanly to $(basename "$SRC_TAR"); $objs built with -Werror (defconfig); UAPI matches common/perf_abi.h; checkpatch clean  ($(( $(date +%s) - start ))s)"
