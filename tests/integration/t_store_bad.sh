#!/bin/sh
# Bad input to capture and store, each ending as a FAIL line with its
# reason while recording goes on:
# - a binary whose file was replaced by another build (build-id mismatch),
#   truncated, or replaced by a text file, after its short-lived process
#   exited: /proc/PID/map_files is gone (reason given), the path is wrong;
# - a cache directory on a full filesystem (a 1 MiB tmpfs): No space left;
# - segment arguments outside STATE/segments: "..", a symlink out, a file
#   that is not a segment, a missing one: NoSuchSegment, no work done.
# The daemon must not crash, must keep recording, and lose nothing.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

B=$T/bad
mkdir -p "$B" "$T/small"
mount -t tmpfs -o size=1m,mode=0750 perfmapd-test "$T/small" 2>/dev/null || skip "cannot mount a tmpfs"
cleanup_mount() {
	# the daemon holds the cache directory open: stop it before umount
	[ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=""
	umount "$T/small" 2>/dev/null
	cleanup
}
trap 'TEST_RC=$?; cleanup_mount' EXIT

for k in 11 12 13 14; do
	cc -O0 -Wl,--build-id -DKONST=$k -o "$T/k$k" tests/progs/capver.c || fail "build"
done
start_daemon "[cache]
dir = $T/small"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }

# Run, and replace the file the moment the process is gone.  (100 ms: long
# enough for the side-band read to prove the build-id from the mapped file;
# a 1 ms process may be gone first, and its mapping is then "unknown" and
# not in the segment: t_provenance covers that.)
cp "$T/k11" "$B/pm-mismatch"; "$B/pm-mismatch" -s 100; cp "$T/k12" "$B/x"; mv "$B/x" "$B/pm-mismatch"
cp "$T/k13" "$B/pm-trunc"; "$B/pm-trunc" -s 100; head -c 3000 "$T/k13" > "$B/x"; mv "$B/x" "$B/pm-trunc"
cp "$T/k14" "$B/pm-text"; "$B/pm-text" -s 100; echo "not a program" > "$B/x"; mv "$B/x" "$B/pm-text"
sleep 1.5
before=$(ctl --json status | jq .counters.samples)
seg=$(ctl snapshot) || fail "snapshot"
ctl store "$seg" > "$T/store.out"; rc=$?
[ "$rc" = 1 ] || { cat "$T/store.out"; fail "store with failures exited $rc, not 1"; }
show() { grep " $B/$1\$\| $B/$1:" "$T/store.out"; }
line=$(show pm-mismatch)
echo "$line" | grep -q "^FAIL $(readelf_buildid "$T/k11") .*build-id mismatch (the file has $(readelf_buildid "$T/k12"))" ||
	{ cat "$T/store.out"; fail "mismatch: $line"; }
# why the copy at first sight failed too (the full cache, or map_files gone)
echo "$line" | grep -q 'at first sight: /proc/[0-9]*/map_files/[0-9a-f]*-[0-9a-f]*: .*\(No space left on device\|No such file or directory\)' ||
	fail "mismatch: the first sight's failure is not given as a reason: $line"
echo "$line"
line=$(show pm-trunc)
echo "$line" | grep -q "^FAIL .*not an ELF file, or a truncated one" || fail "truncated: $line"
line=$(show pm-text)
echo "$line" | grep -q "^FAIL .*not an ELF file, or a truncated one" || fail "text file: $line"
grep -q '^FAIL .*No space left on device' "$T/store.out" ||
	{ tail "$T/store.out"; fail "no FAIL line says the cache is full"; }
note "$(grep -c '^FAIL' "$T/store.out") FAIL lines, $(grep -c '^OK' "$T/store.out") OK; $(tail -1 "$T/store.out")"
grep -m1 'No space left' "$T/store.out"

# Segment arguments outside the segments directory.
echo junk > "$T/state/segments/notes.txt"
ln -s /etc/passwd "$T/state/segments/perf-999999-x.data"
cp "$seg" "$T/outside.data"
for a in ../index.db "$T/state/segments/../lock" "$T/outside.data" \
    "$T/state/segments/perf-999999-x.data" notes.txt perf-000999-none.data /etc/passwd; do
	ctl store "$a" > "$T/o" 2> "$T/e" && fail "store $a was accepted"
	grep -q 'NoSuchSegment\|InvalidParameter\|No such file' "$T/e" || { cat "$T/e"; fail "store $a: $(cat "$T/e")"; }
done
ctl --json store "$T/state/segments/../index.db" 2>/dev/null | grep -q 'NoSuchSegment' ||
	fail "--json: no NoSuchSegment error"
ctl store 2>/dev/null && fail "store without arguments was accepted"
ctl store --since yesterday-ish 2>/dev/null && fail "a bad --since was accepted"
ctl store --since -1h > "$T/since.out" || true
grep -q 'build-ids in [1-9][0-9]* segments' "$T/since.out" || { cat "$T/since.out"; fail "--since -1h found no segment"; }
ctl store --since 2000-01-01 --all 2>/dev/null && fail "--since with --all was accepted"

# Still recording, nothing lost, clean exit.
sleep 1.2
after=$(ctl --json status | jq .counters.samples)
[ "$after" -gt "$before" ] || fail "recording stopped ($before -> $after samples)"
seg2=$(ctl snapshot) || fail "snapshot after the failures"
[ "$(seg_samples "$seg2")" -gt 0 ] || fail "the next segment has no samples"
lost=$(ctl --json status | jq .counters.lost)
[ "$lost" = 0 ] || fail "$lost records lost"
stop_daemon
echo "PASS: every bad input ended as a FAIL line with its reason; recording went on"
