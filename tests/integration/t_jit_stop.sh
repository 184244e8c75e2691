#!/bin/sh
# The daemon stops while processes with JIT code run (perfmapd(8), FILES,
# SEGMENT.jit/): the last segment closes at the stop with them alive, and
# their /tmp/perf-PID.map files are kept with it, as at any other close,
# so a profile of that segment names their JIT frames.  Before, the stop
# dropped the capture worker's queue, the keeps that close had just put in
# it among them: the last segment of every run had no JIT maps.
# Part 2: binaries first seen just before the stop, their copies queued
# behind a long job of the worker, are in the cache after the stop (before:
# dropped with the queue; a short-lived one was then lost for good).
# Part 3: a JIT process that is pid 1 of its pid namespace exits, and the
# next one (a container restarted over the same /tmp) writes its own
# /tmp/perf-1.map before the keep of the first runs: the first's segment
# must not keep the second's map as the first's (before: it did).
# Part 0: JIT processes that run before the daemon starts are watched at
# the first close, and their maps kept with that segment, every one of
# them (the close's keeps come after all of their watches).
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
[ "$(uname -m)" = x86_64 ] || skip "the JIT test program is x86-64 code"

build_prog jit

# --- 0. JIT processes older than the daemon ----------------------------------
OLD=""
for _ in 1 2 3; do "$T/jit" 30 & OLD="$OLD $!"; done
BG_PIDS=$OLD
at_exit "for p in $OLD; do rm -f /tmp/perf-\$p.map; done"
for _ in $(seq 1 50); do
	n=0
	for p in $OLD; do [ -s /tmp/perf-$p.map ] && n=$((n + 1)); done
	[ $n -eq 3 ] && break
	sleep 0.1
done
[ $n -eq 3 ] || fail "only $n of 3 JIT processes wrote their maps"
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
# (the worker keeps them after the first copies of the host's binaries: 30 s in all)
kept=0
for _ in $(seq 1 300); do
	kept=0
	for p in $OLD; do [ -s "$seg.jit/perf-$p.map" ] && kept=$((kept + 1)); done
	[ $kept -eq 3 ] && break
	sleep 0.1
done
kill $OLD 2>/dev/null
wait $OLD 2>/dev/null
BG_PIDS=""
[ $kept -eq 3 ] || fail "the first segment kept $kept of the maps of 3 JIT processes older than the daemon"
note "JIT processes older than the daemon: 3 of 3 maps kept with the first segment"
stop_daemon

start_daemon "[record]
frequency = 499
drain_interval = 50ms"
N=4
PIDS=""
for _ in $(seq 1 $N); do
	"$T/jit" 60 & PIDS="$PIDS $!"
done
BG_PIDS=$PIDS
at_exit "for p in $PIDS; do rm -f /tmp/perf-\$p.map; done"
# their maps written (the daemon's watch of each comes with its JIT mapping,
# or with the close at the stop)
for _ in $(seq 1 100); do
	n=0
	for p in $PIDS; do [ -s /tmp/perf-$p.map ] && n=$((n + 1)); done
	[ $n -eq $N ] && break
	sleep 0.1
done
[ $n -eq $N ] || fail "only $n of $N JIT processes wrote their maps"
# Big maps (a runtime with many functions, ~14 MB each): keeping one takes
# long enough that the stop comes while the first is copied.
awk 'BEGIN { for (i = 0; i < 600000; i++) printf "%x 10 pad_%d\n", 140000000000 + i * 16, i }' \
	> "$T/pad"
for p in $PIDS; do cat "$T/pad" >> /tmp/perf-$p.map; done
sleep 1
stop_daemon
seg=$(segments | tail -1)
[ -n "$seg" ] || fail "no closed segment"
kept=0
size=$(stat -c %s /tmp/perf-$(echo $PIDS | cut -d' ' -f1).map)
for p in $PIDS; do
	[ "$(stat -c %s "$seg.jit/perf-$p.map" 2>/dev/null)" = "$(stat -c %s /tmp/perf-$p.map)" ] &&
		kept=$((kept + 1))
