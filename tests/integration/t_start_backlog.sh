#!/bin/sh
# Nothing is lost at start on a big host: while the start-up /proc scan
# keeps the loop from reading the rings (seconds on a host with millions
# of maps), what the kernel writes into them is taken into memory
# (events_spill) and read after the scan.  Here: 500 processes x 200
# executable file maps (the scan takes a second or more), small rings
# (ring_size 128K: 64K side-band rings, which an exec storm fills in a
# fraction of that), and a storm of short processes from the daemon's
# launch to the end of its start.  Judged: no record lost (the stop's
# count and no PERF_RECORD_LOST in the segments), and the storm's
# processes of the scan's time are in the first segment.
. tests/lib.sh
need_events
need_perf
start_manymaps 500 200

# the storm: a few hundred processes a second, each with a name of its own
cat > "$T/storm.sh" <<'EOS'
n=0
while [ ! -e "$1" ]; do
	/bin/true; /bin/true; /bin/true
	n=$((n + 3))
	sleep 0.01
done
echo "$n" > "$2"
EOS
sh "$T/storm.sh" "$T/storm.stop" "$T/storm.n" &
ST=$!
BG_PIDS="$MM $ST"
t0=$(date +%s%N)
start_daemon "[record]
frequency = 99
ring_size = 128K
[segments]
rotate_age = 10m"
t1=$(date +%s%N)
touch "$T/storm.stop"
wait $ST
BG_PIDS=$MM
sleep 1
stop_daemon
kill $MM; wait $MM
BG_PIDS=""
note "start took $(( (t1 - t0) / 1000000 )) ms; the storm ran $(cat "$T/storm.n") processes"
grep 'executable maps at start\|held in memory\|stopped' "$T/daemon.log" | sed 's/^/  /'
lost=$(sed -n 's/.*stopped:.* lost=\([0-9]*\).*/\1/p' "$T/daemon.log")
[ "$lost" = 0 ] || fail "$lost records lost (the kernel's rings overflowed during the start)"
spilled=$(sed -n 's/.*start: \([0-9]*\) bytes of records held in memory.*/\1/p' "$T/daemon.log")
[ -n "$spilled" ] || fail "nothing was held in memory during the scan (was it too short?)"
# the test proves something only if the scan outlasted what the side-band ring holds
[ "$spilled" -gt 65536 ] || fail "only $spilled bytes came during the scan: more than a ring's 64K are needed"
grep -q 'a ring.s share full' "$T/daemon.log" && fail "a ring's share of the backlog was full"
seg=$(segments | head -n 1)
[ -n "$seg" ] || fail "no segment"
perf report -D -i "$seg" 2>/dev/null > "$T/dump"
grep -q 'PERF_RECORD_LOST' "$T/dump" && fail "$(basename "$seg") has PERF_RECORD_LOST records"
# the storm's processes of the scan's time: their exec COMMs (after the start state)
execs=$(grep -c 'PERF_RECORD_COMM exec: true:' "$T/dump")
note "$execs exec COMM records of true in $(basename "$seg")"
[ "$execs" -ge 100 ] || fail "only $execs of the storm's processes are in the first segment"
echo "PASS: nothing lost at start (the scan's $spilled bytes of records held in memory)"
