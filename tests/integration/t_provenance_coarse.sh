#!/bin/sh
# Build-ids on a file system whose timestamps are whole seconds (ext4 with
# 128-byte inodes, which mkfs makes for small file systems and old ones
# keep; ext3): `cp v2 PATH` over v1 (same inode, same size) within the
# second v1 was written leaves size, mtime and ctime as they were.  v1's
# build-id, read while v1 ran, must not be given to v2's mapping: the
# reader remembered file states younger than their timestamps can tell
# apart, and answered v2 from that cache (buildid_reader.h).
# The judge: perf script on every segment, no sample of v2's process shown
# as v1's function.  v2 itself, written and run within one second, cannot
# be told from a file written over after its mapping in that second (the
# same ctime): its mapping is unknown, counted as "changed", and its
# samples shown as no function of v1's.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
command -v mkfs.ext4 >/dev/null 2>&1 || skip "mkfs.ext4 is not installed"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

build_versions
[ "$(stat -c %s "$T/v1")" = "$(stat -c %s "$T/v2")" ] ||
	fail "v1 and v2 differ in size: the state of the file would tell them apart"

truncate -s 32M "$T/img" && mkfs.ext4 -q -I 128 -F "$T/img" >/dev/null 2>&1 ||
	skip "cannot make an ext4 image with 128-byte inodes"
mkdir "$T/mnt"
mount -o loop "$T/img" "$T/mnt" 2>/dev/null || skip "cannot mount a loop device"
at_exit "umount -l '$T/mnt' 2>/dev/null"
touch "$T/mnt/probe"
[ "$(stat -c %y "$T/mnt/probe" | sed 's/.*\.\([0-9]*\).*/\1/')" = 000000000 ] ||
	fail "the image keeps sub-second timestamps: not the case under test"

start_daemon "[record]
frequency = 999
[segments]
rotate_age = 2s"

# v1 written at the start of a second, run (its build-id read), v2 over it
# in the same second, then run for 300 ms.  Again if the second ran out.
n=0; p2=
while [ $n -lt 5 ] && [ -z "$p2" ]; do
	n=$((n + 1))
	while [ "$(date +%N | sed 's/^0*//')" -gt 150000000 ] 2>/dev/null; do sleep 0.01; done
	P=$T/mnt/pm-$n
	cp "$T/v1" "$P"; s1=$(stat -c '%s %Y %Z %i' "$P")
	"$P" 0.1 & p1=$!; wait $p1
	cp "$T/v2" "$P"; s2=$(stat -c '%s %Y %Z %i' "$P")
	if [ "$s1" = "$s2" ]; then
		"$P" 0.3 & p2=$!; wait $p2
	else
		note "attempt $n: the second ran out ($s1 / $s2)"
	fi
done
[ -n "$p2" ] || fail "v2 never fell in the second v1 was written in (5 attempts)"
note "v1 pid $p1 and v2 pid $p2 at $P, state (size mtime ctime inode) $s1 for both"
sleep 2.5
ctl() { "$PERFMAPCTL" -s "$T/control.sock" "$@"; }
ctl --json status > "$T/st.json" || fail "status"
stop_daemon

: > "$T/script"
for seg in $(segments); do
	pid_symbols "$seg" "$T/script"
done
wrong=$(awk -v p="$p2" '$1 == p && $2 == "pm_capv1_hot"' "$T/script" | wc -l)
right=$(awk -v p="$p2" '$1 == p && $2 == "pm_capv2_hot"' "$T/script" | wc -l)
v1=$(awk -v p="$p1" '$1 == p && $2 == "pm_capv2_hot"' "$T/script" | wc -l)
note "v2's samples: $right as v2, $wrong as v1; v1's shown as v2: $v1"
note "unknown build-ids: $(jq -c '.counters.buildid_unknown' "$T/st.json")"
[ "$wrong" = 0 ] || fail "v2 (pid $p2) shown with v1's function in $wrong samples: v1's build-id given to v2"
[ "$v1" = 0 ] || fail "v1 (pid $p1) shown with v2's function in $v1 samples"
[ "$right" -gt 0 ] || grep -q "(pid $p2, .*unknown: changed" "$T/daemon.log" ||
	fail "v2 (pid $p2) ran 300 ms: none of its samples shows pm_capv2_hot, and its mapping was not said unknown (changed)"
echo "PASS: a rewrite within the second of a coarse file system is told apart ($right of v2's samples as v2, none as v1)"
