#!/bin/sh
# A process whose main thread exited before the daemon started (its leader
# a zombie, which /proc/PID/task still lists; /proc/PID/maps is empty): the
# start-up scan took the zombie leader for a live thread, so when the last
# other thread exited the model kept the process for good, in every
# segment's start state, and its binaries "mapped now" (found by a review).
# Here: leaderexit, then the daemon (1 s segments), then the process ends;
# the segments begun after its end must not hold it, the first must.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
build_prog leaderexit -pthread
"$T/leaderexit" > "$T/le.out" 2>&1 &
LE=$!
BG_PIDS="${BG_PIDS:-} $LE"
for _ in $(seq 1 50); do grep -q ready "$T/le.out" && break; sleep 0.1; done
sleep 0.2
state=$(sed 's/.*) //' "/proc/$LE/task/$LE/stat" 2>/dev/null | cut -c1)
[ "$state" = Z ] || fail "leaderexit's main thread is not a zombie (state ${state:-unknown})"
start_daemon "[record]
frequency = 99
[segments]
rotate_age = 1s"
sleep 0.5
kill -USR1 $LE
wait $LE
BG_PIDS=""
sleep 2.5
stop_daemon
first=$(segments | head -n 1)
last=$(segments | tail -n 1)
[ "$first" != "$last" ] || fail "one segment only"
perf report -D -i "$first" 2>/dev/null | grep -q "PERF_RECORD_COMM: leaderexit:$LE/" ||
	fail "the first segment's start state has no leaderexit: the test proves nothing"
if perf report -D -i "$last" 2>/dev/null | grep "PERF_RECORD_COMM: leaderexit:$LE/"; then
	fail "$(basename "$last"), begun after leaderexit ended, holds it in its start state"
fi
n=$(for s in $(segments); do perf report -D -i "$s" 2>/dev/null | grep -c "PERF_RECORD_COMM: leaderexit:$LE/"; done | awk '$1 > 0' | wc -l)
note "$n of $(segments | wc -l) segments hold leaderexit"
echo "PASS: a process whose leader was a zombie at start leaves the model with its last thread"