done
kill $PIDS 2>/dev/null
wait $PIDS 2>/dev/null
BG_PIDS=""
[ $kept -eq $N ] || fail "the segment closed at the stop kept $kept of $N JIT maps"
note "the last segment, closed at the stop, kept all $N JIT maps ($size bytes each)"

# --- 2. the copies of binaries queued at the stop -----------------------------
K=4
for i in $(seq 1 $K); do
	cc -O0 -o "$T/late$i" tests/progs/spin.c $(unique_buildid) || fail "cannot build late$i"
done
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
S=$T/control.sock
seg=$("$PERFMAPCTL" -s "$S" snapshot) || fail "snapshot"
# the worker's long job: every binary of the host the segment names, packed
"$PERFMAPCTL" -s "$S" export "$seg" --all-binaries -o "$T/busy.tar" > "$T/busy.out" 2>&1 &
EXPORT=$!
sleep 0.3
for i in $(seq 1 $K); do "$T/late$i" 0.05; done	# short-lived: gone before the stop
sleep 0.5	# seen by the loop, their copies queued behind the export
kill -0 $EXPORT 2>/dev/null || fail "the export ended before the stop: the copies were not queued behind it"
stop_daemon
wait $EXPORT 2>/dev/null
missing=""
for i in $(seq 1 $K); do
	id=$(readelf_buildid "$T/late$i")
	f=$T/state/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)/elf
	cmp -s "$f" "$T/late$i" || missing="$missing late$i"
done
[ -z "$missing" ] || { grep -a 'capture' "$T/daemon.log" | tail -5; fail "binaries queued at the stop not copied:$missing"; }
grep -q 'binary copies not made' "$T/daemon.log" && fail "the stop logged copies not made"
note "the $K binaries first seen just before the stop, queued behind an export, were copied"

# --- 3. a map written after its process exited --------------------------------
command -v unshare > /dev/null || skip "unshare is not installed (util-linux)"
unshare -fp true 2>/dev/null || skip "cannot unshare a pid namespace"
at_exit "rm -f /tmp/perf-1.map"
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
seg=$("$PERFMAPCTL" -s "$S" snapshot) || fail "snapshot"
unshare -fp "$T/jit" 1.5 & U=$!
sleep 0.5
A=$(pgrep -P $U)
[ -n "$A" ] || fail "no JIT process in the pid namespace"
grep -q pm_jit_spin /tmp/perf-1.map || fail "the first JIT process wrote no /tmp/perf-1.map"
echo "ffff0000 10 first_process_fn" >> /tmp/perf-1.map
sleep 0.3	# watched while it runs; now the worker's long job, its keep queued behind it
"$PERFMAPCTL" -s "$S" export "$seg" --all-binaries -o "$T/busy3.tar" > /dev/null 2>&1 &
EXPORT=$!
wait $U
"$T/jit" 0.2 & C=$!	# an ordinary JIT process: its keep, queued behind too, is made
unshare -fp "$T/jit" 0.3	# the next pid 1: its map over the first's
echo "ffff0000 10 second_process_fn" >> /tmp/perf-1.map
wait $C
at_exit "rm -f /tmp/perf-$C.map"
kill -0 $EXPORT 2>/dev/null || fail "the export ended before the keep: it did not wait behind it"
stop_daemon
wait $EXPORT 2>/dev/null
kept=$(ls "$T/state/segments/"*.jit/perf-$A.map 2>/dev/null)
for f in $kept; do
	grep -q second_process_fn "$f" && fail "the exited process $A kept the next process's map ($f)"
done
ls "$T/state/segments/"*.jit/perf-$C.map > /dev/null 2>&1 ||
	fail "the ordinary JIT process $C, gone before the stop, had its map not kept"
note "the map of pid $A, rewritten by the next pid 1 before its keep: ${kept:-not kept}"
exit 0
