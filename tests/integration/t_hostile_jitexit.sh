#!/bin/sh
# Adversarial: the worker's queue of JIT jobs.  When a JIT process exits,
# its /tmp/perf-PID.map is kept by a job of the capture worker, queued by
# the loop; the queue is bounded ([cache] queue).  A user's processes with
# JIT code that all exit at once (kill -9 -1) each queue such a job: before,
# they filled the queue and root's JIT process exiting just after lost its
# map (the job refused, and a close keeps only the maps of processes that
# still live).  Users' JIT jobs now take at most three quarters of the queue
# (daemon/capture/capture.c), the rest is root's.
# The daemon is held (SIGSTOP) while root starts a new binary of 48 MiB and
# the processes exit: it then meets them in one pass, as a loop busy with a
# burst does, and its worker is busy copying the binary while the pass
# queues the exits' jobs: the user's forty, then root's.
# test-lane: beside (tests/run-tests.sh: light; root's ping within 100 ms, at most 10 ms seen beside others)
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
[ "$(uname -m)" = x86_64 ] || skip "the JIT test program is x86-64 code"
build_prog jit
build_prog jitidle
chmod 0755 "$T/jit" "$T/jitidle"
printf '#include <unistd.h>\nint main(void) { sleep(4); return 0; }\n' > "$T/big.c"
cc -O1 -o "$T/big" "$T/big.c" $(unique_buildid) && head -c 48M /dev/urandom >> "$T/big" ||
	fail "cannot build a big binary"

start_daemon "[record]
frequency = 99
drain_interval = 50ms
[cache]
queue = 16"
S=$T/control.sock
at_exit "kill -CONT $DAEMON_PID 2>/dev/null; pkill -9 -u $A jitidle 2>/dev/null"
unwatched() { "$PERFMAPCTL" -s "$S" --json status | jq -r '.cache.jit_unwatched'; }

# The user's forty JIT processes, ten at a time: each is watched (a job
# each; the queue holds 16).
for i in 1 2 3 4; do
	as_user "$A" sh -c "cd '$H' && exec ../jitidle 10 ready.$i" 2> "$T/idle.$i.err" &
	for _ in $(seq 1 100); do [ -e "$H/ready.$i" ] && break; sleep 0.1; done
	[ -e "$H/ready.$i" ] || fail "the user's JIT processes $i did not start: $(cat "$T/idle.$i.err")"
	sleep 0.3
done
note "JIT processes not watched before the exits: $(unwatched)"

# Root's JIT process: its map written, its watch taken, it runs 2 s.
( cd "$T" && exec ./jit 2 ) &
RJ=$!
for _ in $(seq 1 50); do [ -s "/tmp/perf-$RJ.map" ] && break; sleep 0.1; done
[ -s "/tmp/perf-$RJ.map" ] || fail "root's JIT process wrote no map"
sleep 0.5

# The loop held; the user's forty exit, then root's.
kill -STOP "$DAEMON_PID"
"$T/big" &
BIG=$!
sleep 0.2
pkill -9 -u "$A" jitidle
for _ in $(seq 1 50); do
	pgrep -u "$A" jitidle > /dev/null || break
	sleep 0.1
done
wait $RJ || fail "root's JIT process failed"
kill -CONT "$DAEMON_PID"
wait $BIG

kept_map "$RJ" > /dev/null ||
	fail "root's JIT map of pid $RJ was not kept after a user's forty JIT processes exited just before it"
unkept=$("$PERFMAPCTL" -s "$S" --json status | jq -r '.cache.jit_unkept')
note "exits whose keep found no room: $unkept"
# the premise: the user's exits filled their share of the queue
[ "$unkept" -ge 1 ] 2>/dev/null ||
	fail "no exit's keep was refused ($unkept): the worker kept up, nothing was tested"
# the daemon still records and answers
"$PERFMAPCTL" -s "$S" ping > /dev/null || fail "the daemon does not answer after the exits"
no_loss
stop_daemon
echo "PASS: root's JIT map kept after a user's forty JIT processes exited at once before it"
