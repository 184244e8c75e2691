#!/bin/sh
# Decoding by our own attributes (issue #17): perfmapd records in
# buildid_mode = userspace (its side-band event has no attr.build_id) when
# `perf record --buildid-mmap -a` starts beside it.  On a kernel without the
# fix of kernel-patch/0001 (stock 6.1.y; mainline up to at least 6.18) the
# build-id event makes the kernel leave PERF_RECORD_MISC_MMAP_BUILD_ID on
# the records of perfmapd's event, over a maj/min/ino body.  perfmapd must
# decode them by its attr (the plain form), drop none, resolve the program
# run meanwhile with its real build-id, and write records perf reads.
# (On main before the side-band work: thousands of bad records dropped,
# the program unresolved.)
# test-lane: alone (tests/run-tests.sh: perf record --buildid-mmap, whose build-id event reaches every perf user)
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

cc -O0 -g -fno-omit-frame-pointer $(unique_buildid) -DVERSION=1 -o "$T/pm-leak" \
	tests/progs/capver.c || fail "cannot build capver"
ID=$(readelf_buildid "$T/pm-leak")

start_daemon "[record]
buildid_mode = userspace
frequency = 499"
S=$T/control.sock
# After the daemon: the newer build-id event is iterated first, and leaks.
perf record -q --buildid-mmap -a -o "$T/perf.data" -- sleep 4 > "$T/perf.log" 2>&1 &
PR=$!
BG_PIDS=$PR
sleep 1
"$T/pm-leak" 0.8 & p=$!
wait $p
wait $PR || { cat "$T/perf.log"; fail "perf record --buildid-mmap failed"; }
BG_PIDS=""
"$PERFMAPCTL" -s "$S" --json status > "$T/st.json" || fail "status"
stop_daemon

bad=$(jq .counters.bad_records "$T/st.json")
note "bad records: $bad; build-ids: $(jq -c '[.counters.mmaps_kernel_buildid, .counters.mmaps_user_buildid, .counters.mmaps_no_buildid]' "$T/st.json")"
[ "$bad" = 0 ] || fail "$bad records refused as malformed (a leaked flag believed?)"
found=0 hot=0
for seg in $(segments); do
	perf report -D -i "$seg" 2>/dev/null | grep "PERF_RECORD_MMAP2 $p/$p:" | grep -F "$T/pm-leak" \
		> "$T/mmap" || true
	if [ -s "$T/mmap" ]; then
		grep -q "<$ID>" "$T/mmap" || { cat "$T/mmap"; fail "$seg: pm-leak mapped without its build-id $ID"; }
		found=1
	fi
	perf script -i "$seg" -F pid,ip,sym --max-stack=1 > "$T/script" 2> "$T/script.err" ||
		{ cat "$T/script.err"; fail "perf script failed on $seg"; }
	grep -q 'assertion failed' "$T/script.err" && fail "perf script asserted on $seg"
	n=$(awk -v p="$p" '/^ *[0-9]+ *$/ { pid = $1; next } pid == p && $2 == "pm_capv1_hot" { n++ } { pid = "" } END { print n + 0 }' "$T/script")
	hot=$((hot + n))
done
[ "$found" = 1 ] || fail "no MMAP2 record of pm-leak in the segments"
[ "$hot" -gt 0 ] || fail "perf script does not show pm-leak's samples as pm_capv1_hot"
echo "PASS: beside perf record --buildid-mmap: no bad record, pm-leak resolved ($hot samples)"
