#!/bin/sh
# A hostile file system must not stall recording (buildid_mode = userspace):
# a program runs from a FUSE mount (tests/progs/stallfs.c) that never
# answers the daemon under test when it stats, opens or reads the file,
# while another program runs from a plain directory.  The build-id read of
# the first is given up after its bound: the mapping is "unknown", cause
# "timeout", and perf never shows it with another binary's symbols; the
# second is resolved all the same (a spare reader thread); the daemon
# answers ping throughout and loses nothing.  (A thread in a FUSE request
# that was sent cannot be killed: the daemon exits once the file system
# answers or is aborted, as here, like any process that touched it.)
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
command -v fusermount3 >/dev/null 2>&1 || skip "fusermount3 is not installed (fuse3)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
pkg-config --exists fuse3 || skip "libfuse3-dev is not installed"

build_versions
cc -O2 -o "$T/stallfs" tests/progs/stallfs.c $(pkg-config --cflags --libs fuse3) ||
	fail "cannot build tests/progs/stallfs.c"
mkdir "$T/mnt"
"$T/stallfs" "$T/v1" "$T/mnt" "$T/target.pid" > "$T/fs.log" 2>&1 &
FS=$!
fs_abort() { fuse_abort "$T/mnt" "$FS"; }
trap 'TEST_RC=$?; fs_abort; cleanup' EXIT
for _ in $(seq 1 50); do [ -x "$T/mnt/prog" ] && break; sleep 0.1; done
[ -x "$T/mnt/prog" ] || { cat "$T/fs.log"; fail "the FUSE file system did not come up"; }

start_daemon "[record]
buildid_mode = userspace
frequency = 999"
echo "$DAEMON_PID" > "$T/target.pid"
S=$T/control.sock

"$T/mnt/prog" 1.5 & p1=$!
sleep 0.2
cp "$T/v2" "$T/ok"
"$T/ok" 1.0 & p2=$!
# The loop answers while a reader thread hangs in the file system.
worst=0
for _ in $(seq 1 10); do
	t0=$(date +%s%N)
	timeout 5 "$PERFMAPCTL" -s "$S" ping > /dev/null || fail "ping failed while a read hangs"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$ms" -gt "$worst" ] && worst=$ms
	sleep 0.1
done
wait $p1 $p2
"$T/mnt/prog" 0.3 || fail "the program on the FUSE mount failed"	# its device is slow now
sleep 0.5
timeout 5 "$PERFMAPCTL" -s "$S" --json status > "$T/st.json" || fail "status"
fs_abort
t0=$(date +%s)
stop_daemon
stopped=$(( $(date +%s) - t0 ))
note "ping: worst ${worst} ms; stop took ${stopped} s (after the file system was aborted)"
note "build-id reads: $(jq -c .buildid_reads "$T/st.json"); unknown: $(jq -c .counters.buildid_unknown "$T/st.json")"
# A loop held by the hung read would never answer (the ping's 5 s timeout);
# a slow one answers late.  Under the sanitizers, beside the other lane's
# tests, perfmapctl's own start and the CPUs' queue took 1,067 ms once.
bound=1000
sanitized && bound=3000
[ "$worst" -lt "$bound" ] || fail "ping took ${worst} ms while a read hung"
[ "$stopped" -le 5 ] || fail "stop took ${stopped} s"
[ "$(jq '.counters.buildid_unknown.timeout' "$T/st.json")" -ge 1 ] || fail "no mapping counted as timeout"
[ "$(jq '.buildid_reads.threads' "$T/st.json")" -ge 2 ] || fail "no spare reader thread was started"
[ "$(jq '.counters.lost' "$T/st.json")" = 0 ] || fail "records lost"
grep -q "did not answer within" "$T/daemon.log" || fail "the log does not say which device hung"

: > "$T/script"
for seg in $(segments); do
	perf --buildid-dir "$T/state/debug" script -i "$seg" -F pid,ip,sym --max-stack=1 2>/dev/null |
		awk '/^ *[0-9]+ *$/ { pid = $1; next } pid != "" && NF >= 2 { print pid, $2; pid = "" }' \
		>> "$T/script"
done
n1=$(awk -v p="$p1" '$1 == p' "$T/script" | wc -l)
w1=$(awk -v p="$p1" '$1 == p && $2 ~ /pm_capv/' "$T/script" | wc -l)
r2=$(awk -v p="$p2" '$1 == p && $2 == "pm_capv2_hot"' "$T/script" | wc -l)
note "FUSE program: $n1 samples, $w1 with a pm_capv symbol; the other: $r2 as pm_capv2_hot"
[ "$n1" -gt 0 ] || fail "no samples of the FUSE program"
[ "$w1" = 0 ] || fail "the FUSE program's samples have symbols: its build-id was not left unknown"
[ "$r2" -gt 0 ] || fail "the plain program was not resolved while a reader hung"
echo "PASS: a hung file system costs its own mappings a timeout, nothing else"
