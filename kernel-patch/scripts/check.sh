#!/bin/sh
# check.sh VERSION - apply patches/VERSION/ to a fresh Debian linux-source
# tree and compile what the series touches with warnings as errors; check
# the UAPI header against common/perf_abi.h.  Run through
# "make -C kernel-patch check [KERNEL=VERSION]".
. "$(dirname "$0")/common.sh"

start=$(date +%s)
fail() { echo "FAIL: check $KV: $*  ($(( $(date +%s) - start ))s)"; exit 1; }

deps check || fail "cannot install build dependencies (scripts/deps.sh check)"
find_source || fail "no $KV source"

tree=$BUILD/check-$KV/linux
mkdir -p "$BUILD/check-$KV"
unpack_patched "$tree" || fail "series does not apply cleanly to $(basename "$SRC_TAR")"
cd "$tree"
version=$(make -s --no-print-directory kernelversion)

# Kernel coding style of the series (no Signed-off-by: the sender adds theirs).
log "scripts/checkpatch.pl"
for p in $PATCHES; do
	perl scripts/checkpatch.pl --no-tree --quiet --ignore MISSING_SIGN_OFF "$p" ||
		fail "checkpatch: $(basename "$p")"
done

# The .c files the series changes: each must compile with -Werror.
objs=$(cat $PATCHES | sed -n 's|^+++ b/\(.*\)\.c$|\1.o|p' | grep -v '^tools/' | sort -u)
log "make defconfig"
make -s --no-print-directory defconfig >/dev/null || fail "make defconfig"
log "make KCFLAGS=-Werror $objs"
make -s --no-print-directory -j"$JOBS" KCFLAGS=-Werror $objs || fail "compiling $objs"
for o in $objs; do [ -s "$o" ] || fail "$o not built"; done

# The tools/ copy of the UAPI header gets exactly the changes of the kernel's
# (6.12's copy is otherwise behind the kernel's: aux_action).
changes() { diff -U0 "$tree.pristine/$1" "$1" | grep '^[-+]' | grep -v '^[-+][-+][-+] '; }
uapi_changes=$(changes include/uapi/linux/perf_event.h || true)
[ -n "$uapi_changes" ] || fail "the series does not change include/uapi/linux/perf_event.h"
[ "$uapi_changes" = "$(changes tools/include/uapi/linux/perf_event.h || true)" ] ||
	fail "tools/include/uapi/linux/perf_event.h does not get the same changes"

# The installed header gives the ABI of common/perf_abi.h.
# perf_event.h installed as make headers installs it (unifdef'd, its
# kernel-only parts gone), alone: the headers it includes (linux/types.h
# and the like) say nothing of perf, and come from the system.  make
# headers installs all 900 of them: a minute of the CI.
log "headers_install perf_event.h"
make -s --no-print-directory scripts_unifdef >/dev/null || fail "make scripts_unifdef"
mkdir -p "$BUILD/check-$KV/uapi/linux"
sh scripts/headers_install.sh include/uapi/linux/perf_event.h \
	"$BUILD/check-$KV/uapi/linux/perf_event.h" || fail "scripts/headers_install.sh perf_event.h"
type=$(awk '$2 == "PERF_RECORD_MMAP3" { print $3 }' "$TOP/common/perf_abi.h")
bit=$(awk '$2 == "PERF_ATTR_FLAG_MMAP3_BIT" { print $3 }' "$TOP/common/perf_abi.h")
[ -n "$type" ] && [ -n "$bit" ] || fail "cannot read the ABI from common/perf_abi.h"
cat > "$BUILD/check-$KV/uapi-check.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>

/* 22 is mainline's PERF_RECORD_CALLCHAIN_DEFERRED (6.19), not in these trees */
_Static_assert(PERF_RECORD_MMAP3 == EXPECT_TYPE, "PERF_RECORD_MMAP3");
_Static_assert(PERF_RECORD_MMAP3 == PERF_RECORD_AUX_OUTPUT_HW_ID + 2, "type after 22");
_Static_assert(PERF_RECORD_MAX == PERF_RECORD_MMAP3 + 1, "PERF_RECORD_MAX");

static uint64_t
flags(const struct perf_event_attr *a)
{
	uint64_t w;

	memcpy(&w, (const char *)a + offsetof(struct perf_event_attr, read_format) + 8, 8);
	return w;
}

int main(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.mmap3 = 1;
	if (flags(&a) != 1ULL << EXPECT_BIT)
		return 1;
	memset(&a, 0, sizeof(a));
	a.sigtrap = 1;				/* bit 37, the last of 6.1 and 6.12 */
	if (flags(&a) != 1ULL << 37)
		return 2;
	memset(&a, 0, sizeof(a));
	a.__reserved_4 = 3;			/* 38, 39: defer_callchain, defer_output */
	if (flags(&a) != 3ULL << 38 || EXPECT_BIT != 40)
		return 3;
	return 0;
}
EOF
gcc -Wall -Werror -std=gnu11 -I "$BUILD/check-$KV/uapi" -DEXPECT_TYPE="$type" -DEXPECT_BIT="$bit" \
	-o "$BUILD/check-$KV/uapi-check" "$BUILD/check-$KV/uapi-check.c" || fail "UAPI header does not match common/perf_abi.h"
"$BUILD/check-$KV/uapi-check" || fail "attr.mmap3 is not bit $bit of the flags word (uapi-check exit $?)"
log "UAPI: PERF_RECORD_MMAP3 = $type, attr.mmap3 = flags bit $bit, tools/ copy changed alike"

rm -rf "$tree" "$tree.pristine"		# keep $BUILD small: a tree is ~1.5 GB
echo "PASS: check $KV: $(echo $PATCHES | wc -w) patches apply cleanly to $(basename "$SRC_TAR") ($version); $objs built with -Werror (defconfig); UAPI matches common/perf_abi.h; checkpatch clean  ($(( $(date +%s) - start ))s)"
