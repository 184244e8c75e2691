#!/bin/sh
# A stop while the capture worker is stuck in a file system (perfmapd(8),
# SIGNALS): root's own FUSE mount (which the worker does not guard
# against, as it does users' mounts) serves a program whose copy into the
# build-id cache never gets an answer past its first MiB.  The daemon must
# still stop within seconds, exit 0, leave its last segment closed and
# its index committed (a binary run just before the stop is in it).
# Before, the stop waited for the worker for ever, the index's last rows
# waiting behind it: systemd's SIGKILL after TimeoutStopSec lost them.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
# Past the first MiB: the server answers the build-id read, not the copy.
stallfs_setup
cc -O0 -g -Wl,--build-id -DVERSION=2 $(unique_buildid) -o "$T/plain" tests/progs/capver.c ||
	fail "cannot build capver"
PID_=$(readelf_buildid "$T/plain")
mkdir "$T/mnt"
"$T/stallfs" "$T/big" "$T/mnt" "$T/target.pid" late > "$T/fs.log" 2>&1 &
FS=$!
# before cleanup's wait for the background jobs, which the server is one of
trap 'TEST_RC=$?; fuse_abort "$T/mnt" "$FS"; cleanup' EXIT
for _ in $(seq 1 50); do [ -x "$T/mnt/prog" ] && break; sleep 0.1; done
[ -x "$T/mnt/prog" ] || { cat "$T/fs.log"; fail "the FUSE file system did not come up"; }

start_daemon "[record]
frequency = 499
drain_interval = 100ms
[index]
commit_interval = 1h"
echo "$DAEMON_PID" > "$T/target.pid"
"$T/mnt/prog" 0.3 || fail "the program on the FUSE mount failed"
# the worker's copy of it stalls; a plain binary after it: a row for the index
sleep 1
"$T/plain" 0.2 || fail "the plain program failed"
sleep 0.5

WAIT=200
sanitized && WAIT=600
kill -TERM "$DAEMON_PID"
daemon_gone $WAIT ||
	fail "the stop still waits $((WAIT / 10)) s later (a worker stuck in the file system)"
[ $DAEMON_RC -eq 0 ] || fail "the daemon exited with $DAEMON_RC"
grep -q "did not stop within" "$T/daemon.log" ||
	note "the worker was not stuck at the stop (the test's premise is weak)"
ls "$T/state/segments/" | grep -q '\.partial$' && fail "a segment was left partial"
"$PERFMAPCTL" --state-dir "$T/state" buildid "$PID_" > "$T/bid.out" 2>&1 ||
	fail "the plain binary's build-id is not in the index after the stop: $(cat "$T/bid.out")"
note "stopped with the worker stuck: exit 0, segments closed, the index's last rows in"
exit 0
